/**
 * The change of e-mail address: POST /account/email `{ csrfToken, email }` (after a recent
 * sign-in) mails the new address its link; GET /account/email/verify `?token&email`, opened by the
 * same user signed in, changes the address (signed out: to sign in first, then back here; another
 * user's browser: refused, the token untouched); POST /account/email/code, the code typed instead
 * (`account.emailChangeBy`); GET /account/email/undo shows the old address's
 * undo button, whose CSRF-checked POST puts the address back and signs everyone out.
 */
import { assertCsrf, authUrl, issueCsrf, actionPath, pageUrl, stringValue, type Action } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { sessionOwner } from '../../../session/devices.js'
import { accountOf } from '../config.js'
import { AccountError } from '../errors.js'
import { applyEmailChange, applyEmailChangeCode, clearedCodeCookie, requestEmailChange, undoEmailChange } from '../email-change.js'
import { CODE_DIGITS } from '../../../mail/code.js'
import { normalizeEmailAddress } from '../../../mail/normalize.js'
import { limitSignInAttempt } from '../../../security/rate-limit.js'
import { renderUndoPage } from '../pages/undo.js'
import { renderAccount } from './page.js'
import { recentOrConfirm } from './shared.js'

const REFUSALS: Partial<Record<AccountError['code'], string>> = {
  invalid_email: 'Enter a valid e-mail address.',
  same_email: 'That is your address already.',
  invalid_link: 'This link was used already, has expired, or is not for the account signed in.',
  invalid_code: 'This code was used already, has expired, is void after five wrong tries, or was asked for in another browser or for another address. Ask for a new one.',
  email_taken: 'That address is used by another account now.',
}

export const requestEmailChangeAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const account = accountOf(ctx.config)
  const asking = await recentOrConfirm(ctx, account.recentSignInMaxAge, 'POST /account/email')
  if ('response' in asking) return asking.response
  const { confirmation } = asking
  let requested: Awaited<ReturnType<typeof requestEmailChange>>
  try {
    requested = await requestEmailChange(ctx, account, confirmation.userId, ctx.body.email)
  } catch (error) {
    const refusal = error instanceof AccountError ? REFUSALS[error.code] : undefined
    if (refusal === undefined) throw error
    return renderAccount(ctx, confirmation.userId, 400, { error: refusal })
  }
  const notice = NOTICES[account.emailChangeBy]
  const page = await renderAccount(ctx, confirmation.userId, 200, { notice, ...(account.emailChangeBy !== 'link' && { codeFor: requested.email }) })
  return { ...page, cookies: [...(page.cookies ?? []), ...requested.cookies] }
}

const NOTICES = {
  link: 'Check the inbox of the new address: the link there makes the change.',
  code: 'Check the inbox of the new address, and type the code from it here.',
  both: 'Check the inbox of the new address: type the code from it here, or open its link.',
} as const

/**
 * POST /account/email/code `{ csrfToken, email, code }`: the change's code, typed by the user signed
 * in, in the browser that asked (its cookie). Counted against the client and the address as a
 * sign-in attempt (a right code clears it); a wrong code shows the form again with the tries left.
 */
export const emailChangeCodeAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const account = accountOf(ctx.config)
  const owner = await sessionOwner(ctx)
  if (!owner) return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/account') }) }
  let email: string
  try {
    email = normalizeEmailAddress(ctx.body.email)
  } catch {
    return renderAccount(ctx, owner.userId, 400, { error: REFUSALS.invalid_email })
  }
  const attempt = await limitSignInAttempt(ctx, { id: 'account-email-code', type: 'credentials' }, email)
  // Spaces and dashes a mail client or the user put in are no part of the code.
  const code = (stringValue(ctx.body.code) ?? '').replace(/[\s-]/g, '')
  if (!new RegExp(`^\\d{${CODE_DIGITS}}$`).test(code)) return renderAccount(ctx, owner.userId, 400, { error: `Enter the ${CODE_DIGITS} digits of the code.`, codeFor: email })
  try {
    await applyEmailChangeCode(ctx, account, owner, email, code)
  } catch (error) {
    if (error instanceof AccountError && error.code === 'wrong_code') return renderAccount(ctx, owner.userId, 400, { error: error.message, codeFor: email })
    const refusal = error instanceof AccountError ? REFUSALS[error.code] : undefined
    if (refusal === undefined) throw error
    const page = await renderAccount(ctx, owner.userId, 400, { error: refusal })
    return (error as AccountError).code === 'invalid_code' ? { ...page, cookies: [...(page.cookies ?? []), clearedCodeCookie(ctx)] } : page
  }
  await attempt.succeeded()
  const page = await renderAccount(ctx, owner.userId, 200, { notice: `Your address is ${email} now.` })
  return { ...page, cookies: [...(page.cookies ?? []), clearedCodeCookie(ctx)] }
}

export const verifyEmailChange: Action = async (ctx) => {
  const account = accountOf(ctx.config)
  const token = ctx.query.get('token') ?? ''
  const email = (ctx.query.get('email') ?? '').toLowerCase()
  const owner = await sessionOwner(ctx)
  if (!owner) return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: `${authUrl(ctx, '/account/email/verify')}?${new URLSearchParams({ token, email })}` }) }
  try {
    if (token.length === 0 || token.length > 128 || email.length === 0 || email.length > 320) throw new AccountError('invalid_link', 'The link is not whole.')
    await applyEmailChange(ctx, account, owner, token, email)
  } catch (error) {
    const refusal = error instanceof AccountError ? REFUSALS[error.code] : undefined
    if (refusal === undefined) throw error
    return renderAccount(ctx, owner.userId, 400, { error: refusal })
  }
  return renderAccount(ctx, owner.userId, 200, { notice: `Your address is ${email} now.` })
}

export const undoEmailChangePage: Action = async (ctx) => {
  const csrf = issueCsrf(ctx)
  const html = renderUndoPage({
    action: actionPath(ctx, '/account/email/undo'),
    csrfToken: csrf.token,
    token: ctx.query.get('token') ?? '',
    email: ctx.query.get('email') ?? '',
    user: ctx.query.get('user') ?? '',
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { html, cookies: csrf.cookies }
}

export const undoEmailChangeAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const token = stringValue(ctx.body.token) ?? ''
  const email = (stringValue(ctx.body.email) ?? '').toLowerCase()
  const user = stringValue(ctx.body.user) ?? ''
  const csrf = issueCsrf(ctx)
  const page = (message: string, status: number) => ({
    status,
    html: renderUndoPage({ action: actionPath(ctx, '/account/email/undo'), csrfToken: csrf.token, token, email, user, done: message, theme: ctx.config.theme, homeUrl: homeUrl(ctx) }),
    cookies: csrf.cookies,
  })
  try {
    if (!token || token.length > 128 || !email || email.length > 320 || !user || user.length > 255) throw new AccountError('invalid_link', 'The link is not whole.')
    await undoEmailChange(ctx, user, token, email)
  } catch (error) {
    const refusal = error instanceof AccountError ? REFUSALS[error.code] : undefined
    if (refusal === undefined) throw error
    return page(refusal, 400)
  }
  return page(`Your address is ${email} again, and every device was signed out. Sign in, then set a new password.`, 200)
}
