/**
 * GET /webauthn-options/:provider?action=authenticate|register: the options of a passkey ceremony
 * as JSON, `{ action, options }` (Auth.js's answer), and the `authjs.challenge` cookie that binds its
 * challenge to this browser. Registration needs a signed-in user (Auth.js also registers new users
 * here; Portcullis does not, see docs/passkeys.md), and, with the `account` option, a recent sign-in
 * (else `403 { error: 'RecentSignInRequired', url }`: the script goes to confirm). Each answer stores a challenge, so it is
 * rate-limited per client address (`rateLimit.ip`, a bucket of its own).
 */
import type { PasskeyAdapter } from '../provider.js'
import { RateLimitedError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { limitPasskeyChallenge } from '../../../security/rate-limit.js'
import { startChallenge } from '../challenge.js'
import { signedInUserId } from '../../../session/strategy.js'
import { authenticationOptions, registrationOptions } from '../options.js'
import type { Action } from '../../../actions/context.js'
import { countRateLimited } from '../../../telemetry/refusal.js'
import { recentSignInRefusal } from '../../../actions/sensitive.js'
import { passkeyProvider, passkeysPageUrl } from './shared.js'

export const webauthnOptions =
  (providerId: string): Action =>
  async (ctx) => {
    const provider = passkeyProvider(ctx.config, providerId)
    const action = ctx.query.get('action') ?? 'authenticate'
    if (action !== 'authenticate' && action !== 'register') {
      return { status: 400, json: { error: 'InvalidRequest', message: 'GET /webauthn-options: action must be "authenticate" or "register".' } }
    }
    const adapter = ctx.config.adapter as PasskeyAdapter
    const userId = action === 'register' ? await signedInUserId(ctx) : null
    const user = userId === null ? null : await adapter.getUser(userId)
    if (action === 'register' && !user) {
      return {
        status: 401,
        json: { error: 'Unauthorized', message: 'Registering a passkey needs a signed-in user: sign in first, then add a passkey (the passkeys page, GET /passkeys).' },
      }
    }
    // Adding a way in: with the `account` option, after a recent sign-in (the script goes to confirm).
    const stale = user ? await recentSignInRefusal(ctx, 'GET /webauthn-options?action=register', passkeysPageUrl(ctx), { json: true }) : undefined
    if (stale) return stale
    const refused = await rateLimited(ctx)
    if (refused) return refused
    const { challenge, cookie } = await startChallenge(ctx, provider, action, user?.id)
    const options = user ? await registrationOptions(ctx.config, provider, challenge, user, await adapter.listAuthenticatorsByUserId(user.id)) : await authenticationOptions(provider, challenge)
    return { json: { action, options }, cookies: [cookie] }
  }

/** 429 JSON with `Retry-After` when the client asked for too many challenges (a script's fetch, not a page: no redirect). */
async function rateLimited(ctx: Parameters<Action>[0]): Promise<AuthResponse | undefined> {
  try {
    await limitPasskeyChallenge(ctx)
    return undefined
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error
    ctx.config.logger.warn('RateLimited', error.message)
    if (ctx.config.telemetry) countRateLimited(ctx.config, error)
    return { status: 429, headers: { 'Retry-After': String(error.retryAfterSeconds) }, json: { error: 'RateLimited', message: 'Too many passkey requests; try again later.' } }
  }
}
