/** A SCIM request's JSON body (`application/scim+json`, or `application/json`), read by the core's parser. */
import { InvalidRequestError } from '../../../errors.js'
import { readBody } from '../../../http/body.js'
import type { NodeRequest } from '../../../http/request.js'
import { ScimError } from './errors.js'

/** The body, an object. @throws ScimError 400 `invalidSyntax`, 413, 415 */
export async function scimBody(req: NodeRequest): Promise<Record<string, unknown>> {
  try {
    return await readBody(req)
  } catch (error) {
    if (!(error instanceof InvalidRequestError)) throw error
    throw new ScimError(error.status, error.status === 400 ? 'The body is not a JSON object.' : error.message, error.status === 400 ? 'invalidSyntax' : undefined)
  }
}
