/**
 * Changing the e-mail address (`changeEmail()`, POST /account/email): a link mailed to the new
 * address (its token single use, stored hashed in the verification-token table, an hour long),
 * which changes the address only when opened by the same user signed in, or a six-digit code
 * (`account.emailChangeBy`; mail/code.ts: hashed, bound to the browser that asked and to the user and
 * the address, single use, five tries, fifteen minutes), typed there; then a notice to the old
 * address with a link that undoes the change for a week. The address is unique: of two users
 * claiming one address at once, the database's unique key lets one win, and the other is told the
 * address is taken. A taken address is never revealed at the request: its owner is mailed instead.
 */
import { randomBytes } from 'node:crypto'
import { authUrl, type ActionContext } from '../../actions/context.js'
import { isUniqueViolation } from '../../adapters/knex/rows.js'
import { AccountError } from './errors.js'
import { emitEvent } from '../../events.js'
import { renderLinkEmail } from '../../mail/message.js'
import { normalizeEmailAddress } from '../../mail/normalize.js'
import { bindingCookie, checkCode, newCode, nonceOf, storeCode } from '../../mail/code.js'
import { generateVerificationToken, hashVerificationToken } from '../../mail/token.js'
import type { OutgoingCookie } from '../../session/cookies.js'
import { revokeOwnSessions } from '../../session/devices.js'
import { storedUserWithEmail } from '../../sign-in/users.js'
import type { Adapter, AdapterUser } from '../../types.js'
import type { ResolvedAccount } from './config.js'
import { sendAccountMail } from './mail.js'

/** How long the new address's link works. */
export const CHANGE_LINK_SECONDS = 60 * 60
/** How long the new address's code works (`account.emailChangeBy` `'code'` or `'both'`). */
export const CHANGE_CODE_SECONDS = 15 * 60
/** How long the old address's undo link works. */
export const UNDO_LINK_SECONDS = 7 * 24 * 60 * 60

type ChangeAdapter = Adapter & Required<Pick<Adapter, 'getUser' | 'getUserByEmail' | 'updateUser' | 'createVerificationToken' | 'useVerificationToken'>>

const changeIdentifier = (userId: string, email: string) => `portcullis-email-change:${userId}:${email}`
/** What a change's code proves: this user asked for this address (both are in the code's HMAC). */
const codeSubject = (userId: string, email: string) => `${userId}\n${email}`
const undoIdentifier = (userId: string, email: string) => `portcullis-email-undo:${userId}:${email}`

/**
 * Mails the link (or the code, or both: `account.emailChangeBy`) that changes `userId`'s address to
 * `newEmail` (or, when the address is another user's, a notice to that address instead: the answer
 * is the same).
 * @returns The address, normalised, and the cookie that binds a code to this browser (with codes on;
 *   a taken address gets one too, bound to nothing, so the answers look alike).
 * @throws AccountError `invalid_email`, `same_email`; AdapterError
 */
export async function requestEmailChange(ctx: ActionContext, account: ResolvedAccount, userId: string, input: unknown): Promise<{ email: string; cookies: OutgoingCookie[] }> {
  const adapter = ctx.config.adapter as ChangeAdapter
  let email: string
  try {
    email = normalizeEmailAddress(input)
  } catch {
    throw new AccountError('invalid_email', 'Enter a valid e-mail address.')
  }
  const user = await adapter.getUser(userId)
  if (!user) throw new AccountError('user_not_found', 'The signed-in user is not in the database any more.')
  if (user.email?.toLowerCase() === email) throw new AccountError('same_email', 'That is your address already.')
  const host = new URL(ctx.origin).host
  if (await storedUserWithEmail(adapter, email)) {
    await sendAccountMail(ctx, account, 'address-taken', email, {
      url: authUrl(ctx, '/signin'),
      subject: `Someone tried to move an account on ${host} to your address`,
      heading: ['Your address already has an account on ', host],
      button: 'Sign in',
      note: ['Someone signed in to another account asked to use this address. It is yours already, so nothing was changed.', 'If it was not you, you can ignore this e-mail.'],
    })
    return { email, cookies: account.emailChangeBy === 'link' ? [] : [codeCookie(ctx, randomBytes(32).toString('base64url'))] }
  }
  const withLink = account.emailChangeBy !== 'code'
  const withCode = account.emailChangeBy !== 'link'
  const linkExpires = new Date((ctx.now + CHANGE_LINK_SECONDS) * 1000)
  let url = authUrl(ctx, '/account')
  if (withLink) {
    const token = generateVerificationToken()
    await adapter.createVerificationToken({ identifier: changeIdentifier(userId, email), token: hashVerificationToken(token, ctx.config.secrets[0]!), expires: linkExpires })
    url = `${authUrl(ctx, '/account/email/verify')}?${new URLSearchParams({ token, email })}`
  }
  const code = withCode ? newCode() : undefined
  const codeExpires = new Date((ctx.now + CHANGE_CODE_SECONDS) * 1000)
  const stored = code === undefined ? undefined : await storeCode(adapter, ctx.config.secrets[0]!, codeSubject(userId, email), code, codeExpires, 'email-change-code')
  const note = [
    ...(withLink ? ['The link works once, for one hour, in a browser where you are signed in.'] : []),
    ...(code === undefined ? [] : [`${withLink ? 'Or type this code' : 'Type this code'} on the page where you asked for the change: ${code}. It works once, for ${CHANGE_CODE_SECONDS / 60} minutes, in that browser.`]),
    `If you did not ask for it, you can ignore this e-mail: nothing changes without the ${withLink ? 'link' : 'code'}.`,
  ]
  await sendAccountMail(ctx, account, 'change-email', email, {
    url,
    subject: `Confirm your new e-mail address for ${host}`,
    heading: ['Confirm your new address for ', host],
    button: withLink ? 'Use this address' : `Go to ${host}`,
    note,
  }, withLink ? linkExpires : codeExpires)
  return { email, cookies: stored ? [codeCookie(ctx, stored.nonce)] : [] }
}

