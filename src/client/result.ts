import { authUrl, type RedirectAnswer } from './config.js'
import type { AuthErrorCode, SignInResult } from './types.js'

/** A `{ url, error, code }` answer as a `SignInResult`: a success has a URL, no error and a 2xx/3xx status. */
export function resultOf(answer: RedirectAnswer): SignInResult {
  const failure = answer.error === undefined ? failureInPageUrl(answer.url) : { error: answer.error, code: answer.code }
  if (!failure && answer.status < 400 && typeof answer.url === 'string') return { ok: true, status: answer.status, url: answer.url }
  const result: SignInResult = { ok: false, status: answer.status, url: null, error: failure?.error ?? 'UnexpectedResponse' }
  if (typeof failure?.code === 'string') result.code = failure.code
  return result
}

/**
 * Portcullis names a failure in the answer; an Auth.js server only in the URL of the sign-in or
 * error page it sends the browser to. Only those two pages count: `?error=` on any other URL is the
 * app's own callback URL, a success.
 */
function failureInPageUrl(url: string | undefined): { error: AuthErrorCode; code?: string | undefined } | undefined {
  if (typeof url !== 'string') return undefined
  const target = new URL(url, location.href)
  const page = `${target.origin}${target.pathname}`
  const error = target.searchParams.get('error')
  if (!error || (page !== authUrl('/signin') && page !== authUrl('/error'))) return undefined
  return { error: error as AuthErrorCode, code: target.searchParams.get('code') ?? undefined }
}
