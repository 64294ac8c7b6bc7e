/** The server-side `banUser(req, userId, options)` and `unbanUser(req, userId)`: an administrator bans a user, or lifts the ban. */
import type { Api, CsrfOptions } from '../../../api/context.js'
import { hooksOf } from '../../../composition/index.js'
import { describeError, emitEvent } from '../../../events.js'
import { revokeOwnSessions } from '../../../session/devices.js'
import { AdminError } from '../errors.js'
import type { BanUserOptions, UserBan } from '../types.js'
import { adminCall, type AdminCallContext } from './context.js'

/**
 * Bans user `userId`: every session of theirs ends on every process (as "sign out everywhere"), every
 * sign-in by any method is refused (`UserBannedError`, `?error=UserBanned`) and every API key of
 * theirs too, until `expiresIn` seconds have passed (the ban then lifts itself) or `unbanUser`. The
 * `reason` is for administrators only. Needs `user: ['ban']`; CSRF-checked; nobody bans themselves.
 *
 * @returns The ban.
 * @throws AdminError `not_signed_in`, `forbidden`, `own_roles` (banning oneself), `not_found`; MissingCSRFError; TypeError for a bad reason or expiry
 * @example
 * ```ts
 * app.post('/admin/users/:id/ban', express.urlencoded({ extended: false }), async (req, res) => {
 *   await banUser(req, req.params.id, { reason: req.body.reason, expiresIn: 7 * 86_400, csrfToken: req.body.csrfToken })
 *   res.redirect(`/admin/users/${req.params.id}`)
 * })
 * ```
 */
export type BanUserFunction = (req: AdminCallContext, userId: string, options?: BanUserOptions) => Promise<UserBan>

/**
 * Lifts user `userId`'s ban (their sessions stay ended: they sign in again). Needs `user: ['ban']`; CSRF-checked.
 * @returns False when they had none.
 * @throws AdminError `not_signed_in`, `forbidden`; MissingCSRFError
 */
export type UnbanUserFunction = (req: AdminCallContext, userId: string, options?: CsrfOptions) => Promise<boolean>

export function createBanUser(api: Api): BanUserFunction {
  return async (given, userId, options = {}) => {
    if (typeof userId !== 'string' || userId.length === 0) throw new TypeError('banUser(req, userId): userId must be a non-empty string.')
    const reason = options.reason === undefined || options.reason === '' ? null : options.reason
    if (reason !== null && (typeof reason !== 'string' || reason.length > 500)) throw new TypeError('banUser(): reason must be a string of at most 500 characters.')
    const { expiresIn } = options
    if (expiresIn !== undefined && (!Number.isInteger(expiresIn) || expiresIn < 1)) throw new TypeError('banUser(): expiresIn must be a whole number of seconds above 0 (or left out: until unbanUser).')
    const { ctx, callerId } = await adminCall(api, given, 'banUser()', 'ban', options)
    if (userId === callerId) throw new AdminError('own_roles', 'banUser(): nobody bans themselves.')
    const at = new Date()
    const ban: UserBan = { bannedAt: at, reason, expiresAt: expiresIn === undefined ? null : new Date(at.getTime() + expiresIn * 1000) }
    // Stored first: a sign-in racing the ban either ends below or is refused by the stored ban.
    if (!(await api.config.adapter!.banUser!(userId, { at, reason, expiresAt: ban.expiresAt }))) throw new AdminError('not_found', `banUser(): there is no user ${userId}.`)
    // JWT sessions without session.store have no record to end: they last until they expire (docs/admin.md).
    const { strategy, store } = api.config.session
    if (strategy === 'database' || store) await revokeOwnSessions(ctx, { userId, sessionId: undefined }, {}, 'adminRevoked', { everyToken: strategy === 'jwt' })
    await banChanged(api, userId)
    await emitEvent(api.config, 'userBanned', { userId, reason, expiresAt: ban.expiresAt })
    return ban
  }
}

export function createUnbanUser(api: Api): UnbanUserFunction {
  return async (given, userId, options = {}) => {
    if (typeof userId !== 'string' || userId.length === 0) throw new TypeError('unbanUser(req, userId): userId must be a non-empty string.')
    await adminCall(api, given, 'unbanUser()', 'ban', options)
    const lifted = await api.config.adapter!.unbanUser!(userId)
    if (!lifted) return false
    await banChanged(api, userId)
    await emitEvent(api.config, 'userUnbanned', { userId })
    return true
  }
}

/** The features' `banChanged` hooks (the API keys' cache); errors logged, the ban stands as stored. */
async function banChanged(api: Api, userId: string): Promise<void> {
  for (const hook of hooksOf(api.config, 'banChanged')) {
    try {
      await hook(api.config, userId)
    } catch (error) {
      api.config.logger.error('BanChangedHookFailed', `A feature's step after a change of user ${userId}'s ban failed; the change is stored.`, describeError(error))
    }
  }
}
