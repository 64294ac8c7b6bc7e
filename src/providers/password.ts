/**
 * E-mail and password accounts, built in: sign-up with a verified address, sign-in, a forgotten
 * password reset by e-mail, a changed password, all hashed with scrypt (node:crypto, no native
 * dependency) and checked against NIST SP 800-63B's rules. Where Auth.js's Credentials leaves all of
 * that to the app, this provider does it; see docs/passwords.md.
 *
 * Needs an adapter with the password methods (`KnexAdapter` has them, after the
 * `portcullis_password` migration) and a way to send mail: `server`/`from` (or `AUTH_EMAIL_SERVER`
 * / `AUTH_EMAIL_FROM`, or a Nodemailer provider's), or your own `sendMail`.
 *
 * For clients it is a credentials provider (`type: 'credentials'`, fields `email` and `password`):
 * Auth.js's `signIn('password', { email, password })` and `portcullis/client`'s post to
 * `/callback/password` as for any credentials provider.
 *
 * @example
 * ```ts
 * import Password from 'portcullis/providers/password'
 *
 * Password({ requireEmailVerification: true }) // mail through AUTH_EMAIL_SERVER
 * ```
 * @see https://pages.nist.gov/800-63-4/sp800-63b.html
 */
import type { CredentialInput } from './credentials.js'

/** Hashes and checks passwords: pass `hash` and `verify` to use argon2 or another scheme. */
export interface PasswordHashing {
  /** A new hash of the (NFKC-normalised) password, as a self-describing string to store. */
  hash(password: string): Promise<string>
  /** Whether the password is the one `stored` was made from; `false` for anything it cannot read. */
  verify(password: string, stored: string): Promise<boolean>
  /**
   * Whether `stored` should be replaced, after a successful sign-in, by `hash(password)`. Default:
   * never, for your own scheme; the built-in scrypt says yes when the parameters changed, and for
   * imported bcrypt hashes.
   */
  needsRehash?: ((stored: string) => boolean) | undefined
}

/** The mails the provider sends, as `sendMail` receives them. */
export interface PasswordMail {
  /** `verify-email` (finish signing up), `address-taken` (someone tried to sign up with it), `reset-password`. */
  kind: 'verify-email' | 'address-taken' | 'reset-password'
  to: string
  /** The link of the mail: the verification or reset link, or the sign-in page for `address-taken`. */
  url: string
  /** `address-taken`: a link that sets a new password, for an owner who forgot theirs. */
  resetUrl?: string | undefined
  /** `verify-email` with `verifyBy` `'code'` or `'both'`: the six-digit code the mail shows. */
  code?: string | undefined
  /** When the link stops working (`address-taken`: its reset link's expiry). */
  expires?: Date | undefined
  /** The rendered mail, themed like the built-in pages. */
  subject: string
  text: string
  html: string
}

/** Options of `Password(...)`. */
export interface PasswordOptions {
  /** Provider id, used in URLs (`/callback/<id>`). Default `password`. */
  id?: string | undefined
  /** Shown on the sign-in button. Default `Password`. */
  name?: string | undefined
  /**
   * Refuse sign-in until the address is verified (the link of the sign-up mail): the sign-in page
   * says so and offers to send the link again. Default `false`: the password signs in at once,
   * and the link only marks the address verified (and signs in).
   */
  requireEmailVerification?: boolean | undefined
  /** Length bounds in characters (Unicode code points, after NFKC). Default 8 and 256. */
  minLength?: number | undefined
  maxLength?: number | undefined
  /**
   * Called with a new password (sign-up, reset, change) after the length and common-password checks:
   * return true to refuse it as known breached, e.g. with a k-anonymity range query (docs/passwords.md).
   */
  isBreached?: ((password: string) => boolean | Promise<boolean>) | undefined
  /** Your own hashing (argon2, …). Default: scrypt, N = 2^17, r = 8, p = 1, and bcrypt hashes verified through bcryptjs. */
  hashing?: PasswordHashing | undefined
  /**
   * What the sign-up's verification mail carries: `'link'` (the default), `'code'` (a six-digit code,
   * typed on the "check your e-mail" page in the browser that signed up) or `'both'`. A code is stored
   * hashed, bound to that browser and the address, single use, void after five wrong tries,
   * rate-limited per address and client, and works for fifteen minutes (docs/passwords.md).
   */
  verifyBy?: 'link' | 'code' | 'both' | undefined
  /** Seconds a verification link works. Default 86400 (24 hours). */
  verificationMaxAge?: number | undefined
  /** Seconds a reset link works. Default 3600 (1 hour). */
  resetMaxAge?: number | undefined
  /**
   * The SMTP server for the provider's mails: a URL, nodemailer options, or `'console'` (development).
   * Default: `AUTH_EMAIL_SERVER`, else a configured Nodemailer provider's server.
   */
  server?: string | Record<string, unknown> | undefined
  /** The sender. Default: `AUTH_EMAIL_FROM`, else a configured Nodemailer provider's. */
  from?: string | undefined
  /** Sends the mails yourself instead (then `server` and `from` are not needed). */
  sendMail?: ((mail: PasswordMail) => Promise<void>) | undefined
}

/** A password provider as written in the config. */
export interface PasswordConfig {
  readonly id: string
  readonly name: string
  readonly type: 'credentials'
  /** The sign-in form's fields: `email` and `password`. */
  readonly credentials: Readonly<Record<string, CredentialInput>>
  readonly authorize: undefined
  /** What makes it the password provider, not an app's credentials provider. */
  readonly password: Readonly<Omit<PasswordOptions, 'id' | 'name'>>
}

/**
 * Creates the password provider.
 *
 * @param options Verification, length bounds, breach check, hashing, link lifetimes, mail.
 * @example
 * ```ts
 * import Password from 'portcullis/providers/password'
 *
 * Password({ requireEmailVerification: true, server: process.env.SMTP_URL, from: 'no-reply@example.com' })
 * ```
 */
export default function Password(options: PasswordOptions = {}): PasswordConfig {
  const { id, name, ...password } = options
  return Object.freeze({
    id: id ?? 'password',
    name: name ?? 'Password',
    type: 'credentials',
    credentials: Object.freeze({
      email: Object.freeze({ label: 'E-mail', type: 'email', placeholder: 'email@example.com', required: true }),
      password: Object.freeze({ label: 'Password', type: 'password', required: true }),
    }),
    authorize: undefined,
    password: Object.freeze(password),
  })
}

export { DEFAULT_SCRYPT, scryptHasher, type PasswordHasher, type ScryptParameters } from '../features/password/hash.js'
export { PasswordPolicyError, EmailNotVerifiedError, type PasswordPolicyCode } from '../features/password/errors.js'
