/**
 * Sign-in codes by e-mail: a six-digit code mailed to the address and typed on the page that asked
 * for it, for phones where a magic link opens in another browser than the one signing in. The code
 * is stored hashed, works once, for 10 minutes by default, only in the browser that asked, and is
 * void after 5 wrong tries (docs/email.md#sign-in-codes).
 *
 * Needs an adapter (the code is stored in its `VerificationToken` table, no migration of its own)
 * and a way to send mail: `server`/`from` (or `AUTH_EMAIL_SERVER` / `AUTH_EMAIL_FROM`), or your own
 * `sendCode`.
 *
 * For clients it is an e-mail provider (`type: 'email'`): its sign-in form posts the address to
 * `/signin/<id>`, whose answer is the page asking for the code.
 *
 * @example
 * ```ts
 * import EmailCode from 'portcullis/providers/email-code'
 *
 * EmailCode({ server: process.env.SMTP_URL, from: 'Example <no-reply@example.com>' })
 * ```
 * @see https://pages.nist.gov/800-63-4/sp800-63b.html#out-of-band (out-of-band secrets: single use, short-lived, attempts limited)
 */
import type { AuthIncomingRequest, Awaitable, Theme } from '../types.js'

/** What `sendCode` receives. */
export interface SendCodeParams {
  /** The address to send to, as `normalizeIdentifier` returned it. */
  identifier: string
  /** The code, six digits. Only its hash is stored; never log it. */
  code: string
  /** When the code stops working. */
  expires: Date
  /** The site the code signs in to, e.g. `example.com`. */
  host: string
  theme: Theme
  /** The sign-in request (Express's `req`). */
  request: AuthIncomingRequest
}

/** Options of `EmailCode(...)`. */
export interface EmailCodeOptions {
  /** Provider id, used in URLs (`/signin/<id>`, `/callback/<id>`). Default `email-code`. */
  id?: string | undefined
  /** Shown on the sign-in button ("Sign in with …"). Default `Email code`. */
  name?: string | undefined
  /** Seconds a code works. Default 600 (10 minutes); at most 3600. */
  maxAge?: number | undefined
  /**
   * Turns what the user typed into the address to send to, or throws to refuse it. Default: the
   * e-mail providers' (NFKC, trimmed, lower-cased, one `@`, nothing that could add a recipient).
   */
  normalizeIdentifier?: ((identifier: string) => string) | undefined
  /** The SMTP server: a URL, nodemailer options, or `'console'` (development). Default `AUTH_EMAIL_SERVER`. */
  server?: string | Record<string, unknown> | undefined
  /** The sender. Default `AUTH_EMAIL_FROM`. */
  from?: string | undefined
  /** Sends the code yourself instead (then `server` and `from` are not needed). */
  sendCode?: ((params: SendCodeParams) => Awaitable<void>) | undefined
}

/** A sign-in code provider as written in the config. */
export interface EmailCodeConfig {
  readonly id: string
  readonly name: string
  readonly type: 'email'
  /** What makes it a code provider, not a magic-link one. */
  readonly emailCode: Readonly<Omit<EmailCodeOptions, 'id' | 'name'>>
  readonly [option: string]: unknown
}

/**
 * Creates the sign-in code provider.
 *
 * @param options Lifetime, address normalisation, and how the mail is sent.
 * @example
 * ```ts
 * import EmailCode from 'portcullis/providers/email-code'
 *
 * EmailCode({ maxAge: 5 * 60, sendCode: ({ identifier, code }) => mailApi.send({ to: identifier, text: `Your code: ${code}` }) })
 * ```
 */
export default function EmailCode(options: EmailCodeOptions = {}): EmailCodeConfig {
  const { id, name, ...emailCode } = options
  return Object.freeze({ id: id ?? 'email-code', name: name ?? 'Email code', type: 'email', emailCode: Object.freeze({ ...emailCode }) })
}
