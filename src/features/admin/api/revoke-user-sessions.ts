/** The server-side `revokeUserSessions(req, userId)`: an administrator signs a user out everywhere. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { revokeOwnSessions } from '../../../session/devices.js'
import { AdminError } from '../errors.js'
import { adminCall, type AdminCallContext } from './context.js'

/**
 * Ends every session of user `userId` on every process, as their own "sign out everywhere" does
 * (JWT sessions need `session.store`: the tokens from before it are refused by their age), each with
 * a `sessionRevoked` event (`by: 'adminRevoked'`). Needs `user: ['revoke-sessions']`; CSRF-checked.
 *
 * @returns How many sessions ended.
 * @throws AdminError `not_signed_in`, `forbidden`, `not_found`; MissingCSRFError; InvalidConfigurationError (JWT sessions without a store)
 * @example
 * ```ts
 * app.post('/admin/users/:id/sign-out', express.urlencoded({ extended: false }), async (req, res) => {
 *   res.json({ ended: await revokeUserSessions(req, req.params.id, { csrfToken: req.body.csrfToken }) })
 * })
 * ```
 */
export type RevokeUserSessionsFunction = (req: AdminCallContext, userId: string, options?: CsrfOptions) => Promise<number>

export function createRevokeUserSessions(api: Api): RevokeUserSessionsFunction {
  return async (given, userId, options = {}) => {
    if (typeof userId !== 'string' || userId.length === 0) throw new TypeError('revokeUserSessions(req, userId): userId must be a non-empty string.')
    const { ctx } = await adminCall(api, given, 'revokeUserSessions()', 'revoke-sessions', options)
    if (!(await api.config.adapter!.getUser!(userId))) throw new AdminError('not_found', `revokeUserSessions(): there is no user ${userId}.`)
    return (await revokeOwnSessions(ctx, { userId, sessionId: undefined }, {}, 'adminRevoked', { everyToken: true })).length
  }
}
