/** The server-side `removeOAuthClient(clientId)`. */
import type { Api } from '../../../api/context.js'
import { recordsOf } from '../config.js'
import { AuthorizationServerError } from '../errors.js'
import { assertAuthorizationServer } from './context.js'

/**
 * Removes a client stored by `registerOAuthClient()`: it can no longer start an authorization or use
 * its refresh tokens; its access tokens expire within `accessTokenTtl`. A client declared in the
 * config is removed from the config.
 *
 * @throws AuthorizationServerError `not_found`; UnknownActionError
 * @example
 * ```ts
 * await removeOAuthClient('partner-reports')
 * ```
 */
export type RemoveOAuthClientFunction = (clientId: string) => Promise<void>

export function createRemoveOAuthClient(api: Api): RemoveOAuthClientFunction {
  return async (clientId) => {
    assertAuthorizationServer(api.config, 'removeOAuthClient()')
    if (typeof clientId !== 'string' || clientId.length === 0) throw new TypeError('removeOAuthClient(clientId): clientId must be a non-empty string.')
    const records = recordsOf(api.config)
    if (!(await records.findOAuthRecord('Client', clientId))) throw new AuthorizationServerError('not_found', `removeOAuthClient(): no stored client "${clientId}" (a client declared in the config is removed from the config).`)
    await records.deleteOAuthRecord('Client', clientId)
  }
}