/** The cookie binding a change's code to this browser. */
function codeCookie(ctx: ActionContext, nonce: string): OutgoingCookie {
  const cookie = ctx.cookieSet.cookies.emailChangeCode
  return { name: cookie.name, value: bindingCookie(nonce), options: { ...cookie.options, maxAge: CHANGE_CODE_SECONDS } }
}

/** The cookie that forgets a change's code in this browser. */
export function clearedCodeCookie(ctx: ActionContext): OutgoingCookie {
  const cookie = ctx.cookieSet.cookies.emailChangeCode
  return { name: cookie.name, value: '', options: { ...cookie.options, maxAge: 0 } }
}

/**
 * The new address's code, typed by `owner` signed in, in the browser that asked (its cookie's
 * nonce): one of its five tries used; the right one makes the change as the link does.
 * @returns The user as changed.
 * @throws AccountError `wrong_code` (tries left, in the message), `invalid_code` (void, expired, used,
 *   another browser's, another user's or address's), `email_taken`; AdapterError
 */
export async function applyEmailChangeCode(ctx: ActionContext, account: ResolvedAccount, owner: { userId: string; sessionId: string | undefined }, email: string, code: string): Promise<AdapterUser> {
  const adapter = ctx.config.adapter as ChangeAdapter
  const nonce = nonceOf(ctx.requestCookies[ctx.cookieSet.cookies.emailChangeCode.name])
  const invalid = new AccountError('invalid_code', 'This code was used already, has expired, is void after five wrong tries, or was asked for in another browser or for another address.')
  if (!nonce) throw invalid
  const check = await checkCode(adapter, ctx.config.secrets, nonce, codeSubject(owner.userId, email), code, ctx.now * 1000, 'email-change-code')
  if (check.outcome === 'wrong') throw new AccountError('wrong_code', `That code is not right. ${check.triesLeft === 1 ? '1 try' : `${check.triesLeft} tries`} left.`)
  if (check.outcome !== 'right') throw invalid
  const user = await adapter.getUser(owner.userId)
  if (!user) throw new AccountError('user_not_found', 'The signed-in user is not in the database any more.')
  return completeEmailChange(ctx, account, owner, user, email)
}

/**
 * The new address's link, opened by `userId` signed in: the token used once, the address changed
 * and verified, the old address told (with its undo link), the user's other sessions ended unless
 * `account.emailChange.keepOtherSessions`.
 * @returns The user as changed.
 * @throws AccountError `invalid_link` (used, expired, altered, or another user's), `email_taken` (another user won the address); AdapterError
 */
export async function applyEmailChange(ctx: ActionContext, account: ResolvedAccount, owner: { userId: string; sessionId: string | undefined }, token: string, email: string): Promise<AdapterUser> {
  const adapter = ctx.config.adapter as ChangeAdapter
  const user = await adapter.getUser(owner.userId)
  if (!user) throw new AccountError('user_not_found', 'The signed-in user is not in the database any more.')
  await useToken(ctx, adapter, changeIdentifier(owner.userId, email), token)
  return completeEmailChange(ctx, account, owner, user, email)
}

