/** The server-side `removePasskey(req, credentialId, { csrfToken })`. */
import { removeOwnPasskey } from '../routes/shared.js'
import type { PasskeyInfo } from '../types.js'
import { assertRecentSignInIfRequired, callerPage } from '../../../actions/sensitive.js'
import { assertServerCsrf, type Api, type CsrfOptions } from '../../../api/context.js'
import { passkeysCall, type PasskeysCallContext } from './context.js'

/**
 * Removes one of the signed-in user's passkeys (an id from `listPasskeys`) and returns it, unless it
 * is their last way to sign in (as `unlinkAccount` refuses it). CSRF-checked: pass the form's
 * `csrfToken` (default `req.body.csrfToken`). With the `account` option, only after a recent sign-in
 * (docs/account.md).
 * @throws RecentSignInRequiredError (its `url`: the confirmation page, back to the page the request came from)
 * @throws AccountUnlinkError (`code`: not_signed_in, not_linked, last_sign_in_method, unsupported_adapter)
 * @throws MissingCSRFError without a valid CSRF token (unless `skipCsrfCheck`)
 * @example
 * ```ts
 * app.post('/account/passkeys/:id/delete', express.urlencoded({ extended: false }), async (req, res) => {
 *   await removePasskey(req, req.params.id, { csrfToken: req.body.csrfToken })
 *   res.redirect('/account/passkeys')
 * })
 * ```
 */
export type RemovePasskeyFunction = (req: PasskeysCallContext, credentialId: string, options?: CsrfOptions) => Promise<PasskeyInfo>

export function createRemovePasskey(api: Api): RemovePasskeyFunction {
  return async (given, credentialId, options = {}) => {
    if (typeof credentialId !== 'string' || credentialId.length === 0) throw new TypeError('removePasskey(req, credentialId): credentialId must be a passkey id from listPasskeys().')
    const ctx = passkeysCall(api, given, 'removePasskey()')
    assertServerCsrf(api, ctx, options, 'removePasskey()')
    await assertRecentSignInIfRequired(ctx, 'removePasskey()', callerPage(ctx))
    return removeOwnPasskey(ctx, credentialId, 'removePasskey()')
  }
}
