import { authUrl, postForm } from './config.js'
import { getCsrfToken } from './csrf.js'
import { navigate } from './navigate.js'
import { resultOf } from './result.js'
import { announceSessionChange } from './session-change.js'
import type { SignInResult } from './types.js'

/** Options of `signOut`. */
export interface SignOutOptions {
  /** Where to go afterwards (a path or a URL of this site). Default: this page. */
  callbackUrl?: string
  /** `false`: stay on the page and resolve with the result. Default `true`: go to `callbackUrl`. */
  redirect?: boolean
}

/**
 * Signs out: POST /signout with the CSRF token ends the session on the server (a database session
 * is deleted) and clears its cookies. Tells `onSessionChange` listeners, in this tab and the others.
 *
 * @returns The result with `redirect: false`; `undefined` when the page is leaving.
 * @throws AuthClientError when the server could not be reached or gave no JSON.
 * @example
 * await signOut({ redirect: false })
 */
export async function signOut(options: SignOutOptions & { redirect: false }): Promise<SignInResult>
export async function signOut(options?: SignOutOptions): Promise<SignInResult | undefined>
export async function signOut({ callbackUrl = location.href, redirect = true }: SignOutOptions = {}): Promise<SignInResult | undefined> {
  const answer = await postForm(authUrl('/signout'), { csrfToken: await getCsrfToken(), callbackUrl })
  const result = resultOf(answer)
  if (result.ok) await announceSessionChange()
  if (redirect && answer.url) {
    navigate(answer.url)
    return undefined
  }
  return result
}
