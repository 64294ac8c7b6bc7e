/**
 * GET /account/confirm `?callbackUrl`: the confirmation page. POST /account/confirm `{ csrfToken,
 * method, <its field>, callbackUrl }`: the password or second-factor code checked by the feature
 * that owns it, the session's record of its last confirmation renewed (session/confirmation.ts),
 * then back to `callbackUrl` (same-site, through the `redirect` callback). The mailed link's routes
 * are in confirm-link.ts.
 */
import { actionPath, assertCsrf, authUrl, issueCsrf, redirectTarget, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { hooksOf } from '../../../composition/index.js'
import { AuthError, InvalidRequestError, RateLimitedError, TwoFactorError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { recordConfirmation } from '../../../session/confirmation.js'
import { accountOf } from '../config.js'
import { offersConfirmLink } from '../confirm-link.js'
import { renderConfirmPage } from '../pages/confirm.js'
import { confirmationOrSignIn, roundTrips, SECOND_FACTOR, typedMethods } from './shared.js'

export const confirmPage: Action = async (ctx) => {
  const callbackUrl = await returnTarget(ctx)
  const asking = await confirmationOrSignIn(ctx, authUrl(ctx, `/account/confirm?${new URLSearchParams({ callbackUrl })}`))
  if ('response' in asking) return asking.response
  return confirmationPage(ctx, asking.confirmation.userId, callbackUrl, 200)
}

export const confirmAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const callbackUrl = await returnTarget(ctx)
  const asking = await confirmationOrSignIn(ctx, callbackUrl)
  if ('response' in asking) return asking.response
  const { userId } = asking.confirmation
  const method = stringValue(ctx.body.method)
  if (method === undefined || method.length > 64) throw new InvalidRequestError('POST /account/confirm needs the method confirmed with (password, two-factor).')
  try {
    if (!(await confirmWith(ctx, userId, method))) throw new InvalidRequestError(`POST /account/confirm: "${method}" is no way this account can confirm with.`)
  } catch (error) {
    const refusal = refusalOf(error)
    if (refusal === undefined) throw error
    return confirmationPage(ctx, userId, callbackUrl, error instanceof RateLimitedError ? 429 : 400, { error: refusal })
  }
  return { redirect: callbackUrl, cookies: await recordConfirmation(ctx, method) }
}

/** Asks the feature that owns `method`; the second factor through its own hooks. */
async function confirmWith(ctx: ActionContext, userId: string, method: string): Promise<boolean> {
  if (method === SECOND_FACTOR.method) {
    const code = stringValue(ctx.body[SECOND_FACTOR.field]) ?? ''
    for (const has of hooksOf(ctx.config, 'hasFurtherFactor')) {
      if (!(await has(ctx, userId))) continue
      for (const check of hooksOf(ctx.config, 'checkFurtherFactor')) await check(ctx, userId, code)
      return true
    }
    return false
  }
  for (const hook of hooksOf(ctx.config, 'confirmSignIn')) if (await hook(ctx, userId, method, ctx.body)) return true
  return false
}

/** What the page says of a refused confirmation; undefined for anything else. */
function refusalOf(error: unknown): string | undefined {
  // The password wing's refusal, known by its type (this wing does not import that one).
  if (error instanceof AuthError && error.type === 'PasswordPolicy' && (error as AuthError & { code?: unknown }).code === 'wrong_password') return 'That password is not right.'
  if (error instanceof TwoFactorError && error.code === 'invalid_code') return 'That code is not right, or was used already. Enter the next code your app shows.'
  if (error instanceof RateLimitedError) return 'Too many tries. Wait a while, then try again.'
  return error instanceof AuthError && error.type === 'InvalidRequest' ? error.message.replace(/^POST \/account\/confirm: /, '') : undefined
}

/** Where to go back to: the posted or asked `callbackUrl` (same-site), else the account page. */
export async function returnTarget(ctx: ActionContext): Promise<string> {
  const given = stringValue(ctx.body.callbackUrl) ?? ctx.query.get('callbackUrl') ?? undefined
  return given === undefined ? authUrl(ctx, '/account') : redirectTarget(ctx, given)
}

/** The confirmation page for `userId`, with what was wrong (`error`) or what happened (`notice`). */
export async function confirmationPage(ctx: ActionContext, userId: string, callbackUrl: string, status: number, messages: { error?: string; notice?: string } = {}): Promise<AuthResponse> {
  const csrf = issueCsrf(ctx)
  const html = renderConfirmPage({
    action: actionPath(ctx, '/account/confirm'),
    csrfToken: csrf.token,
    callbackUrl,
    methods: await typedMethods(ctx, userId),
    roundTrips: await roundTrips(ctx, userId, callbackUrl),
    mailLinkAction: (await offersConfirmLink(ctx, accountOf(ctx.config), userId)) ? actionPath(ctx, '/account/confirm/email') : undefined,
    ...messages,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies }
}
