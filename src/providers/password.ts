/**
 * E-mail and password accounts, built in: sign-up with a verified address, sign-in, a forgotten
 * password reset by e-mail, a changed password, all hashed with Argon2id (or scrypt on a Node
 * before 24.7; node:crypto either way, no native dependency) and checked against NIST SP 800-63B's rules. Where Auth.js's Credentials leaves all of
 * that to the app, this provider does it; see docs/passwords.md.
 *
 * Needs an adapter with the password methods (`KnexAdapter` has them, after the
 * `portcullis_password` migration) and a way to send mail: `server`/`from` (or `AUTH_EMAIL_SERVER`
 * / `AUTH_EMAIL_FROM`, or a Nodemailer provider's), or your own `sendMail`.
 *
 * For clients it is a credentials provider (`type: 'credentials'`, fields `email` and `password`):
 * Auth.js's `signIn('password', { email, password })` and `portcullis/client`'s post to
 * `/callback/password` as for any credentials provider. With `usernames` on, the `email` field takes
 * a username too (no `@`: a username).
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

/** Hashes and checks passwords: pass `hash` and `verify` to use another scheme or engine. */
export interface PasswordHashing {
  /** A new hash of the (NFKC-normalised) password, as a self-describing string to store. */
  hash(password: string): Promise<string>
  /** Whether the password is the one `stored` was made from; `false` for anything it cannot read. */
  verify(password: string, stored: string): Promise<boolean>
  /**
   * Whether `stored` should be replaced, after a successful sign-in, by `hash(password)`. Default:
   * never, for your own scheme; the built-in hashers say yes when the algorithm or its parameters
   * changed, and for imported bcrypt hashes.
   */
  needsRehash?: ((stored: string) => boolean) | undefined
}

/**
 * The `usernames` option: the rules of a username. A username is compared by its skeleton (NFKC,
 * case folded, lookalikes folded, `.`/`_`/`-` removed), so `Ada`, `ada` and `a.da` are one name,
 * and `adrnin` is `admin`'s; see docs/passwords.md, "Usernames".
 */
export interface UsernameOptions {
  /** Length bounds in characters (code points, after NFKC and trimming). Default 3 and 30; at most 64. */
  minLength?: number | undefined
  maxLength?: number | undefined
  /**
   * The characters allowed, tested on the name after NFKC and trimming. Default
   * `/^[A-Za-z0-9][A-Za-z0-9._-]*$/` (ASCII letters, digits, `.`, `_`, `-`, starting with a letter
   * or a digit). A wider pattern may let in other scripts: a name mixing Latin, Cyrillic, Greek or
   * another script is refused whatever the pattern, and so are controls, invisible and space characters.
   */
  pattern?: RegExp | undefined
  /** Names refused besides the built-in ones (admin, root, support, api, …), compared by skeleton. */
  reserved?: readonly string[] | undefined
  /** Sign-up requires a username. Default `false`: it may be left out and chosen later. */
  required?: boolean | undefined
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
  /**
   * `verify-email` with `usernames` on: the username the sign-up asked for, which another account has
   * (the account was made without one: the mail says so and links the page that chooses another).
   * The built-in text does not repeat the name (a mail says nothing a visitor typed); yours may.
   */
  usernameTaken?: string | undefined
  /** `usernameTaken`: the page where the user chooses another username once signed in. */
  usernameUrl?: string | undefined
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
  /**
   * Your own hashing. Default: Argon2id at OWASP's m = 19456 KiB, t = 2, p = 1 where node:crypto has
   * it (Node 24.7 and later), else scrypt at N = 2^17, r = 8, p = 1 (said once at init); either
   * verifies the other's hashes (Argon2id only where Node has it) and imported bcrypt hashes
   * (through bcryptjs), and replaces them at the next sign-in.
   */
  hashing?: PasswordHashing | undefined
  /**
   * The cap on concurrent password hashes and verifications in this process (yours too): at most
   * `concurrency` run at once, `queue` more wait, and past that a sign-in, sign-up or reset is refused
   * at once with a 503 and `Retry-After` (`PasswordBusyError` from the server-side functions), so a
   * flood of sign-ins cannot hold every thread of libuv's pool. Defaults: `concurrency` the pool's
   * size (UV_THREADPOOL_SIZE, 4) less one, at most the cores; `queue` 16.
   */
  hashingLimit?: { concurrency?: number | undefined; queue?: number | undefined } | undefined
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
  /**
   * Usernames beside the address: chosen at sign-up (optional unless `required`) or later on the
   * `/username` page, unique by skeleton, and signing in in place of the address. Needs the adapter's
   * username methods (`KnexAdapter`'s, after the `portcullis_usernames` migration). Default off.
   */
  usernames?: boolean | UsernameOptions | undefined
}

/** A password provider as written in the config. */
export interface PasswordConfig {
  readonly id: string
  readonly name: string
  readonly type: 'credentials'
  /** The sign-in form's fields: `email` (an address, or a username with `usernames` on) and `password`. */
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
  const email = options.usernames ? { label: 'E-mail or username', type: 'text', required: true } : { label: 'E-mail', type: 'email', placeholder: 'email@example.com', required: true }
  return Object.freeze({
    id: id ?? 'password',
    name: name ?? 'Password',
    type: 'credentials',
    credentials: Object.freeze({
      email: Object.freeze(email),
      password: Object.freeze({ label: 'Password', type: 'password', required: true }),
    }),
    authorize: undefined,
    password: Object.freeze(password),
  })
}

export { DEFAULT_SCRYPT, argon2idHasher, scryptHasher, type PasswordHasher, type ScryptParameters } from '../features/password/hash.js'
export { DEFAULT_ARGON2ID, type Argon2Parameters } from '../features/password/argon2.js'
export { PasswordBusyError, PasswordPolicyError, EmailNotVerifiedError, UsernameError, type PasswordPolicyCode, type UsernameErrorCode } from '../features/password/errors.js'
export { usernameKey as usernameSkeleton } from '../features/password/username-key.js'
