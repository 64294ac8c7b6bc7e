/**
 * The single-use links of the password provider (verify an address, reset a password), stored as
 * the e-mail sign-in's are: a random token in the mail, only a keyed hash of it in the verification
 * token table, under the address.
 *
 * That hash is an HMAC-SHA256 keyed by the secret over the link's purpose and token. It was once
 * Auth.js's magic-link hash, `sha256(text + secret)`, of the purpose and token: that is the
 * magic-link hash of the token `'portcullis reset-password\0' + token`, so the link signed in at
 * /callback/email with its purpose typed in front. No magic-link hash equals an HMAC under the
 * secret, whatever token is chosen: a reset token is no verification token, and neither is a
 * magic-link token. (Links mailed before that change no longer work.)
 */
import { createHmac } from 'node:crypto'
import { generateVerificationToken, sameTokenHash } from '../email/token.js'
import type { ActionContext } from '../actions/context.js'
import type { PasswordAdapter } from '../config/password-provider.js'
import type { VerificationToken } from '../types.js'

/** What a link is for. */
export type LinkPurpose = 'verify-email' | 'reset-password'

function purposeHash(purpose: LinkPurpose, token: string, secret: string): string {
  return createHmac('sha256', secret).update(`portcullis ${purpose}\0${token}`).digest('hex')
}

/**
 * Stores a new link for `identifier` and returns its token (for the mail) and expiry.
 * @throws AdapterError
 */
export async function issueLink(ctx: ActionContext, purpose: LinkPurpose, identifier: string, maxAgeSeconds: number): Promise<{ token: string; expires: Date }> {
  const adapter = ctx.config.adapter as PasswordAdapter
  const token = generateVerificationToken()
  const expires = new Date(Date.now() + maxAgeSeconds * 1000)
  await adapter.createVerificationToken({ identifier, token: purposeHash(purpose, token, ctx.config.secrets[0]!), expires })
  return { token, expires }
}

/**
 * Uses the link: its stored token is deleted (the adapter does it atomically: of concurrent uses
 * exactly one gets it) and true is returned when it was this purpose's, for this address, unexpired.
 * Links mailed before a secret rotation still work (every secret is tried).
 * @throws AdapterError
 */
export async function useLink(ctx: ActionContext, purpose: LinkPurpose, identifier: string, token: string): Promise<boolean> {
  const adapter = ctx.config.adapter as PasswordAdapter
  for (const secret of ctx.config.secrets) {
    const hash = purposeHash(purpose, token, secret)
    const stored: VerificationToken | null = await adapter.useVerificationToken({ identifier, token: hash })
    if (stored && sameTokenHash(stored.token, hash)) {
      // An adapter that ignores the identifier may hand back another address's token: refuse it.
      return stored.identifier === identifier && stored.expires.getTime() > Date.now()
    }
  }
  return false
}
