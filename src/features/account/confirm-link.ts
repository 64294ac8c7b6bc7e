/**
 * Confirming by a mailed link (the confirmation page's "Send me a link"), for users who sign in by
 * e-mail and have nothing to type: a link to the session's user's verified address, as strong as a
 * new e-mail sign-in and no stronger. Its token is single use, stored hashed in the verification-token
 * table under the user's id, works for fifteen minutes, and only in the browser that asked for it
 * (the `emailLink` cookie binds it, as the sign-in link's does) with the same user signed in. A
 * browser without the binding (a mail scanner, another device) uses nothing up.
 */
import { authUrl, type ActionContext } from '../../actions/context.js'
import { generateVerificationToken, hashVerificationToken, isBoundLink, linkBinding } from '../../mail/token.js'
import type { OutgoingCookie } from '../../session/cookies.js'
import { limitRequest } from '../../security/rate-limit.js'
import type { Adapter } from '../../types.js'
import type { ResolvedAccount } from './config.js'
import { AccountError } from './errors.js'
import { canSendAccountMail, sendAccountMail } from './mail.js'

/** How long the link works. */
export const CONFIRM_LINK_SECONDS = 15 * 60
/** How many links one user may ask for in a window of `CONFIRM_LINK_SECONDS`. */
export const CONFIRM_LINKS_PER_WINDOW = 3
/** The rate-limit bucket of the requests for a link. */
export const CONFIRM_LINK_BUCKET = 'account-confirm-link'

type LinkAdapter = Adapter & Required<Pick<Adapter, 'getUser' | 'createVerificationToken' | 'useVerificationToken'>>

const identifierOf = (userId: string) => `portcullis-confirm:${userId}`

/**
 * Whether the confirmation page offers `userId` a mailed link: e-mail sign-in is configured (the
 * mailbox is a way in already), the user's address is verified, and the account's mails can leave.
 */
export async function offersConfirmLink(ctx: ActionContext, account: ResolvedAccount, userId: string): Promise<boolean> {
  if (!ctx.config.providers.some((provider) => provider.type === 'email') || !canSendAccountMail(ctx, account)) return false
  const user = await ctx.config.adapter?.getUser?.(userId)
  return typeof user?.email === 'string' && user.email.length > 0 && user.emailVerified != null
}

/**
 * Mails `userId` the link that confirms this session, coming back to `callbackUrl`.
 * @returns The cookie that binds the link to this browser, or the seconds to wait when the user asked
 *   for too many (`CONFIRM_LINKS_PER_WINDOW` in `CONFIRM_LINK_SECONDS`).
 * @throws AccountError `invalid_link` when no link is offered to this user
 */
export async function sendConfirmLink(ctx: ActionContext, account: ResolvedAccount, userId: string, callbackUrl: string): Promise<{ cookies: OutgoingCookie[] } | { retryAfter: number }> {
  if (!(await offersConfirmLink(ctx, account, userId))) throw new AccountError('invalid_link', 'This account cannot confirm by a mailed link.')
  // Counted per user, whatever `rateLimit` says: each request sends a mail.
  const retryAfter = await limitRequest(ctx.config, CONFIRM_LINK_BUCKET, userId, { attempts: CONFIRM_LINKS_PER_WINDOW, windowSeconds: CONFIRM_LINK_SECONDS })
  if (retryAfter !== undefined) return { retryAfter }
  const adapter = ctx.config.adapter as LinkAdapter
  const user = await adapter.getUser(userId)
  const token = generateVerificationToken()
  const expires = new Date((ctx.now + CONFIRM_LINK_SECONDS) * 1000)
  await adapter.createVerificationToken({ identifier: identifierOf(userId), token: hashVerificationToken(token, ctx.config.secrets[0]!), expires })
  const host = new URL(ctx.origin).host
  await sendAccountMail(ctx, account, 'confirm-sign-in', user!.email!, {
    url: `${authUrl(ctx, '/account/confirm/email')}?${new URLSearchParams({ token, callbackUrl })}`,
    subject: `Confirm it is you on ${host}`,
    heading: ['Confirm it is you on ', host],
    button: 'Confirm',
    note: ['The link works once, for fifteen minutes, in the browser where you asked for it.', 'If you did not ask for it, someone signed in as you is trying to change your account: sign out everywhere.'],
  }, expires)
  const binding = ctx.cookieSet.cookies.emailLink
  return { cookies: [{ name: binding.name, value: linkBinding(token, ctx.config.secrets[0]!), options: { ...binding.options, maxAge: CONFIRM_LINK_SECONDS } }] }
}

/**
 * The link opened by `userId` signed in: its token used once, when this browser is the one that
 * asked for it (checked first: another browser uses nothing up).
 * @throws AccountError `invalid_link` (another browser, another user, used, expired, altered)
 */
export async function useConfirmLink(ctx: ActionContext, userId: string, token: string): Promise<void> {
  const refused = () => new AccountError('invalid_link', 'This link was used already, has expired, or works only in the browser where it was asked for, with the same user signed in.')
  if (token.length === 0 || token.length > 128 || !isBoundLink(ctx.requestCookies[ctx.cookieSet.cookies.emailLink.name], token, ctx.config.secrets)) throw refused()
  const adapter = ctx.config.adapter as LinkAdapter
  for (const secret of ctx.config.secrets) {
    const used = await adapter.useVerificationToken({ identifier: identifierOf(userId), token: hashVerificationToken(token, secret) })
    if (!used) continue
    if (used.expires.getTime() <= ctx.now * 1000) break
    return
  }
  throw refused()
}

/** The cookie that ends the link's binding in this browser. */
export function clearConfirmLink(ctx: ActionContext): OutgoingCookie[] {
  const binding = ctx.cookieSet.cookies.emailLink
  return [{ name: binding.name, value: '', options: { ...binding.options, maxAge: 0 } }]
}
