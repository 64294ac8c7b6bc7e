import type { SignInErrorCode } from './types.js'

/** A failed flow's codes, as the server puts them in the URL of the page it sends the browser to. */
export interface UrlAuthError {
  error: SignInErrorCode | (string & {})
  code?: string
}

/**
 * The `?error=` (and `&code=`) the server put on this page's URL, for an app's own sign-in or error
 * page (`pages.signIn`, `pages.error`), e.g. after an OAuth sign-in that failed. Null without one.
 *
 * @param url Default: this page's URL.
 * @example
 * const failure = readAuthError()
 * if (failure?.error === 'OAuthAccountNotLinked') show('Sign in the way you did the first time.')
 */
export function readAuthError(url: string | URL = location.href): UrlAuthError | null {
  const params = new URL(url, location.href).searchParams
  const error = params.get('error')
  if (!error) return null
  const code = params.get('code')
  return code ? { error, code } : { error }
}
