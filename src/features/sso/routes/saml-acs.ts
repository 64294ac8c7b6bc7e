/**
 * POST /saml-acs/<connection id>: the Assertion Consumer Service, where the identity provider posts
 * its signed SAML response (HTTP-POST binding). Checked in this order: the connection exists and is
 * enabled; the response came back to the browser that asked for it (the sign-in cookie's request id
 * is the InResponseTo the verification requires), else it is unsolicited and accepted only where the
 * connection allows IdP-initiated sign-in; the signature and every condition (saml/verify.ts); the
 * assertion's id was never used before, on any process (the adapter's replay table). RelayState is a
 * callback URL only for an IdP-initiated sign-in, and then goes through the `redirect` callback
 * like any other. No CSRF token: the binding to the request is the check, as for OAuth's state.
 *
 * @see https://docs.oasis-open.org/security/saml/v2.0/saml-profiles-2.0-os.pdf §4.1.4.3, §4.1.4.5
 */
import { createHash } from 'node:crypto'
import type { ActionContext } from '../../../actions/context.js'
import { authUrl } from '../../../actions/context.js'
import { failureResponse } from '../../../actions/failure.js'
import { limitSignInAttempt } from '../../../security/rate-limit.js'
import type { AuthResponse } from '../../../http/respond.js'
import { ssoAdapter } from '../adapter.js'
import { completeSsoSignIn } from '../complete.js'
import { ssoProviderOf } from '../config.js'
import { acsUrl, isSaml, spEntityId } from '../connection.js'
import { SamlResponseError } from '../errors.js'
import { renderContinuePage } from '../pages/continue.js'
import { continueScriptDigest } from '../pages/continue-script.js'
import { clearSignInState, readSignInState } from '../sign-in-state.js'

export const samlAcs =
  (connectionId: string) =>
  async (ctx: ActionContext): Promise<AuthResponse> => {
    const samlResponse = typeof ctx.body.SAMLResponse === 'string' ? ctx.body.SAMLResponse : undefined
    const relayState = typeof ctx.body.RelayState === 'string' && ctx.body.RelayState.length <= 2048 ? ctx.body.RelayState : undefined
    const state = readSignInState(ctx)
    // The identity provider's cross-site POST carries no Lax cookie: posted once more from this site, it does.
    if (samlResponse !== undefined && state === undefined && ctx.body.continued !== '1') {
      const { version, integrity } = continueScriptDigest()
      const src = authUrl(ctx, `/saml-continue.js?v=${version}`)
      return { html: renderContinuePage({ action: acsUrl(ctx, connectionId), samlResponse, relayState, theme: ctx.config.theme, script: { src, integrity } }), pageScript: src }
    }
    let response: AuthResponse
    try {
      response = await consume(ctx, connectionId, samlResponse, relayState, state)
    } catch (error) {
      response = failureResponse(error, ctx)
    }
    return { ...response, cookies: [...clearSignInState(ctx), ...(response.cookies ?? [])] }
  }

async function consume(ctx: ActionContext, connectionId: string, samlResponse: string | undefined, relayState: string | undefined, state: ReturnType<typeof readSignInState>): Promise<AuthResponse> {
  const sso = ssoProviderOf(ctx.config)!
  const connection = await ssoAdapter(ctx.config).getSsoConnection(connectionId)
  if (!connection || !isSaml(connection) || !connection.enabled) throw new SamlResponseError('unsolicited', `No enabled SAML connection ${connectionId} to post a response to.`)
  if (samlResponse === undefined || samlResponse.length === 0) throw new SamlResponseError('malformed', 'The POST carries no SAMLResponse.')
  const requestId = state?.type === 'saml' && state.connectionId === connection.id ? state.requestId : undefined
  if (requestId === undefined && !connection.settings.allowIdpInitiated) {
    throw new SamlResponseError('unsolicited', `A SAML response for connection ${connection.id} without this browser's sign-in (started more than 10 minutes ago, in another browser, or at the identity provider, which this connection does not allow).`)
  }
  // Each verification costs milliseconds of CPU (the XML signature check): counted against the client's
  // address as a sign-in attempt (the `rateLimit` option's `ip` window), its point given back when it signs in.
  const attempt = await limitSignInAttempt(ctx, { id: sso.id, type: 'sso' }, undefined)
  const { verifySamlResponse } = await import('../saml/index.js')
  const { settings } = connection
  const identity = await verifySamlResponse(samlResponse, {
    idp: { entityId: settings.idpEntityId, ssoUrl: settings.ssoUrl, certificates: settings.certificates },
    sp: { entityId: spEntityId(ctx, connection.id), acsUrl: acsUrl(ctx, connection.id) },
    expectedRequestId: requestId ?? null,
    nowMs: ctx.now * 1000,
    skewMs: sso.clockSkewSeconds * 1000,
  })
  // Kept until the assertion could no longer pass the time check anywhere: its end, plus the skew.
  const key = createHash('sha256').update(`${connection.id}\0${identity.assertionId}`).digest('hex')
  const keepUntil = new Date(Math.max(identity.notOnOrAfter, ctx.now * 1000) + sso.clockSkewSeconds * 1000)
  if (!(await ssoAdapter(ctx.config).claimSsoAssertion(key, keepUntil))) throw new SamlResponseError('replayed', `The assertion ${identity.assertionId} of connection ${connection.id} was used before.`)
  // IdP-initiated: RelayState is where to go, checked as a callbackUrl; SP-initiated: the sign-in's own callback URL cookie.
  const signInCtx = requestId === undefined && relayState !== undefined ? { ...ctx, body: { callbackUrl: relayState } } : { ...ctx, body: {} }
  const response = await completeSsoSignIn(signInCtx, sso, connection, {
    subject: identity.nameId,
    email: identity.email,
    name: identity.name,
    image: null,
    // The IdP's attributes first: one named `sub` or `email` must not stand for the NameID or the address read from it.
    profile: { ...identity.attributes, sub: identity.nameId, email: identity.email, name: identity.name } as never,
  })
  await attempt.succeeded()
  return response
}
