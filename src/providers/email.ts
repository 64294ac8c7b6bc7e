/**
 * E-mail sign-in ("magic links") with your own delivery: Portcullis makes the link, stores its
 * token hashed, and checks it when it is followed; `sendVerificationRequest` sends it (through
 * your mail API, queue or SMTP library). For SMTP, `portcullis/providers/nodemailer` sends it for you.
 *
 * Needs an adapter (the tokens are stored in its `VerificationToken` table) and, in production, a
 * trusted site URL (`AUTH_URL`, or `trustHost: true` behind a proxy that sets the Host): the link's
 * origin must not come from a Host header a client chose. In development without them, links are
 * made for loopback hosts (`localhost`, `127.0.0.1`, `[::1]`) only.
 *
 * @example
 * ```ts
 * import Email from 'portcullis/providers/email'
 *
 * Email({
 *   async sendVerificationRequest({ identifier, url }) {
 *     await mailApi.send({ to: identifier, subject: 'Your sign-in link', text: `Sign in: ${url}` })
 *   },
 * })
 * ```
 * @see https://authjs.dev/getting-started/authentication/email
 */
import type { AuthIncomingRequest, Awaitable, Theme } from '../types.js'


/** What `sendVerificationRequest` receives. */
export interface SendVerificationRequestParams {
  /** The address to send to, as `normalizeIdentifier` returned it. */
  identifier: string
  /** The sign-in link: `<origin><basePath>/callback/<id>?callbackUrl=…&token=…&email=…`. */
  url: string
  /** When the link stops working. */
  expires: Date
  /** The provider, resolved (with `server` and `from` for Nodemailer). */
  provider: EmailProvider
  /** The token in the link (only its hash is stored). Never log it. */
  token: string
  /** The configured theme, for an e-mail that looks like the sign-in pages. */
  theme: Theme
  /** The sign-in request (Express's `req`). */
  request: AuthIncomingRequest
}

/** Options common to the e-mail providers. */
export interface EmailOptions {
  /** Provider id, used in URLs (`/signin/<id>`, `/callback/<id>`). Default `email` (`nodemailer` for Nodemailer). */
  id?: string | undefined
  /** Shown on the sign-in button ("Sign in with …"). Default `Email`. */
  name?: string | undefined
  /** Seconds a link stays valid. Default 86400 (24 hours). */
  maxAge?: number | undefined
  /**
   * Makes the token put in the link. Default: 32 random bytes, hex. Whatever you return is stored
   * hashed and compared by its hash; make it unguessable (at least 128 random bits).
   */
  generateVerificationToken?: (() => Awaitable<string>) | undefined
  /**
   * Turns what the user typed into the address to send to, or throws to refuse it (the user gets
   * the sign-in page with `error=EmailSignInError`). Default: Unicode NFKC, trimmed, lower-cased,
   * exactly one `@`, and no character that could add a second recipient or a header (commas,
   * quotes, angle brackets, parentheses, `:` `;` `\`, whitespace, control characters). A custom one
   * must keep that last guarantee: its result goes into the `To:` header.
   */
  normalizeIdentifier?: ((identifier: string) => string) | undefined
  /** Sends the link. */
  sendVerificationRequest?: ((params: SendVerificationRequestParams) => Awaitable<void>) | undefined
}

/** Options of `Email(...)`: `sendVerificationRequest` is required. */
export interface EmailUserConfig extends EmailOptions {
  sendVerificationRequest: (params: SendVerificationRequestParams) => Awaitable<void>
}

/** An e-mail provider as written in the config (what `Email()` and `Nodemailer()` return). */
export interface EmailConfig extends EmailOptions {
  id: string
  name: string
  type: 'email'
  /** Nodemailer: the SMTP server (URL or transport options), or `'console'` in development. */
  server?: unknown
  /** Nodemailer: the sender, e.g. `Example <no-reply@example.com>`. */
  from?: string | undefined
  [option: string]: unknown
}

/** An e-mail provider as Portcullis uses it: validated, defaults applied, frozen. */
export interface EmailProvider {
  readonly id: string
  readonly name: string
  readonly type: 'email'
  /** Seconds a link stays valid. */
  readonly maxAge: number
  readonly generateVerificationToken: () => Awaitable<string>
  readonly normalizeIdentifier: (identifier: string) => string
  readonly sendVerificationRequest: (params: SendVerificationRequestParams) => Awaitable<void>
  readonly server?: unknown
  readonly from?: string | undefined
  readonly [option: string]: unknown
}

/**
 * Creates an e-mail provider that sends its links with your `sendVerificationRequest`.
 *
 * @param config `sendVerificationRequest` plus the options above.
 * @example
 * ```ts
 * Email({ maxAge: 15 * 60, sendVerificationRequest: ({ identifier, url }) => queue.push({ to: identifier, url }) })
 * ```
 */
export default function Email(config: EmailUserConfig): EmailConfig {
  return { id: 'email', name: 'Email', ...config, type: 'email' }
}
