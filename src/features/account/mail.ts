/**
 * The account's mails: the notice that an account was deleted, to its address; a change of address's
 * link, its notice to the old address, and a taken address's notice; the link that confirms a session. Rendered like the
 * sign-in mail (the site's host and one link, to the site; nothing the visitor typed), sent through
 * `account.sendMail`, `account.server`, or the server of a configured e-mail provider.
 */
import type { ActionContext } from '../../actions/context.js'
import { homeUrl } from '../../actions/home.js'
import { describeError } from '../../events.js'
import { renderLinkEmail } from '../../mail/message.js'
import { sendEmail } from '../../mail/transport.js'
import type { ResolvedAccount } from './config.js'
import type { AccountMail } from './types.js'

/** What an account mail needs of its request: the config, and the site's origin for its link (the prune has no request: the `url` option's). */
export type MailContext = Pick<ActionContext, 'config' | 'origin'>

/** What one account mail says: its subject, heading, button (to `url`) and notes. */
export interface AccountMailContent {
  url: string
  subject: string
  heading: [string, string]
  button: string
  note: string[]
}

/**
 * Renders and sends one account mail to `to`. A failure is logged, never thrown: the step it tells
 * of is done by then (an account deleted, an address changed), or is answered the same whether the
 * mail left or not (a taken address).
 */
export async function sendAccountMail(ctx: MailContext, account: ResolvedAccount, kind: AccountMail['kind'], to: string, content: AccountMailContent, expires?: Date): Promise<void> {
  const message = renderLinkEmail({ theme: ctx.config.theme, ...content })
  try {
    if (account.sendMail) return void (await account.sendMail({ kind, to, ...message }))
    const route = mailRoute(ctx, account)
    if (!route) {
      ctx.config.logger.warn('AccountMailNotSent', `The account's ${kind} mail was not sent: no mail server. Set account.server and account.from, account.sendMail, or configure a Nodemailer provider.`)
      return
    }
    await sendEmail(route, to, message, expires)
  } catch (error) {
    ctx.config.logger.error('AccountMailFailed', `The account's ${kind} mail could not be sent.`, describeError(error))
  }
}

/** Mails `to` that their account is gone. */
export async function mailAccountDeleted(ctx: MailContext, account: ResolvedAccount, to: string): Promise<void> {
  const url = homeUrl(ctx)
  const host = new URL(url).host
  await sendAccountMail(ctx, account, 'account-deleted', to, {
    url,
    subject: `Your account on ${host} was deleted`,
    heading: ['Your account was deleted on ', host],
    button: `Go to ${host}`,
    note: [
      'You (or someone signed in as you, who had just confirmed your password or sign-in) deleted your account. Your sign-in methods and sessions are gone, and every device was signed out.',
      'If it was not you, contact the site: someone had access to your account.',
    ],
  })
}

/** Mails `to` that their account will be deleted at `deleteAt` unless they sign in before. */
export async function mailDeletionScheduled(ctx: MailContext, account: ResolvedAccount, to: string, deleteAt: Date): Promise<void> {
  const url = homeUrl(ctx)
  const host = new URL(url).host
  const when = deleteAt.toUTCString()
  await sendAccountMail(ctx, account, 'account-deletion-scheduled', to, {
    url,
    subject: `Your account on ${host} will be deleted on ${when}`,
    heading: ['Your account will be deleted on ', host],
    button: `Go to ${host}`,
    note: [
      `You (or someone signed in as you, who had just confirmed your password or sign-in) deleted your account. Every device was signed out. It will be deleted for good on ${when}.`,
      'Sign in before then to keep it: everything stays as it was. If it was not you, sign in now, then change your password.',
    ],
  })
}

/** Mails `to` that a sign-in kept their account from its deletion. */
export async function mailAccountRestored(ctx: MailContext, account: ResolvedAccount, to: string): Promise<void> {
  const url = homeUrl(ctx)
  const host = new URL(url).host
  await sendAccountMail(ctx, account, 'account-restored', to, {
    url,
    subject: `Your account on ${host} was restored`,
    heading: ['Your account was restored on ', host],
    button: `Go to ${host}`,
    note: ['Someone signed in to your account during its deletion grace period, so it will not be deleted. If it was not you, contact the site: someone has access to your account.'],
  })
}

/** Whether the account's mails can leave: `account.sendMail`, `account.server`, or a Nodemailer provider's server. */
export function canSendAccountMail(ctx: ActionContext, account: ResolvedAccount): boolean {
  return account.sendMail !== undefined || mailRoute(ctx, account) !== undefined
}

/** The SMTP server and sender: the option's, else a configured e-mail provider's. */
function mailRoute(ctx: MailContext, account: ResolvedAccount): { server: unknown; from: string | undefined; key: object } | undefined {
  if (account.server !== undefined) return { server: account.server, from: account.from, key: account }
  const provider = ctx.config.providers.find((candidate) => candidate.type === 'email' && 'server' in candidate && (candidate as { server?: unknown }).server !== undefined) as
    | { server: unknown; from?: string }
    | undefined
  return provider ? { server: provider.server, from: account.from ?? provider.from, key: provider } : undefined
}
