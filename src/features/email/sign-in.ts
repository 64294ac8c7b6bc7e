/**
 * POST /signin/:provider for an e-mail provider (after its CSRF check in signin.ts), and the
 * server-side `signIn('<id>', { email })`: the address normalised, the `signIn` callback asked
 * (`email.verificationRequest`), a one-time token stored hashed with its expiry, the link mailed,
 * and the "check your e-mail" page. Loaded on the first e-mail sign-in only (signin.ts).
 *
 * The answer is the same whether the address belongs to a user or not (no account enumeration):
 * both get a token and an e-mail, since following the link creates the user. The browser that asked
 * gets the `emailLink` cookie, which lets the link sign in there without a second step.
 *
 * @see spec/auth-library-spec.md §1.2, §2.6 (VerificationToken)
 */
import { randomUUID } from 'node:crypto'
import { EmailSignInError, InvalidConfigurationError } from '../../errors.js'
import { describeError, redactError } from '../../events.js'
import type { AuthResponse } from '../../http/respond.js'
import type { EmailProvider } from '../../providers/email.js'
import { hashVerificationToken, linkBinding } from '../../mail/token.js'
import { limitSignInAttempt } from '../../security/rate-limit.js'
import { assertTrustedLinkOrigin } from '../../mail/site-url.js'
import type { Account, Adapter, AdapterUser } from '../../types.js'
import { askSignInCallback } from '../../sign-in/finish.js'
import { storedUserWithEmail, type EmailAdapter } from '../../sign-in/users.js'
import { authUrl, pageUrl, type ActionContext } from '../../actions/context.js'

/** The adapter methods e-mail sign-in calls (checked at init, features/email/provider.ts). */
export type VerificationAdapter = EmailAdapter & Required<Pick<Adapter, 'createVerificationToken' | 'useVerificationToken'>>

/**
 * Mails a sign-in link for `email` and answers with the redirect to the verify-request page.
 *
 * @param input.email The submitted `email` field, as typed.
 * @param input.callbackUrl Where the link leads after sign-in (already through the `redirect` callback).
 * @throws EmailSignInError when the address is refused or the e-mail could not be sent;
 *   AccessDeniedError when the `signIn` callback refuses; UntrustedHostError; AdapterError.
 */
export async function signInWithEmail(ctx: ActionContext, provider: EmailProvider, input: { email: unknown; callbackUrl: string }): Promise<AuthResponse> {
  const { identifier, elsewhere } = await askToMail(ctx, provider, input.email)
  if (elsewhere) return elsewhere
  const adapter = ctx.config.adapter as VerificationAdapter

  const token = await newToken(provider)
  const expires = new Date(Date.now() + provider.maxAge * 1000)
  const url = `${authUrl(ctx, `/callback/${encodeURIComponent(provider.id)}`)}?${new URLSearchParams({ callbackUrl: input.callbackUrl, token, email: identifier })}`
  // Stored before sending, so the link works the moment it arrives; only the hash is stored.
  const stored = { identifier, token: hashVerificationToken(token, ctx.config.secrets[0]!), expires }
  await adapter.createVerificationToken(stored)
  try {
    await provider.sendVerificationRequest({ identifier, url, expires, provider, token, theme: ctx.config.theme, request: ctx.req })
  } catch (error) {
    ctx.config.logger.error(
      'EmailSignInError',
      `Sending the sign-in e-mail of provider "${provider.id}" failed; no link was sent and its token is deleted.`,
      describeError(redactError(error, [token, url, identifier])),
    )
    await discardToken(ctx, adapter, stored)
    throw new EmailSignInError(`The sign-in e-mail of provider "${provider.id}" could not be sent.`)
  }
  // This browser opens the link at once; any other (a mail scanner, a victim sent an attacker's
  // link) is asked first (callback/email.ts).
  const binding = ctx.cookieSet.cookies.emailLink
  return {
    redirect: pageUrl(ctx, 'verifyRequest', '/verify-request', { provider: provider.id, type: 'email' }),
    cookies: [{ name: binding.name, value: linkBinding(token, ctx.config.secrets[0]!), options: { ...binding.options, maxAge: provider.maxAge } }],
  }
}

/**
 * The steps before anything is mailed, for links and for sign-in codes (features/email-code): the
 * site's origin trusted, the address normalised, the request counted, the `signIn` callback asked
 * with `email.verificationRequest`.
 * @returns The normalised address, and the callback's redirect when it returned a path.
 * @throws EmailSignInError when the address is refused; RateLimitedError; AccessDeniedError; UntrustedHostError; AdapterError.
 */
export async function askToMail(
  ctx: ActionContext,
  provider: Pick<EmailProvider, 'id' | 'type' | 'normalizeIdentifier'>,
  email: unknown,
): Promise<{ identifier: string; elsewhere: AuthResponse | undefined }> {
  assertTrustedLinkOrigin(ctx)
  const identifier = normalizedAddress(provider, email)
  // Every request counts against the client IP and the address, before any database or mail work
  // (known and unknown addresses alike, so the limit tells nothing about who has an account).
  await limitSignInAttempt(ctx, provider, identifier)
  const adapter = ctx.config.adapter as VerificationAdapter

  // As Auth.js: the signIn callback sees the stored user, or the one the link would create.
  const user: AdapterUser = (await storedUserWithEmail(adapter, identifier)) ?? { id: randomUUID(), email: identifier, emailVerified: null, name: null, image: null }
  const account: Account = { provider: provider.id, type: 'email', providerAccountId: identifier, userId: user.id }
  const elsewhere = await askSignInCallback(ctx, { user, account, email: { verificationRequest: true } })
  return { identifier, elsewhere }
}

/** @throws EmailSignInError when `normalizeIdentifier` refuses the address. */
export function normalizedAddress(provider: Pick<EmailProvider, 'id' | 'normalizeIdentifier'>, email: unknown): string {
  let identifier: unknown
  try {
    identifier = provider.normalizeIdentifier(typeof email === 'string' ? email : '')
  } catch (error) {
    // The user's input, not a fault: the detail goes to the debug log with the failure.
    throw new EmailSignInError(`The e-mail address was refused: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (typeof identifier !== 'string' || identifier === '') {
    throw new InvalidConfigurationError(`normalizeIdentifier of provider "${provider.id}" must return the address as a non-empty string, or throw to refuse it.`)
  }
  return identifier
}

async function newToken(provider: EmailProvider): Promise<string> {
  const token = await provider.generateVerificationToken()
  if (typeof token !== 'string' || token.length === 0) {
    throw new InvalidConfigurationError(`generateVerificationToken of provider "${provider.id}" must return a non-empty string.`)
  }
  return token
}

/** Deletes the token of an e-mail that was not sent (useVerificationToken is the adapter's delete). */
async function discardToken(ctx: ActionContext, adapter: VerificationAdapter, stored: { identifier: string; token: string }): Promise<void> {
  try {
    await adapter.useVerificationToken(stored)
  } catch {
    // Logged by the adapter guard; the token stays until it expires, and no link to it exists.
    ctx.config.logger.warn('EmailSignInError', 'The token of an unsent sign-in e-mail could not be deleted; it expires unused.')
  }
}
