/**
 * What the interaction routes share: the interaction of this browser (oidc-provider's cookie, read
 * from the request), the user signed in to the site, the grant given on consent, and the answers
 * for an interaction that cannot go on.
 */
import { ServerResponse } from 'node:http'
import { authUrl, pageUrl, type ActionContext } from '../../../actions/context.js'
import { emitEvent } from '../../../events.js'
import type { AuthResponse } from '../../../http/respond.js'
import { renderLayout } from '../../../pages/theme.js'
import { html } from '../../../pages/html.js'
import { signedInUserId } from '../../../session/strategy.js'
import { serverOf, type AuthorizationServer } from '../provider.js'

type Interaction = Awaited<ReturnType<AuthorizationServer['provider']['interactionDetails']>>

/** The interaction `uid` of this browser, or the page saying it cannot go on. */
export async function interactionOf(ctx: ActionContext, uid: string): Promise<{ server: AuthorizationServer; interaction: Interaction } | { response: AuthResponse }> {
  const server = await serverOf(ctx.config)
  let interaction: Interaction
  try {
    // oidc-provider reads its interaction cookie from the request; nothing is written to this response.
    interaction = await server.provider.interactionDetails(ctx.req, new ServerResponse(ctx.req))
  } catch (error) {
    if ((error as { name?: string }).name !== 'SessionNotFound') throw error
    return { response: endedPage(ctx) }
  }
  // The cookie names this browser's interaction: another uid in the URL is someone else's link.
  if (interaction.uid !== uid) return { response: endedPage(ctx) }
  return { server, interaction }
}

/** A themed 400 page: the sign-in request expired, ended, or was started in another browser. */
export function endedPage(ctx: ActionContext): AuthResponse {
  const body = html`<h1>This sign-in request has ended</h1><p>It expired, was finished already, or was started in another browser. Go back to the app and start again.</p>`
  return { status: 400, html: renderLayout({ title: 'Sign-in request ended', theme: ctx.config.theme, body }), headers: { 'Cache-Control': 'no-store' } }
}

/** The user signed in to the site, or the answer that sends the browser to the sign-in page and back here. */
export async function userOrSignIn(ctx: ActionContext, uid: string): Promise<{ userId: string } | { response: AuthResponse }> {
  const userId = await signedInUserId(ctx)
  if (userId) return { userId }
  return { response: { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, `/oauth-interaction/${encodeURIComponent(uid)}`) }) } }
}

/** Gives the interaction's result to oidc-provider, and sends the browser back to it. */
export async function finish(ctx: ActionContext, server: AuthorizationServer, result: Record<string, unknown>): Promise<AuthResponse> {
  const returnTo = await server.provider.interactionResult(ctx.req, new ServerResponse(ctx.req), result, { mergeWithLastSubmission: !('error' in result) })
  return { redirect: returnTo, headers: { 'Cache-Control': 'no-store' } }
}

/** Signs the interaction in as `userId` (the site's session is the sign-in), proved at `confirmedAt` (seconds; 0: unknown). */
export function signIn(ctx: ActionContext, server: AuthorizationServer, userId: string, confirmedAt: number): Promise<AuthResponse> {
  return finish(ctx, server, { login: { accountId: userId, ...(confirmedAt > 0 && { ts: confirmedAt }) } })
}

/** To the sign-in page although signed in (the client asked for a new sign-in), and back here. */
export function signInAgain(ctx: ActionContext, uid: string): AuthResponse {
  return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, `/oauth-interaction/${encodeURIComponent(uid)}`) }), headers: { 'Cache-Control': 'no-store' } }
}

/** Grants what the client asked for and the user has not granted yet, and finishes the interaction. */
export async function grantAsked(ctx: ActionContext, server: AuthorizationServer, interaction: Interaction, userId: string): Promise<AuthResponse> {
  const { provider } = server
  const clientId = String(interaction.params['client_id'])
  const details = interaction.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[]; missingResourceScopes?: Record<string, string[]> }
  const grant = (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ?? new provider.Grant({ accountId: userId, clientId })
  if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '))
  if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims)
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '))
  const grantId = await grant.save()
  await emitEvent(ctx.config, 'oauthConsentGiven', { userId, clientId, scopes: askedScopes(interaction) })
  return finish(ctx, server, { consent: { grantId } })
}

/** The scopes the interaction's consent asks for, not granted yet. */
export function askedScopes(interaction: Interaction): string[] {
  const details = interaction.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> }
  return [...new Set([...(details.missingOIDCScope ?? []), ...Object.values(details.missingResourceScopes ?? {}).flat()])]
}
