/**
 * The link of the sign-in e-mail, GET /callback/:provider, and its confirmation, POST
 * /callback/:provider. Its token is used once (the adapter deletes it atomically: of concurrent uses
 * exactly one gets it), must not have expired and must have been issued for the link's address.
 * Then, as for OAuth, the `signIn` callback, the user (users.ts: the existing one marked verified, or
 * a new one), the session, the events and the redirect. Loaded on the first e-mail callback only.
 *
 * Opened in the browser that asked for it (its `emailLink` cookie binds the token), the link signs in
 * at once. Anywhere else it only shows "Sign in as …?", whose button POSTs (CSRF-checked) to finish:
 * a mail scanner that fetches links does not burn the token, and an attacker who sends a victim his
 * own link cannot sign the victim in to the attacker's account unseen (login CSRF).
 *
 * A link that fails any check gets `Verification` (the error page, 403) and changes nothing: no
 * user, no session. A link with another address than its token's leaves the token in place (the
 * lookup is by address and token); an expired one is consumed.
 */
import { randomUUID } from 'node:crypto'
import { VerificationError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { hashVerificationToken, isBoundLink, sameTokenHash } from '../../../mail/token.js'
import { renderEmailConfirmPage } from '../../../pages/email-confirm.js'
import type { EmailProvider } from '../../../providers/email.js'
import type { Account, AdapterUser, SecondFactorProof, VerificationToken } from '../../../types.js'
import { assertCsrf, issueCsrf, stringValue, type ActionContext } from '../../../actions/context.js'
import type { VerificationAdapter } from '../sign-in.js'
import { askSignInCallback, finishSignIn } from '../../../sign-in/finish.js'
import { resolveEmailUser, storedUserWithEmail } from '../../../sign-in/users.js'
import { addressProven, afterFirstFactor } from '../../../sign-in/further-factor.js'
import { homeUrl } from '../../../actions/home.js'

// Longer values are no link Portcullis made: refused before they reach the database.
const MAX_PARAM_LENGTH = 1024

/**
 * Signs in the user of a followed e-mail link, or asks first when the link is opened in another browser.
 * @throws VerificationError, MissingCSRFError, AccessDeniedError, AdapterError
 */
export async function emailCallback(ctx: ActionContext, provider: EmailProvider): Promise<AuthResponse> {
  const fields = ctx.method === 'POST' ? ctx.body : Object.fromEntries(ctx.query)
  const token = stringValue(fields.token)
  const identifier = stringValue(fields.email)
  if (!token || !identifier || token.length > MAX_PARAM_LENGTH || identifier.length > MAX_PARAM_LENGTH) {
    throw new VerificationError('The sign-in link has no token or no e-mail address.')
  }
  const binding = ctx.cookieSet.cookies.emailLink
  if (ctx.method === 'POST') assertCsrf(ctx)
  else if (!isBoundLink(ctx.requestCookies[binding.name], token, ctx.config.secrets)) return confirmationPage(ctx, provider, token, identifier)
  const response = await signInWithLink(ctx, provider, token, identifier)
  return { ...response, cookies: [...(response.cookies ?? []), { name: binding.name, value: '', options: { ...binding.options, maxAge: 0 } }] }
}

/**
 * "Sign in as …?": the token is neither used nor looked up until the button is pressed. The page
 * shows the link's address only when the provider's `normalizeIdentifier` takes it, normalised: any
 * other text in the URL would be the site's own words to whoever opens it ("… your account is
 * locked, call …").
 * @throws VerificationError when the link's `email` is no address, as for a link without one.
 */
function confirmationPage(ctx: ActionContext, provider: EmailProvider, token: string, identifier: string): AuthResponse {
  let shown: string
  try {
    // The provider's own normaliser made the link's address: it takes it again (a custom one too).
    shown = provider.normalizeIdentifier(identifier)
  } catch {
    throw new VerificationError('The sign-in link has no valid e-mail address.')
  }
  const csrf = issueCsrf(ctx)
  const html = renderEmailConfirmPage({
    email: shown,
    action: `${ctx.basePath}/callback/${encodeURIComponent(provider.id)}`,
    fields: { token, email: identifier, callbackUrl: ctx.query.get('callbackUrl') ?? '' },
    csrfToken: csrf.token,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { html, cookies: csrf.cookies }
}

async function signInWithLink(ctx: ActionContext, provider: EmailProvider, token: string, identifier: string): Promise<AuthResponse> {
  const adapter = ctx.config.adapter as VerificationAdapter
  const invite = await useToken(ctx, adapter, identifier, token)
  if (!invite) throw new VerificationError('The sign-in link is unknown, already used, or for another address.')
  if (invite.expires.getTime() < Date.now()) throw new VerificationError('The sign-in link has expired.')
  // An adapter that ignores the identifier may return another address's token: refuse it.
  if (invite.identifier !== identifier) throw new VerificationError('The sign-in link was issued for another address.')
  return continueEmailSignIn(ctx, provider, identifier)
}

/**
 * An e-mail sign-in once its link is used: the second factor of an enrolled user (its page resumes
 * here with `twoFactor`), the `signIn` callback, the user stored or marked verified, the session.
 */
export async function continueEmailSignIn(ctx: ActionContext, provider: Pick<EmailProvider, 'id'>, identifier: string, twoFactor?: SecondFactorProof): Promise<AuthResponse> {
  const adapter = ctx.config.adapter as VerificationAdapter
  const existing = await storedUserWithEmail(adapter, identifier)
  if (existing && !twoFactor) {
    // The link proves the address: an account made without that proof loses what it was given.
    await addressProven(ctx, existing, provider.id)
    const pending = await afterFirstFactor(ctx, existing.id, { kind: 'email', pid: provider.id, email: identifier })
    if (pending) return pending
  }
  const candidate: AdapterUser = existing ?? { id: randomUUID(), email: identifier, emailVerified: null, name: null, image: null }
  const account: Account = { provider: provider.id, type: 'email', providerAccountId: identifier, userId: candidate.id }
  const elsewhere = await askSignInCallback(ctx, { user: candidate, account, ...(twoFactor && { twoFactor }) })
  if (elsewhere) return elsewhere

  const { user, isNewUser } = await resolveEmailUser(ctx, adapter, provider.id, identifier, existing)
  return finishSignIn(ctx, { user, account: { ...account, userId: user.id }, isNewUser })
}

/**
 * The stored token of the link, deleted. New tokens are hashed with the first secret; the others
 * are tried too, so links mailed before a secret rotation still work.
 */
async function useToken(ctx: ActionContext, adapter: VerificationAdapter, identifier: string, token: string): Promise<VerificationToken | null> {
  for (const secret of ctx.config.secrets) {
    const hash = hashVerificationToken(token, secret)
    const invite = await adapter.useVerificationToken({ identifier, token: hash })
    if (invite && sameTokenHash(invite.token, hash)) return invite
  }
  return null
}
