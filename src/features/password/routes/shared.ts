/**
 * What the password routes share: the configured password provider, the lazily loaded operations
 * (hashing, policy, mail), and the refusals a form shows on itself (a policy or address problem).
 */
import { isPasswordProvider, type PasswordProvider } from '../provider.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { normalizeEmailAddress } from '../../../mail/normalize.js'
import { EmailSignInError, UnknownActionError, VerificationError } from '../../../errors.js'
import { PasswordPolicyError, UsernameError } from '../errors.js'
import type { ActionContext } from '../../../actions/context.js'
import { pageUrl, stringValue } from '../../../actions/context.js'

/**
 * The password provider.
 * @throws UnknownActionError when none is configured (its routes exist only with one).
 */
export function passwordProvider(config: ResolvedConfig): PasswordProvider {
  const provider = config.providers.find(isPasswordProvider)
  if (!provider) throw new UnknownActionError('No password provider is configured: add Password() from "portcullis/providers/password" to providers.')
  return provider
}

export { loadAccounts } from '../load.js'

/** A refusal the form shows on itself: its message for people, or undefined for any other error. */
export function formRefusal(error: unknown): string | undefined {
  if (error instanceof PasswordPolicyError || error instanceof UsernameError) return error.message
  if (error instanceof EmailSignInError) return 'Enter a valid e-mail address.'
  return undefined
}

/** The built-in (or the app's) sign-in page. */
export function signInUrl(ctx: ActionContext): string {
  return pageUrl(ctx, 'signIn', '/signin')
}


// Longer values are no link Portcullis made: refused before they reach the database.
const MAX_PARAM_LENGTH = 1024

/**
 * The `token` and `email` of a verification or reset link (its query, or the form that posts them back).
 * @throws VerificationError when either is missing or too long.
 */
export function linkParams(fields: Record<string, unknown>, what: string): { token: string; email: string } {
  const token = stringValue(fields.token)
  const email = stringValue(fields.email)
  if (!token || !email || token.length > MAX_PARAM_LENGTH || email.length > MAX_PARAM_LENGTH) throw new VerificationError(`The ${what} link has no token or no e-mail address.`)
  return { token, email }
}

/**
 * The link's address as a page may show it: normalised, and only when it is one. Any other text in
 * the URL would be the site's own words to whoever opens it ("… your account is locked, call …").
 * @throws VerificationError when it is no address, as for a link without one.
 */
export function shownAddress(email: string, what: string): string {
  try {
    return normalizeEmailAddress(email)
  } catch {
    throw new VerificationError(`The ${what} link has no valid e-mail address.`)
  }
}
