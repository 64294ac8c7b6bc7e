/**
 * The SCIM 2.0 endpoints (RFC 7644) under `<basePath>/scim/v2` (`Feature.mount`), loaded on the
 * first request: each request authenticated by a connection's bearer token only (call.ts), answered
 * in `application/scim+json`, its failures in the SCIM error schema (§3.12). No cookie is read or
 * set, so no CSRF rule applies: a browser cannot send the bearer header across sites.
 */
import type { ServerResponse } from 'node:http'
import type { MountHandler } from '../../../composition/index.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { describeError } from '../../../events.js'
import { requestOrigin, type NodeRequest } from '../../../http/request.js'
import { logValue } from '../../../logger.js'
import type { ScimAnswer } from './answer.js'
import { scimBody } from './body.js'
import { authenticate, type ScimCall } from './call.js'
import { discoveryList, serviceProviderConfig } from './discovery.js'
import { ScimError } from './errors.js'
import { createGroup, deleteGroup, patchGroup } from './group-change.js'
import { getGroup, listGroups } from './groups.js'
import { createUser } from './user-create.js'
import { deleteUser } from './user-delete.js'
import { patchUser, replaceUser } from './user-update.js'
import { getUser, listUsers } from './users-read.js'

type Handler = (call: ScimCall, id: string | undefined, req: NodeRequest) => Promise<ScimAnswer> | ScimAnswer

const body = (req: NodeRequest) => scimBody(req)
// `METHOD Resource` or `METHOD Resource/:id`; resource names in any case.
const HANDLERS: Record<string, Handler> = {
  'GET serviceproviderconfig': (call) => serviceProviderConfig(call),
  'GET resourcetypes': (call) => discoveryList(call, 'ResourceTypes', undefined),
  'GET resourcetypes/:id': (call, id) => discoveryList(call, 'ResourceTypes', id),
  'GET schemas': (call) => discoveryList(call, 'Schemas', undefined),
  'GET schemas/:id': (call, id) => discoveryList(call, 'Schemas', id),
  'GET users': (call) => listUsers(call),
  'GET users/:id': (call, id) => getUser(call, id!),
  'POST users': async (call, _id, req) => createUser(call, await body(req)),
  'PUT users/:id': async (call, id, req) => replaceUser(call, id!, await body(req)),
  'PATCH users/:id': async (call, id, req) => patchUser(call, id!, await body(req)),
  'DELETE users/:id': (call, id) => deleteUser(call, id!),
  'GET groups': (call) => listGroups(call),
  'GET groups/:id': (call, id) => getGroup(call, id!),
  'POST groups': async (call, _id, req) => createGroup(call, await body(req)),
  'PATCH groups/:id': async (call, id, req) => patchGroup(call, id!, await body(req)),
  'DELETE groups/:id': (call, id) => deleteGroup(call, id!),
}

export const scimMount: MountHandler = async (req, res, { config, url, mountPath }) => {
  try {
    send(res, await answer(req, config, url, mountPath))
  } catch (error) {
    if (error instanceof ScimError) return send(res, { status: error.status, body: error.body }, error.status === 401)
    // A SCIM client reads only SCIM errors: the failure goes to the log, the client learns nothing of it.
    config.logger.error('ScimRequestFailed', `SCIM ${logValue(req.method)} failed: ${describeError(error)}`)
    send(res, { status: 500, body: new ScimError(500, 'The request could not be processed.').body })
  }
}

async function answer(req: NodeRequest, config: ResolvedConfig, url: string, mountPath: string): Promise<ScimAnswer> {
  const parsed = new URL(url, 'http://scim.invalid')
  const { sso, connection, adapter } = await authenticate(req, config, parsed.searchParams)
  const segments = parsed.pathname.split('/').filter((segment) => segment !== '')
  const [resource = '', id, extra] = segments
  const handler = extra === undefined ? HANDLERS[`${req.method} ${resource.toLowerCase()}${id === undefined ? '' : '/:id'}`] : undefined
  if (!handler) throw new ScimError(HANDLERS[`GET ${resource.toLowerCase()}`] ? 405 : 404, `No ${req.method} ${parsed.pathname} endpoint here.`)
  const call: ScimCall = { config, sso, connection, adapter, req, baseUrl: `${requestOrigin(req, config)}${mountPath}`, query: parsed.searchParams }
  return handler(call, id === undefined ? undefined : decodedId(id), req)
}

function decodedId(id: string): string {
  try {
    return decodeURIComponent(id)
  } catch {
    throw new ScimError(404, 'No resource of this id.')
  }
}

function send(res: ServerResponse, { status, body, location }: ScimAnswer, challenge = false): void {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' }
  if (location) headers.Location = location
  if (challenge) headers['WWW-Authenticate'] = 'Bearer realm="SCIM"'
  if (body === undefined) return void res.writeHead(status, headers).end()
  res.writeHead(status, { ...headers, 'Content-Type': 'application/scim+json; charset=utf-8' }).end(JSON.stringify(body))
}
