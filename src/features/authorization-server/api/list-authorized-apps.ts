/** The server-side `listAuthorizedApps(req)`. */
import type { Api } from '../../../api/context.js'
import type { AuthorizedApp } from '../types.js'
import { signedInCall, type AuthorizationServerCallContext } from './context.js'

/**
 * The apps with access to the signed-in user's account (what `/api/auth/oauth-apps` shows): each
 * client with the scopes it was granted, most recent first.
 *
 * @throws AuthorizationServerError `not_signed_in`; UnknownActionError (`authorizationServer` off)
 * @example
 * ```ts
 * app.get('/account/apps', async (req, res) => res.json(await listAuthorizedApps(req)))
 * ```
 */
export type ListAuthorizedAppsFunction = (req: AuthorizationServerCallContext) => Promise<AuthorizedApp[]>

export function createListAuthorizedApps(api: Api): ListAuthorizedAppsFunction {
  return async (given) => {
    const { userId } = await signedInCall(api, given, 'listAuthorizedApps()')
    return (await import('../manage.js')).listApps(api.config, userId)
  }
}
