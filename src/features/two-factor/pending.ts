/**
 * The step between a sign-in's first factor and its second: when the user has a confirmed TOTP
 * enrolment, no session starts; the browser gets the `authjs.two-factor` cookie and goes to the
 * second page. The cookie is sealed with a key of its own (the session codec, as the OAuth check
 * cookies are), lives 5 minutes, and holds who signs in, how to finish, where to go afterwards, and
 * the hash of this browser's CSRF cookie: a copy of it in another browser is refused.
 *
 * Small and free of the TOTP code (otpauth, qrcode): the feature's hooks load it statically, and ask
 * only the adapter whether the user enrolled. What each sign-in method had in hand (`Resume`) is its
 * own; the method finishes the sign-in (`ProviderMethods.resume`).
 */
import { createHash } from 'node:crypto'
import { issueCsrf, pageUrl, resolveCallbackUrl, type ActionContext } from '../../actions/context.js'
import type { ResolvedConfig } from '../../config/types.js'
import { twoFactorOf, type TwoFactorAdapter } from './config.js'
import { sameTokenHash } from '../../mail/token.js'
import { TwoFactorError } from '../../errors.js'
import type { AuthResponse } from '../../http/respond.js'
import { clearChunkedCookie, readChunkedCookie, writeChunkedCookie, type OutgoingCookie } from '../../session/cookies.js'
import { keyRingFor } from '../../session/keys.js'
import { openSessionToken, sealSessionToken } from '../../session/token.js'
import type { Resume } from '../../composition/index.js'

/** Seconds between the first factor and the second. */
export const PENDING_LIFETIME = 5 * 60

/** An opened pending sign-in. */
export interface PendingSignIn {
  userId: string
  /** Where to go after signing in (through the `redirect` callback; a path when on this site). */
  callbackUrl: string
  resume: Resume
}

interface PendingPayload {
  chk: 'two-factor'
  uid: string
  /** SHA-256 of this browser's CSRF cookie, base64url. */
  b: string
  cb: string
  r: Resume
}

const ring = keyRingFor('portcullis.two-factor')

/** Whether a sign-in of this kind asks enrolled users for their second factor. */
export function asksSecondFactor(config: ResolvedConfig, kind: string): boolean {
  const options = twoFactorOf(config)
  if (!options) return false
  // An organization's own identity provider (SSO) is an OAuth-like sign-in: its IdP usually asks its own factors.
  if (kind === 'oauth' || kind === 'sso') return options.requireForOAuth
  if (kind === 'email') return options.requireForEmail
  return true
}

/**
 * Whether `userId` gives a second factor: `twoFactor` is on and the user's enrolment is confirmed.
 * @throws AdapterError
 */
export async function hasSecondFactor(ctx: Pick<ActionContext, 'config'>, userId: string): Promise<boolean> {
  if (!twoFactorOf(ctx.config)) return false
  const enrolment = await (ctx.config.adapter as TwoFactorAdapter).getTwoFactor(userId)
  return !!enrolment?.enabledAt
}

/**
 * The gate between the factors: undefined when `userId` has no confirmed enrolment (or this kind of
 * sign-in does not ask), else the answer that sends the browser to the second page with the
 * pending sign-in sealed in its cookie.
 *
 * @throws AdapterError
 */
export async function secondFactorGate(ctx: ActionContext, userId: string, resume: Resume): Promise<AuthResponse | undefined> {
  if (!asksSecondFactor(ctx.config, resume.kind)) return undefined
  if (!(await hasSecondFactor(ctx, userId))) return undefined
  // The pending step is bound to the CSRF cookie this browser has, or is given now.
  const csrf = issueCsrf(ctx)
  const csrfCookie = csrf.cookies[0]?.value ?? ctx.requestCookies[ctx.cookieSet.cookies.csrfToken.name] ?? ''
  // Kept as a path when it is on this site: the second page resolves it again against its own origin.
  const { url } = await resolveCallbackUrl(ctx)
  const target = new URL(url)
  const callbackUrl = target.origin === ctx.origin ? `${target.pathname}${target.search}${target.hash}` : url
  const payload: PendingPayload = { chk: 'two-factor', uid: userId, b: bindingOf(csrfCookie), cb: callbackUrl, r: resume }
  const sealed = sealSessionToken(payload as unknown as Record<string, unknown>, ring(ctx.config.secrets).current, PENDING_LIFETIME, ctx.now)
  const cookie = ctx.cookieSet.cookies.twoFactorPending
  return {
    redirect: pageUrl(ctx, 'twoFactor', '/two-factor'),
    cookies: [...csrf.cookies, ...writeChunkedCookie(cookie, sealed, {}, ctx.requestCookies)],
  }
}

/**
 * This browser's pending sign-in.
 * @throws TwoFactorError `pending_invalid` when there is none, it expired, or it was made in another browser.
 */
export function openPendingSignIn(ctx: ActionContext): PendingSignIn {
  const cookie = ctx.cookieSet.cookies.twoFactorPending
  const sealed = readChunkedCookie(ctx.requestCookies, cookie.name)
  const refuse = (why: string): never => {
    throw new TwoFactorError('pending_invalid', `No sign-in waits for a second factor in this browser: ${why}. Sign in again.`)
  }
  if (!sealed) return refuse(`the "${cookie.name}" cookie is missing (the first factor was skipped, or it expired after ${PENDING_LIFETIME / 60} minutes)`)
  const payload = openSessionToken(sealed, ring(ctx.config.secrets), ctx.now)?.payload as Partial<PendingPayload> | undefined
  if (!payload || payload.chk !== 'two-factor' || typeof payload.uid !== 'string' || typeof payload.b !== 'string' || typeof payload.cb !== 'string' || !payload.r) {
    return refuse(`the "${cookie.name}" cookie could not be opened (expired, or sealed with another secret)`)
  }
  const csrfCookie = ctx.requestCookies[ctx.cookieSet.cookies.csrfToken.name] ?? ''
  // Compared in constant time, as a link's stored token hash is.
  if (!sameTokenHash(payload.b, bindingOf(csrfCookie))) return refuse('the pending sign-in was started in another browser')
  return { userId: payload.uid, callbackUrl: payload.cb, resume: payload.r }
}

/** The cookies that end the pending sign-in. */
export function clearPendingSignIn(ctx: ActionContext): OutgoingCookie[] {
  return clearChunkedCookie(ctx.cookieSet.cookies.twoFactorPending, ctx.requestCookies)
}

function bindingOf(csrfCookie: string): string {
  return createHash('sha256').update(`portcullis.two-factor\0${csrfCookie}`).digest('base64url')
}
