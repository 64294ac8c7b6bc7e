/**
 * GET /oauth-interaction/:uid: where oidc-provider sends the browser when an authorization needs the
 * user. Not signed in to the site: to the site's sign-in page (any method, the second factor
 * included), and back here. Signed in: the sign-in is given to oidc-provider; its consent step shows
 * the consent page, or is given at once for a first-party client.
 */
import { authUrl, issueCsrf, type ActionContext, type Action } from '../../../actions/context.js'
import type { AdapterUser } from '../../../types.js'
import { consentDetails } from '../consent-details.js'
import { renderConsentPage } from '../pages/consent.js'
import { readConfirmation } from '../../../session/confirmation.js'
import { grantAsked, interactionOf, signIn, signInAgain, userOrSignIn } from './shared.js'

export const interactionPage = (uid: string): Action => async (ctx: ActionContext) => {
  const found = await interactionOf(ctx, uid)
  if ('response' in found) return found.response
  const { server, interaction } = found
  const asking = await userOrSignIn(ctx, uid)
  if ('response' in asking) return asking.response
  // Sign-in, or the site's user changed since the provider's session began: that user signs in, with
  // the time they last proved who they are (the ID token's auth_time). A client that asked for a new
  // sign-in (prompt=login) or a recent one (max_age) gets one: an older proof sends the browser to
  // the sign-in page again, and back here.
  if (interaction.prompt.name === 'login' || interaction.session?.accountId !== asking.userId) {
    const confirmedAt = (await readConfirmation(ctx))?.confirmedAt ?? 0
    const maxAge = interaction.params['max_age'] === undefined ? undefined : Number(interaction.params['max_age'])
    const stale = (interaction.prompt.reasons.includes('login_prompt') && confirmedAt < interaction.iat!) || (maxAge !== undefined && ctx.now - confirmedAt > maxAge)
    if (stale) return signInAgain(ctx, uid)
    return signIn(ctx, server, asking.userId, confirmedAt)
  }
  const client = await server.provider.Client.find(String(interaction.params['client_id']))
  if (!client) return signIn(ctx, server, asking.userId, 0)
  // A first-party client is given what it asks without a page, unless it is public: any app on the
  // device can claim a native app's redirect (RFC 8252 §8.6), so the user says yes each time.
  const metadata = client.metadata() as { first_party?: boolean; token_endpoint_auth_method?: string }
  if (metadata.first_party === true && metadata.token_endpoint_auth_method !== 'none') return grantAsked(ctx, server, interaction, asking.userId)
  const user = (await ctx.config.adapter!.getUser!(asking.userId)) as AdapterUser | null
  const csrf = issueCsrf(ctx)
  const html = renderConsentPage({
    ...(await consentDetails(ctx.config, server, interaction, client)),
    signedInAs: user?.email ?? user?.name ?? asking.userId,
    action: new URL(authUrl(ctx, `/oauth-interaction/${encodeURIComponent(uid)}`)).pathname,
    csrfToken: csrf.token,
    theme: ctx.config.theme,
  })
  return { html, cookies: csrf.cookies, headers: { 'Cache-Control': 'no-store' } }
}
