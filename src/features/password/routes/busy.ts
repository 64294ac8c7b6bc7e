/**
 * The answer when the cap on concurrent password hashes is full (limit.ts): 503 Service Unavailable
 * with `Retry-After` (RFC 9110 §15.6.4, §10.2.3), at once and the same for every address. A sign-in
 * gets a short page linking back to the sign-in page; sign-up and reset show their form again.
 */
import type { ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import type { AuthResponse } from '../../../http/respond.js'
import { html } from '../../../pages/html.js'
import { renderLayout } from '../../../pages/theme.js'
import { PasswordBusyError } from '../errors.js'
import { signInUrl } from './shared.js'

/** What a form says when its hashing was refused for want of a place. */
export function busyMessage(error: PasswordBusyError): string {
  const seconds = error.retryAfterSeconds
  return `Too many people are signing in right now. Please try again in ${seconds} second${seconds === 1 ? '' : 's'}.`
}

/** `response` sent as a 503 with the error's `Retry-After`. */
export function asBusy(response: AuthResponse, error: PasswordBusyError): AuthResponse {
  return { ...response, status: 503, headers: { ...response.headers, 'Retry-After': String(error.retryAfterSeconds) } }
}

/** The sign-in's answer: a page saying to try again, linking the sign-in page. */
export function busySignIn(ctx: ActionContext, error: PasswordBusyError): AuthResponse {
  const body = html`<h1>Try again shortly</h1>
<p>${busyMessage(error)}</p>
<p><a href="${signInUrl(ctx)}">Back to sign in</a></p>`
  return asBusy({ html: renderLayout({ title: 'Try again shortly', theme: ctx.config.theme, body, home: homeUrl(ctx) }) }, error)
}
