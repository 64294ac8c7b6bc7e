/**
 * The server-side `changeUsername(req, { username, csrfToken })`: the signed-in user's new username
 * (the password provider's `usernames` option), checked against the rules and claimed; a name another
 * user has is refused as `taken` (a signed-in user may learn that; each try is rate-limited).
 */
import { passwordProvider } from '../routes/shared.js'
import { AccountUnlinkError } from '../../../errors.js'
import { sessionOwner } from '../../../session/devices.js'
import { assertServerCsrf, type Api, type CsrfOptions } from '../../../api/context.js'
import { passwordCall, type PasswordCallContext } from './context.js'

/** What `changeUsername()` takes. */
export interface ChangeUsernameOptions extends CsrfOptions {
  username: string
}

/**
 * Changes the signed-in user's username; resolves to the name stored (NFKC, trimmed). CSRF-checked;
 * emits `updateUser`.
 *
 * @throws UsernameError (`code` missing, too_short, too_long, characters, mixed_scripts, reserved,
 *   taken), RateLimitedError, MissingCSRFError, AccountUnlinkError `not_signed_in`,
 *   UnknownActionError (no password provider), TypeError (usernames are off)
 * @example
 * ```ts
 * app.post('/profile/username', express.urlencoded({ extended: false }), async (req, res) => {
 *   await changeUsername(req, { username: req.body.username, csrfToken: req.body.csrfToken })
 *   res.redirect('/profile')
 * })
 * ```
 */
export type ChangeUsernameFunction = (req: PasswordCallContext, options: ChangeUsernameOptions) => Promise<string>

export function createChangeUsername(api: Api): ChangeUsernameFunction {
  return async (given, options) => {
    const call = passwordCall(api, given, 'changeUsername()')
    assertServerCsrf(api, call.ctx, options, 'changeUsername()')
    const provider = passwordProvider(api.config)
    const owner = await sessionOwner(call.ctx)
    if (!owner) throw new AccountUnlinkError('not_signed_in', 'changeUsername(): nobody is signed in on this request.')
    const { changeUsername } = await import('../usernames.js')
    return (await changeUsername(call.ctx, provider, owner.userId, options.username)).username
  }
}