/** The change, once its link or code is used: the address set and verified, the app told, the other sessions ended, the old address told. */
async function completeEmailChange(ctx: ActionContext, account: ResolvedAccount, owner: { userId: string; sessionId: string | undefined }, user: AdapterUser, email: string): Promise<AdapterUser> {
  const adapter = ctx.config.adapter as ChangeAdapter
  const changed = await claimAddress(adapter, user, email, new Date(ctx.now * 1000))
  await emitEvent(ctx.config, 'updateUser', { user: changed })
  await emitEvent(ctx.config, 'emailChanged', { user: changed, previousEmail: user.email ?? null })
  if (!account.keepOtherSessions) await revokeOwnSessions(ctx, owner, { except: owner.sessionId ?? '' }, 'emailChanged')
  if (user.email) await mailUndo(ctx, account, adapter, user, email)
  return changed
}

/**
 * The old address's undo link (a POST from its page): the address put back, verified, and every
 * session of the user ended (whoever changed it may hold one).
 * @throws AccountError `invalid_link`, `email_taken`; AdapterError
 */
export async function undoEmailChange(ctx: ActionContext, userId: string, token: string, email: string): Promise<AdapterUser> {
  const adapter = ctx.config.adapter as ChangeAdapter
  await useToken(ctx, adapter, undoIdentifier(userId, email), token)
  const user = await adapter.getUser(userId)
  if (!user) throw new AccountError('invalid_link', 'The account of this link is gone.')
  const restored = await claimAddress(adapter, user, email, new Date(ctx.now * 1000))
  await emitEvent(ctx.config, 'updateUser', { user: restored })
  await emitEvent(ctx.config, 'emailChanged', { user: restored, previousEmail: user.email ?? null })
  await revokeOwnSessions(ctx, { userId, sessionId: undefined }, {}, 'emailChanged', { everyToken: true })
  return restored
}

/** Uses the token of `identifier` once. @throws AccountError `invalid_link` */
async function useToken(ctx: ActionContext, adapter: ChangeAdapter, identifier: string, token: string): Promise<void> {
  for (const secret of ctx.config.secrets) {
    const used = await adapter.useVerificationToken({ identifier, token: hashVerificationToken(token, secret) })
    if (!used) continue
    if (used.expires.getTime() <= ctx.now * 1000) break
    return
  }
  throw new AccountError('invalid_link', 'This link was used already, has expired, or is not for the account signed in.')
}

/**
 * Sets `user`'s address to `email`, verified. The users table's unique key decides a race: the
 * loser's update fails, and the address, read again, is another user's.
 * @throws AccountError `email_taken`
 */
async function claimAddress(adapter: ChangeAdapter, user: AdapterUser, email: string, verifiedAt: Date): Promise<AdapterUser> {
  const taken = new AccountError('email_taken', 'That address is used by another account now.')
  const holder = await storedUserWithEmail(adapter, email)
  if (holder && holder.id !== user.id) throw taken
  try {
    return await adapter.updateUser({ id: user.id, email, emailVerified: verifiedAt })
  } catch (error) {
    const winner = await storedUserWithEmail(adapter, email)
    if (winner && winner.id !== user.id) throw taken
    // MySQL's collations may refuse an address that differs from another only by accents: also taken.
    if (isUniqueViolation(error)) throw taken
    throw error
  }
}

async function mailUndo(ctx: ActionContext, account: ResolvedAccount, adapter: ChangeAdapter, user: AdapterUser, newEmail: string): Promise<void> {
  const oldEmail = user.email!
  const token = generateVerificationToken()
  const expires = new Date((ctx.now + UNDO_LINK_SECONDS) * 1000)
  await adapter.createVerificationToken({ identifier: undoIdentifier(user.id, oldEmail), token: hashVerificationToken(token, ctx.config.secrets[0]!), expires })
  const host = new URL(ctx.origin).host
  const url = `${authUrl(ctx, '/account/email/undo')}?${new URLSearchParams({ token, email: oldEmail, user: user.id })}`
  await sendAccountMail(ctx, account, 'email-changed', oldEmail, {
    url,
    subject: `Your e-mail address on ${host} was changed`,
    heading: ['Your address was changed on ', host],
    button: 'This was not me: undo it',
    note: [`Your account now uses ${newEmail}. If that was you, there is nothing to do.`, 'If it was not you, the link puts this address back and signs everyone out, for seven days. Then set a new password.'],
  }, expires)
}
