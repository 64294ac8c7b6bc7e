/**
 * The password provider's mails: finish signing up (verify the address), someone tried to sign up
 * with your address, reset your password. Rendered like the sign-in mail (the site's host and one
 * link; nothing the visitor typed), sent through the app's `sendMail` or the SMTP server of the
 * provider (or of the Nodemailer provider, or `AUTH_EMAIL_SERVER`).
 */
import type { ActionContext } from '../../actions/context.js'
import type { PasswordProvider } from './provider.js'
import { renderLinkEmail } from '../../mail/message.js'
import { sendEmail } from '../../mail/transport.js'
import type { PasswordMail } from '../../providers/password.js'

/** A verification mail's code, and whether the mail's link verifies too (`verifyBy` `'both'`) or only leads to the code's page. */
export interface MailedCode {
  code: string
  minutes: number
  withLink: boolean
}

/** What some mails carry besides their link. */
export interface MailExtras {
  /** `address-taken`: the link that sets a new password. */
  resetUrl?: string | undefined
  /** `verify-email`: the username asked for, which another account has, and where to choose another. */
  usernameTaken?: string | undefined
  usernameUrl?: string | undefined
  /** `verify-email` with `verifyBy` `'code'` or `'both'`: the code the mail shows. */
  code?: MailedCode | undefined
}

const NOTES: Record<PasswordMail['kind'], (host: string, extra: MailExtras) => { subject: string; heading: [string, string]; button: string; note: string[] }> = {
  'verify-email': (host, { usernameTaken, usernameUrl, code }) => ({
    subject: `Confirm your e-mail address for ${host}`,
    heading: ['Finish signing up to ', host],
    button: code && !code.withLink ? 'Open the page for the code' : 'Confirm my address',
    note: [
      ...(!code || code.withLink ? ['The link works once and confirms that this address is yours.'] : []),
      ...(code ? [`${code.withLink ? 'Or type this code' : 'Type this code'} on the page where you signed up: ${code.code}. It works once, for ${code.minutes} minutes, in that browser.`] : []),
      // Not the name itself: the mail says nothing a visitor typed (anyone may sign up with any address).
      ...(usernameTaken === undefined
        ? []
        : [`The username you asked for is taken (or looks too much like one that is): your account was created without a username. Once signed in, choose another here: ${usernameUrl ?? ''}`]),
      `If you did not sign up, you can ignore this e-mail: nothing happens without the ${code && !code.withLink ? 'code' : 'link'}.`,
    ],
  }),
  'address-taken': (host, { resetUrl }) => ({
    subject: `Someone tried to sign up to ${host} with your address`,
    heading: ['You already have an account on ', host],
    button: 'Sign in',
    note: [
      'Someone, perhaps you, tried to create an account with this address. It already has one, so nothing was changed: sign in as before.',
      `Forgot your password? This link sets a new one (it works once, for one hour unless the site says otherwise): ${resetUrl ?? ''}`,
      'If it was not you, ignore this e-mail.',
    ],
  }),
  'reset-password': (host) => ({
    subject: `Set a new password for ${host}`,
    heading: ['Set a new password for ', host],
    button: 'Choose a new password',
    note: ['The link works once, for one hour unless the site says otherwise. Setting a new password signs you out everywhere else.', 'If you did not ask for it, you can ignore this e-mail: your password stays as it is.'],
  }),
}

/**
 * Renders and sends one mail.
 * @throws whatever the transport or `sendMail` throws.
 */
export async function sendPasswordMail(ctx: ActionContext, provider: PasswordProvider, kind: PasswordMail['kind'], to: string, url: string, expires?: Date, extra: MailExtras = {}): Promise<void> {
  const host = new URL(url).host
  const content = NOTES[kind](host, extra)
  const message = renderLinkEmail({ url, theme: ctx.config.theme, ...content })
  const { mail } = provider.password
  const { code, ...rest } = extra
  const given = Object.fromEntries(Object.entries({ ...rest, code: code?.code }).filter(([, value]) => value !== undefined))
  if ('sendMail' in mail) return mail.sendMail({ kind, to, url, expires, ...given, ...message })
  await sendEmail({ server: mail.server, from: mail.from, key: mail }, to, message, expires)
}
