/**
 * How `portcullis/providers/nodemailer` delivers a sign-in link: through nodemailer (an optional
 * peer dependency, imported on the first e-mail), or, with `server: 'console'`, printed to the
 * console for development. Loaded on the first e-mail sign-in only, so neither nodemailer nor this
 * module is loaded by an app that only reads sessions.
 *
 * @see https://nodemailer.com/smtp/
 */
import type { SendVerificationRequestParams } from '../providers/email.js'
import { renderVerificationEmail, type VerificationEmail } from './message.js'

/** The nodemailer calls used here (typed loosely: nodemailer is an optional peer). */
interface Transporter {
  sendMail(message: Record<string, unknown>): Promise<unknown>
}

// One transporter per provider: it is a pool of settings (and, with `pool: true`, of connections).
const transporters = new WeakMap<object, Promise<Transporter>>()

/**
 * Sends the sign-in e-mail of `params` with the provider's `server` and `from`.
 *
 * @throws Error when nodemailer is not installed, or the server refused or could not be reached.
 */
export async function sendVerificationEmail(params: SendVerificationRequestParams): Promise<void> {
  const { identifier, url, provider, theme } = params
  const message = renderVerificationEmail({ url, theme })
  await sendEmail({ server: provider.server, from: provider.from, key: provider }, identifier, message, params.expires)
}

/** Where a mail goes out: an SMTP server (URL or nodemailer options) or `'console'`, the sender, and the object its transporter is kept under. */
export interface MailRoute {
  server: unknown
  from: string | undefined
  key: object
}

/**
 * Sends one rendered mail to `to` through `route` (printed instead with `server: 'console'`).
 * @throws Error when nodemailer is not installed, or the server refused or could not be reached.
 */
export async function sendEmail(route: MailRoute, to: string, message: VerificationEmail, expires?: Date): Promise<void> {
  if (route.server === 'console') return printToConsole(to, message, expires)
  const transporter = await transporterOf(route)
  await transporter.sendMail({
    // An address object, not a string: nodemailer parses strings as address lists.
    to: { name: '', address: to },
    from: route.from,
    subject: message.subject,
    text: message.text,
    html: message.html,
  })
}

function transporterOf(route: MailRoute): Promise<Transporter> {
  let transporter = transporters.get(route.key)
  if (!transporter) {
    transporter = loadNodemailer().then((nodemailer) => nodemailer.createTransport(route.server))
    // A failed import is not cached: installing nodemailer fixes it without a restart.
    transporter.catch(() => transporters.delete(route.key))
    transporters.set(route.key, transporter)
  }
  return transporter
}

async function loadNodemailer(): Promise<{ createTransport(server: unknown): Transporter }> {
  let module: { default?: unknown; createTransport?: unknown }
  try {
    module = (await import('nodemailer')) as typeof module
  } catch (error) {
    throw new Error('The nodemailer provider needs the nodemailer package: npm install nodemailer', { cause: error })
  }
  const nodemailer = (typeof module.createTransport === 'function' ? module : module.default) as { createTransport(server: unknown): Transporter }
  return nodemailer
}

/** The development transport: the link on the console, not sent. */
function printToConsole(to: string, message: VerificationEmail, expires: Date | undefined): void {
  console.log(
    `[portcullis] Development e-mail transport (server: 'console'): not sent. To: ${JSON.stringify(to)}, subject ${JSON.stringify(message.subject)}${expires ? `, expires ${expires.toISOString()}` : ''}\n` +
      message.text.replace(/^/gm, '  '),
  )
}
