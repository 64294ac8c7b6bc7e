/**
 * E-mail sign-in ("magic links") sent over SMTP with nodemailer. Give the SMTP server and the
 * sender, in the options or the environment (`AUTH_EMAIL_SERVER`, `AUTH_EMAIL_FROM`). nodemailer
 * is an optional peer dependency (`npm install nodemailer`), imported on the first e-mail.
 *
 * For development, `server: 'console'` prints the link to the console instead of sending it
 * (refused when `NODE_ENV=production`).
 *
 * Like every e-mail provider it needs an adapter (for the tokens) and, in production, a trusted site
 * URL (`AUTH_URL`, or `trustHost: true` behind a proxy that sets the Host).
 *
 * @example
 * ```ts
 * import Nodemailer from 'portcullis/providers/nodemailer'
 *
 * // AUTH_EMAIL_SERVER=smtps://user:password@smtp.example.com:465
 * // AUTH_EMAIL_FROM="Example <no-reply@example.com>"
 * Portcullis({ adapter: KnexAdapter(db), providers: [Nodemailer] })
 *
 * // or explicitly:
 * Nodemailer({ server: { host: 'smtp.example.com', port: 587, auth: { user, pass } }, from: 'no-reply@example.com' })
 * ```
 * @see https://nodemailer.com/smtp/ SMTP transport options and URLs
 */
import type { EmailConfig, EmailOptions, SendVerificationRequestParams } from './email.js'

/** Options of `Nodemailer(...)`. */
export interface NodemailerUserConfig extends EmailOptions {
  /**
   * The SMTP server: a URL (`smtp://user:pass@host:587`, `smtps://…:465`), nodemailer transport
   * options (`{ host, port, secure, auth }`), or `'console'` to print links (development only).
   * Default: `AUTH_EMAIL_SERVER`.
   */
  server?: string | Record<string, unknown> | undefined
  /** The sender: `no-reply@example.com` or `Example <no-reply@example.com>`. Default: `AUTH_EMAIL_FROM`. */
  from?: string | undefined
}

/**
 * The default `sendVerificationRequest` of Nodemailer providers: the themed e-mail (HTML and text)
 * with the link, sent to the address through `server`.
 */
export async function sendVerificationRequest(params: SendVerificationRequestParams): Promise<void> {
  const { sendVerificationEmail } = await import('../mail/transport.js')
  await sendVerificationEmail(params)
}

/**
 * Creates a Nodemailer e-mail provider (id `nodemailer`, shown as "Email").
 *
 * @param config `server` and `from` (else from the environment), and the e-mail options.
 * @example
 * ```ts
 * Nodemailer({ server: process.env.SMTP_URL, from: 'Example <no-reply@example.com>', maxAge: 60 * 60 })
 * ```
 */
export default function Nodemailer(config: NodemailerUserConfig = {}): EmailConfig {
  return { id: 'nodemailer', name: 'Email', sendVerificationRequest, ...config, type: 'email' }
}
