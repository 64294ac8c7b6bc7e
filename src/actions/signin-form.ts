/**
 * A refused sign-in form, kept for the sign-in page that follows: after a wrong password or a refused
 * address the browser is redirected to `/signin?error=…`, and that page fills the form in again
 * with what was typed (the address or username, never a password) and shows the message at the form
 * that failed. The form travels in the `authjs.signin-form` cookie, sealed with the secret (the
 * address is not readable in the browser's cookie store, nor can another site plant one), for 5
 * minutes, read once. Not in the URL, where the address would reach logs and history.
 */
import { AuthError } from '../errors.js'
import type { AuthResponse } from '../http/respond.js'
import { expiredCookie, type OutgoingCookie } from '../session/cookies.js'
import { keyRingFor } from '../session/keys.js'
import { openSessionToken, sealSessionToken } from '../session/token.js'
import type { ActionContext } from './context.js'
import { failureResponse } from './failure.js'

const LIFETIME = 5 * 60

// Longer values are not kept: no address or username is that long, and the cookie stays small.
const MAX_VALUE_LENGTH = 320

const ring = keyRingFor('portcullis.signin-form')

/** A refused form as the sign-in page gets it back. */
export interface RefusedForm {
  /** The provider whose form was refused. */
  providerId: string
  /** The fields typed, by name, without any secret. */
  fields: Readonly<Record<string, string>>
}

/** What the provider's form asks for: its declared fields (credentials), or `email`. */
interface FormProvider {
  id: string
  type: string
  credentials?: Readonly<Record<string, { type?: string } | undefined>> | undefined
}

/**
 * Runs a sign-in form's action; a refused sign-in answers as the router would (failure.ts), plus
 * the cookie that keeps the form, when the built-in sign-in page is the one that will show it.
 */
export async function keepRefusedForm(ctx: ActionContext, provider: FormProvider, signIn: () => Promise<AuthResponse>): Promise<AuthResponse> {
  try {
    return await signIn()
  } catch (error) {
    if (!(error instanceof AuthError) || error.kind !== 'signIn' || ctx.config.pages.signIn !== undefined) throw error
    const response = failureResponse(error, ctx)
    const cookie = formCookie(ctx, provider)
    return cookie === undefined ? response : { ...response, cookies: [...(response.cookies ?? []), cookie] }
  }
}

function formCookie(ctx: ActionContext, provider: FormProvider): OutgoingCookie | undefined {
  const fields = keptFields(provider, ctx.body)
  if (Object.keys(fields).length === 0) return undefined
  const sealed = sealSessionToken({ chk: 'signin-form', pid: provider.id, f: fields }, ring(ctx.config.secrets).current, LIFETIME, ctx.now)
  const cookie = ctx.cookieSet.cookies.signInForm
  return { name: cookie.name, value: sealed, options: cookie.options }
}

// The fields the form declares, less the secret ones: those of type password, and any whose name
// says password, passcode, pin, secret or code (as the pending sign-in's cookie leaves them out).
function keptFields(provider: FormProvider, body: Readonly<Record<string, unknown>>): Record<string, string> {
  const names =
    provider.type === 'email'
      ? ['email']
      : Object.entries(provider.credentials ?? {})
          .filter(([name, field]) => field?.type !== 'password' && !/pass|pin|secret|code|otp/i.test(name))
          .map(([name]) => name)
  const kept: Record<string, string> = {}
  for (const name of names) {
    const value = body[name]
    if (typeof value === 'string' && value !== '' && value.length <= MAX_VALUE_LENGTH) kept[name] = value
  }
  return kept
}

/**
 * The refused form this browser brings back, if any, and the cookie that clears it (read once).
 * An unreadable, expired or foreign cookie is no form.
 */
export function takeRefusedForm(ctx: ActionContext): { form: RefusedForm | undefined; cookies: OutgoingCookie[] } {
  const cookie = ctx.cookieSet.cookies.signInForm
  const sealed = ctx.requestCookies[cookie.name]
  if (sealed === undefined) return { form: undefined, cookies: [] }
  const cookies = [expiredCookie(cookie)]
  const payload = openSessionToken(sealed, ring(ctx.config.secrets), ctx.now)?.payload
  if (payload?.chk !== 'signin-form' || typeof payload.pid !== 'string' || !isStringRecord(payload.f)) return { form: undefined, cookies }
  return { form: { providerId: payload.pid, fields: payload.f }, cookies }
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((item) => typeof item === 'string')
}
