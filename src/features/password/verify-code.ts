/**
 * The sign-up's verification code (`Password({ verifyBy: 'code' | 'both' })`): six digits mailed
 * with (or instead of) the link, typed on the page the sign-up goes to, in the browser that signed
 * up. Stored by the core's code engine (src/mail/code.ts, under the `sign-up-code` purpose): hashed,
 * bound to that browser's nonce (the `authjs.sign-up-code` cookie) and the address, single use, five
 * tries, fifteen minutes. Only an account waiting for its verification gets one: a code stored for
 * any other address, guessed, would sign its account in.
 */
import { randomBytes } from 'node:crypto'
import { authUrl, type ActionContext } from '../../actions/context.js'
import { bindingCookie, newCode, storeCode, type CodeAdapter } from '../../mail/code.js'
import type { OutgoingCookie } from '../../session/cookies.js'

/** How long a sign-up's code works. */
export const SIGN_UP_CODE_SECONDS = 15 * 60

/**
 * Stores a new code for `email`.
 * @returns The code (for the mail), the nonce (for the cookie) and its expiry.
 * @throws AdapterError
 */
export async function issueSignUpCode(ctx: ActionContext, email: string): Promise<{ code: string; nonce: string; expires: Date }> {
  const code = newCode()
  const expires = new Date(Date.now() + SIGN_UP_CODE_SECONDS * 1000)
  const { nonce } = await storeCode(ctx.config.adapter as CodeAdapter, ctx.config.secrets[0]!, email, code, expires, 'sign-up-code')
  return { code, nonce, expires }
}

/** A nonce no code is bound to: the cookie a taken address's sign-up gets, so the answers look alike. */
export function unboundNonce(): string {
  return randomBytes(32).toString('base64url')
}

/** The cookie binding a sign-up's code to this browser. */
export function signUpCodeCookie(ctx: ActionContext, nonce: string): OutgoingCookie {
  const cookie = ctx.cookieSet.cookies.signUpCode
  return { name: cookie.name, value: bindingCookie(nonce), options: { ...cookie.options, maxAge: SIGN_UP_CODE_SECONDS } }
}

/** The page that asks for the code (GET /verify-email/code). */
export function signUpCodePageUrl(ctx: ActionContext, email: string, callbackUrl: string): string {
  return `${authUrl(ctx, '/verify-email/code')}?${new URLSearchParams({ email, callbackUrl })}`
}
