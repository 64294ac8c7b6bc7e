/**
 * The signed-in user's second-factor settings (src/features/two-factor/pages/two-factor.ts):
 * - GET /two-factor/setup: not enrolled, a pending enrolment (kept across reloads, so a scanned
 *   code stays good) with its QR code and key; enrolled, how many recovery codes are left, and the
 *   forms below. Not a page HEAD runs: it may store a pending secret.
 * - POST /two-factor/setup `{ code }`: confirms the enrolment; the recovery codes, shown once.
 * - POST /two-factor/recovery-codes `{ code }`: ten new recovery codes, shown once.
 * - POST /two-factor/disable `{ code }` (or a recovery code): turns it off, then goes on.
 * Each POST is CSRF-checked; a wrong code comes back on the same page. With the `account` option,
 * enrolling (the page that would make a secret, and its POST), new recovery codes and turning it off
 * need a recent sign-in (docs/account.md): a stale session goes to confirm, and back here. `?callbackUrl=` (same-origin,
 * through the `redirect` callback) is where "Done" and "Not now" lead.
 */
import type { AuthResponse } from '../../../http/respond.js'
import { renderTwoFactorSetupPage, type TwoFactorSetupPageProps } from '../pages/two-factor.js'
import type { AdapterUser } from '../../../types.js'
import { assertCsrf, authUrl, issueCsrf, pageUrl, redirectTarget, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { assertTwoFactor, codeRefusal, loadFactor, signedInUser } from './shared.js'
import { homeUrl } from '../../../actions/home.js'
import { recentSignInRefusal } from '../../../actions/sensitive.js'

export const twoFactorSetupPage: Action = async (ctx) => {
  const user = await settingsUser(ctx)
  if (!user) return signInFirst(ctx)
  const factor = await loadFactor()
  const enrolment = await factor.enrolmentOf(ctx, user.id)
  if (enrolment?.enabledAt) return page(ctx, 200, { state: 'enrolled', recoveryCodesLeft: enrolment.recoveryCodes })
  // Enrolling adds a factor: confirm first (with `account`), before a secret is made to scan.
  const stale = await recentSignInRefusal(ctx, 'GET /two-factor/setup', setupUrl(ctx))
  if (stale) return stale
  const { qrCode, secret } = await factor.startEnrolment(ctx, user, { reuse: true })
  return page(ctx, 200, { state: 'enrol', qrCode, secret })
}

export const twoFactorSetupAction: Action = signedInPost('POST /two-factor/setup', async (ctx, user) => {
  const factor = await loadFactor()
  try {
    return await page(ctx, 200, { state: 'codes', recoveryCodes: await factor.confirmEnrolment(ctx, user.id, ctx.body.code) })
  } catch (error) {
    const refusal = codeRefusal(error)
    if (refusal === undefined) throw error
    const { qrCode, secret } = await factor.startEnrolment(ctx, user, { reuse: true })
    return page(ctx, 400, { state: 'enrol', qrCode, secret, error: refusal })
  }
})

export const recoveryCodesAction: Action = signedInPost('POST /two-factor/recovery-codes', async (ctx, user) => {
  try {
    return await page(ctx, 200, { state: 'codes', recoveryCodes: await (await loadFactor()).regenerateRecoveryCodes(ctx, user.id, ctx.body.code) })
  } catch (error) {
    return enrolledAgain(ctx, user, error)
  }
})

export const disableTwoFactorAction: Action = signedInPost('POST /two-factor/disable', async (ctx, user) => {
  try {
    await (await loadFactor()).disableTwoFactor(ctx, user.id, ctx.body.code)
  } catch (error) {
    return enrolledAgain(ctx, user, error)
  }
  return { redirect: await next(ctx) }
})

/**
 * A settings form's POST: CSRF-checked, for the signed-in user (signed out: the sign-in page first),
 * and, with the `account` option, after a recent sign-in (else to confirm, and back to the settings
 * page): each one adds, replaces or removes a factor. The code each form asks is checked after that.
 */
function signedInPost(what: string, handle: (ctx: ActionContext, user: AdapterUser) => Promise<AuthResponse>): Action {
  return async (ctx) => {
    assertCsrf(ctx)
    const user = await settingsUser(ctx)
    if (!user) return signInFirst(ctx)
    return (await recentSignInRefusal(ctx, what, setupUrl(ctx))) ?? handle(ctx, user)
  }
}

/** The settings page, keeping its `callbackUrl`: where a confirmation comes back to. */
function setupUrl(ctx: ActionContext): string {
  const callbackUrl = stringValue(ctx.body.callbackUrl) ?? ctx.query.get('callbackUrl') ?? undefined
  return authUrl(ctx, `/two-factor/setup${callbackUrl ? `?${new URLSearchParams({ callbackUrl })}` : ''}`)
}

/** The settings page again with what was wrong with the code; any other error goes on. */
async function enrolledAgain(ctx: ActionContext, user: AdapterUser, error: unknown): Promise<AuthResponse> {
  const refusal = codeRefusal(error)
  if (refusal === undefined) throw error
  const enrolment = await (await loadFactor()).enrolmentOf(ctx, user.id)
  return page(ctx, 400, { state: 'enrolled', recoveryCodesLeft: enrolment?.recoveryCodes ?? 0, error: refusal })
}

/** The signed-in user, or null; the routes exist only with `twoFactor`. */
async function settingsUser(ctx: ActionContext): Promise<AdapterUser | null> {
  assertTwoFactor(ctx.config)
  return signedInUser(ctx)
}

function signInFirst(ctx: ActionContext): AuthResponse {
  return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/two-factor/setup') }) }
}

/** Where "Done" leads: `callbackUrl` (query or form), else the site's root. */
async function next(ctx: ActionContext): Promise<string> {
  const requested = stringValue(ctx.body.callbackUrl) ?? ctx.query.get('callbackUrl') ?? undefined
  return requested ? redirectTarget(ctx, requested) : `${ctx.origin}/`
}

type PageState = { state: 'enrol'; qrCode: string; secret: string; error?: string } | { state: 'codes'; recoveryCodes: readonly string[] } | { state: 'enrolled'; recoveryCodesLeft: number; error?: string }

async function page(ctx: ActionContext, status: number, state: PageState): Promise<AuthResponse> {
  const csrf = issueCsrf(ctx)
  const props = { ...state, basePath: ctx.basePath, csrfToken: csrf.token, next: await next(ctx), theme: ctx.config.theme, homeUrl: homeUrl(ctx) } as TwoFactorSetupPageProps
  // A secret or recovery codes: the URL not sent on as a referrer (no cache keeps the page: respond.ts).
  return { status, html: renderTwoFactorSetupPage(props), cookies: csrf.cookies, headers: { 'Referrer-Policy': 'no-referrer' } }
}
