import type { RedirectAnswer } from './config.js'
import type { SignInResult } from './types.js'

/** A `{ url, error, code }` answer as a `SignInResult`: a success has a URL, no error and a 2xx/3xx status. */
export function resultOf(answer: RedirectAnswer): SignInResult {
  if (answer.error === undefined && answer.status < 400 && typeof answer.url === 'string') return { ok: true, status: answer.status, url: answer.url }
  const result: SignInResult = { ok: false, status: answer.status, url: null, error: answer.error ?? 'UnexpectedResponse' }
  if (typeof answer.code === 'string') result.code = answer.code
  return result
}
