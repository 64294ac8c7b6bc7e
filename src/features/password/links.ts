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
 *
 * A reset link also covers the password it replaces (a fingerprint of the stored hash, or a marker
 * for none): once the password changes, by a reset or by `changePassword()`, every other reset link
 * mailed before is not found any more, as a used one is not.
 */
import { createHash, createHmac } from 'node:crypto'
import { generateVerificationToken, sameTokenHash } from '../../mail/token.js'
import type { ActionContext } from '../../actions/context.js'
import type { PasswordAdapter } from './provider.js'
import type { VerificationToken } from '../../types.js'

/**
 * What a link is for, and what it is bound to: a reset link names the password hash stored when it is
 * mailed and when it is used (null when the address has no user, or the user no password).
 */
export type LinkSubject = { purpose: 'verify-email' } | { purpose: 'reset-password'; storedPassword: string | null }

// Not a SHA-256 in hex: a link mailed while there was no password matches no password's.
const NO_PASSWORD = 'none'

function purposeHash(subject: LinkSubject, token: string, secret: string): string {
  // A digest, not the hash itself: a fixed length, and no separator in it to shift the fields.
  const state = subject.purpose === 'reset-password' ? `${subject.storedPassword === null ? NO_PASSWORD : createHash('sha256').update(subject.storedPassword).digest('hex')}\0` : ''
  return createHmac('sha256', secret).update(`portcullis ${subject.purpose}\0${state}${token}`).digest('hex')
}

/**
 * Stores a new link for `identifier` and returns its token (for the mail) and expiry.
 * @throws AdapterError
 */
export async function issueLink(ctx: ActionContext, subject: LinkSubject, identifier: string, maxAgeSeconds: number): Promise<{ token: string; expires: Date }> {
  const adapter = ctx.config.adapter as PasswordAdapter
  const token = generateVerificationToken()
  const expires = new Date(Date.now() + maxAgeSeconds * 1000)
  await adapter.createVerificationToken({ identifier, token: purposeHash(subject, token, ctx.config.secrets[0]!), expires })
  return { token, expires }
}

/**
 * Uses the link: its stored token is deleted (the adapter does it atomically: of concurrent uses
 * exactly one gets it) and true is returned when it was this purpose's, for this address, unexpired
 * (a reset link mailed for another password than the one stored now is not found at all).
 * Links mailed before a secret rotation still work (every secret is tried).
 * @throws AdapterError
 */
export async function useLink(ctx: ActionContext, subject: LinkSubject, identifier: string, token: string): Promise<boolean> {
  const adapter = ctx.config.adapter as PasswordAdapter
  for (const secret of ctx.config.secrets) {
    const hash = purposeHash(subject, token, secret)
    const stored: VerificationToken | null = await adapter.useVerificationToken({ identifier, token: hash })
    if (stored && sameTokenHash(stored.token, hash)) {
      // An adapter that ignores the identifier may hand back another address's token: refuse it.
      return stored.identifier === identifier && stored.expires.getTime() > Date.now()
    }
  }
  return false
}
