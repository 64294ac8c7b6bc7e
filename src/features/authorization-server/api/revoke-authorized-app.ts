/** The server-side `revokeAuthorizedApp(req, clientId)`. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { AuthorizationServerError } from '../errors.js'
import { signedInCall, type AuthorizationServerCallContext } from './context.js'

/**
 * Removes a client's access to the signed-in user's account: its grants end, with every access and
 * refresh token issued under them (refused at once in this process, within 5 s in others).
 * CSRF-checked.
 *
 * @throws AuthorizationServerError `not_signed_in`, `not_found`; MissingCSRFError; UnknownActionError
 * @example
 * ```ts
 * app.post('/account/apps/:id/remove', async (req, res) => {
 *   await revokeAuthorizedApp(req, req.params.id)
 *   res.redirect('/account/apps')
 * })
 * ```
 */
export type RevokeAuthorizedAppFunction = (req: AuthorizationServerCallContext, clientId: string, options?: CsrfOptions) => Promise<void>

export function createRevokeAuthorizedApp(api: Api): RevokeAuthorizedAppFunction {
  return async (given, clientId, options = {}) => {
    if (typeof clientId !== 'string' || clientId.length === 0) throw new TypeError('revokeAuthorizedApp(req, clientId): clientId must be a non-empty string.')
    const { userId } = await signedInCall(api, given, 'revokeAuthorizedApp()', options)
    if (!(await (await import('../manage.js')).revokeApp(api.config, userId, clientId))) {
      throw new AuthorizationServerError('not_found', `revokeAuthorizedApp(): the client "${clientId}" has no access to this user's account.`)
    }
  }
}
