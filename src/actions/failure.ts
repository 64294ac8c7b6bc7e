/**
 * Where a failed flow sends the user: sign-in failures back to the sign-in page with the error code
 * (and the credentials `code`), everything else to the error page. Server-side problems show only
 * `Configuration`; the detail goes to the log.
 */
import {
  AdapterError,
  AuthError,
  InvalidProviderError,
  InvalidRequestError,
  RateLimitedError,
  UnknownActionError,
} from '../errors.js'
import { describeError, emitEvent } from '../events.js'
import type { AuthFailure, AuthResponse } from '../http/respond.js'
import { renderErrorPage } from '../pages/index.js'
import { countRefusal } from '../telemetry/refusal.js'
import { pageUrl, type ActionContext } from './context.js'
import { failureAdvice } from './failure-advice.js'
import { homeUrl } from './home.js'

/** An error about the request itself: malformed, or for an unknown route or provider. */
type RequestError = InvalidRequestError | UnknownActionError | InvalidProviderError

/** Whether `error` is about the request itself, answered by `requestErrorResponse`. */
export function isRequestError(error: unknown): error is RequestError {
  return error instanceof InvalidRequestError || error instanceof UnknownActionError || error instanceof InvalidProviderError
}

/** A malformed request, an unknown route or provider: a 4xx JSON answer saying what was wrong. */
export function requestErrorResponse(error: RequestError): AuthResponse {
  return { status: error instanceof InvalidRequestError ? error.status : 400, json: { error: error.type, message: error.message } }
}

export function failureResponse(error: unknown, ctx: Pick<ActionContext, 'config' | 'origin' | 'basePath'>): AuthResponse {
  const authError = error instanceof AuthError ? error : undefined
  countRefusal(ctx.config, error)
  if (authError instanceof AdapterError) {
    // Already logged, with its cause, where the adapter failed (config/adapter.ts).
  } else if (!authError || authError.logLevel === 'error') {
    ctx.config.logger.error(authError?.type ?? 'InternalError', describeError(error))
  } else {
    ctx.config.logger[authError.logLevel](authError.type, authError.message)
  }
  const failure: AuthFailure = { error: authError?.clientCode ?? 'Configuration' }
  if (authError?.kind === 'signIn') {
    // Fixed, short identifiers (never provider text), so they are safe in the URL.
    const code = authError.signInCode
    if (code !== undefined) failure.code = code
    // Not awaited: the answer does not wait for the app's handler (emitEvent logs one that throws).
    void emitEvent(ctx.config, 'signInFailed', { error: authError.type, ...(code === undefined ? {} : { code }) })
    const signInUrl = pageUrl(ctx, 'signIn', '/signin', failure)
    if (authError instanceof RateLimitedError) return tooManyAttempts(authError, ctx, signInUrl, failure)
    return withAdvice({ redirect: signInUrl }, failure, ctx)
  }
  return withAdvice({ redirect: pageUrl(ctx, 'error', '/error', failure) }, failure, ctx)
}

// After the URLs are built from the codes: the fix goes to JSON clients, never into a URL.
function withAdvice(response: AuthResponse, failure: AuthFailure, ctx: Pick<ActionContext, 'basePath'>): AuthResponse {
  const { status, message } = failureAdvice(failure, ctx.basePath)
  return { ...response, failure: { ...failure, message }, failureStatus: status }
}

/**
 * A refused sign-in attempt: 429 with `Retry-After` (RFC 6585 §4). A redirect cannot carry a 429,
 * so browsers get a page saying how long to wait, linking back to the sign-in page (the app's own,
 * with `?error=RateLimited`, when `pages.signIn` is set); JSON clients get `{ url, error, message }` with the 429.
 */
function tooManyAttempts(error: RateLimitedError, ctx: Pick<ActionContext, 'config' | 'origin' | 'basePath'>, signInUrl: string, failure: AuthFailure): AuthResponse {
  const { status, html } = renderErrorPage({
    error: failure.error,
    homeUrl: homeUrl(ctx),
    signInUrl,
    retryAfterSeconds: error.retryAfterSeconds,
    theme: ctx.config.theme,
  })
  return withAdvice({ status, headers: { 'Retry-After': String(error.retryAfterSeconds) }, redirect: signInUrl, html }, failure, ctx)
}
