/**
 * Microsoft Entra ID: the tenant option, and the multi-tenant issuer. For `common` and
 * `organizations` Microsoft's discovery document names the issuer `https://login.microsoftonline.com/{tenantid}/v2.0`
 * and each ID token carries its tenant's issuer; openid-client accepts that for Microsoft's host only,
 * checking each token's `iss` against the template filled with the token's own `tid`.
 *
 * login.microsoftonline.com cannot be reached here, so its answers are served in-process, written
 * from Microsoft's documentation of the v2.0 discovery document, authorize and token endpoints
 * (https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc), by intercepting
 * `fetch` for that host only. The single-tenant shape is signed in through a real OpenID provider
 * by test/providers/discovery.test.ts.
 */
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import MicrosoftEntraID from 'portcullis/providers/microsoft-entra-id'
import { Browser } from '../support/browser.js'
import { isolateEnv } from '../support/env.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, startSignIn, type Listener } from '../support/oauth-app.js'

isolateEnv(['AUTH_MICROSOFT_ENTRA_ID_ID', 'AUTH_MICROSOFT_ENTRA_ID_SECRET', 'AUTH_MICROSOFT_ENTRA_ID_ISSUER', 'AUTH_MICROSOFT_ENTRA_ID_TENANT_ID'])

const CLIENT_ID = '6cb04018-a3f5-46a7-b995-940c78f5aef3'
const CLIENT_SECRET = 'entra-client-secret'
const CONTOSO = '9122040d-6c67-4c5b-b112-36a304b66dad'
const FABRIKAM = '72f988bf-86f1-41af-91ab-2d7cd011db47'

describe('tenantId', () => {
  it.each([
    [undefined, 'https://login.microsoftonline.com/common/v2.0'],
    ['organizations', 'https://login.microsoftonline.com/organizations/v2.0'],
    ['consumers', 'https://login.microsoftonline.com/consumers/v2.0'],
    [CONTOSO, `https://login.microsoftonline.com/${CONTOSO}/v2.0`],
    ['contoso.onmicrosoft.com', 'https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0'],
  ])('%s gives the issuer %s', (tenantId, issuer) => {
    expect(MicrosoftEntraID(tenantId === undefined ? {} : { tenantId }).issuer).toBe(issuer)
  })

  it('is read from AUTH_MICROSOFT_ENTRA_ID_TENANT_ID when not passed, and the option wins', () => {
    process.env.AUTH_MICROSOFT_ENTRA_ID_TENANT_ID = CONTOSO
    expect(MicrosoftEntraID().issuer).toBe(`https://login.microsoftonline.com/${CONTOSO}/v2.0`)
    expect(MicrosoftEntraID({ tenantId: 'organizations' }).issuer).toBe('https://login.microsoftonline.com/organizations/v2.0')
  })

  it("reads Auth.js's AUTH_MICROSOFT_ENTRA_ID_ISSUER when no tenant is given, not falling back to every tenant", () => {
    process.env.AUTH_MICROSOFT_ENTRA_ID_ISSUER = `https://login.microsoftonline.com/${CONTOSO}/v2.0/`
    expect(MicrosoftEntraID().issuer).toBe(`https://login.microsoftonline.com/${CONTOSO}/v2.0`)
    expect(MicrosoftEntraID({ tenantId: 'organizations' }).issuer).toBe('https://login.microsoftonline.com/organizations/v2.0')
    process.env.AUTH_MICROSOFT_ENTRA_ID_TENANT_ID = FABRIKAM
    expect(MicrosoftEntraID().issuer).toBe(`https://login.microsoftonline.com/${FABRIKAM}/v2.0`)
  })

  it('refuses a tenant that would change the issuer URL (a path, a query, a host)', () => {
    for (const tenantId of ['common/../evil', 'common?x=1', 'evil.example/x', '', 'a b']) {
      expect(() => MicrosoftEntraID({ tenantId })).toThrow(/tenantId .* must be "common", "organizations", "consumers"/)
    }
  })

  it('takes an explicit issuer over the tenant (national clouds)', () => {
    expect(MicrosoftEntraID({ issuer: `https://login.microsoftonline.us/${CONTOSO}/v2.0` }).issuer).toBe(`https://login.microsoftonline.us/${CONTOSO}/v2.0`)
  })
})

describe('the multi-tenant issuer (login.microsoftonline.com served in-process)', () => {
  let app: Listener
  let signingKey: CryptoKey
  let jwk: JWK
  const realFetch = globalThis.fetch
  /** Pending authorization requests by code: what the token endpoint needs to mint the ID token. */
  const codes = new Map<string, { nonce: string | null }>()
  /** The ID token the next token request returns: its tenant and the issuer it claims. */
  let next: { tid: string; iss: string }
  let tokenRequests = 0

  const ENTRA = 'https://login.microsoftonline.com'
  /** Who else serves a template issuer: any host but Microsoft's must still match exactly. */
  const IMPOSTOR = 'https://login.impostor.example'

  /** The discovery document of a multi-tenant authority, as Microsoft publishes it (reduced). */
  function discoveryDocument(origin: string, tenant: string) {
    return {
      issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
      authorization_endpoint: `${origin}/${tenant}/oauth2/v2.0/authorize`,
      token_endpoint: `${origin}/${tenant}/oauth2/v2.0/token`,
      jwks_uri: `${origin}/${tenant}/discovery/v2.0/keys`,
      userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
      response_modes_supported: ['query', 'fragment', 'form_post'],
      response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nonce', 'name', 'preferred_username', 'email', 'oid', 'tid', 'ver'],
      tenant_region_scope: null,
      cloud_instance_name: 'microsoftonline.com',
    }
  }

  async function serve(url: URL, init: RequestInit | undefined): Promise<Response> {
    const tenantPath = /^\/(common|organizations)\/(.+)$/.exec(url.pathname)
    if (!tenantPath) return new Response('not found', { status: 404 })
    const [, tenant, rest] = tenantPath
    if (rest === 'v2.0/.well-known/openid-configuration') return Response.json(discoveryDocument(url.origin, tenant!))
    if (rest === 'discovery/v2.0/keys') return Response.json({ keys: [jwk] })
    if (rest === 'oauth2/v2.0/authorize') {
      const code = `code-${codes.size + 1}`
      codes.set(code, { nonce: url.searchParams.get('nonce') })
      const back = new URL(url.searchParams.get('redirect_uri')!)
      back.searchParams.set('code', code)
      back.searchParams.set('state', url.searchParams.get('state') ?? '')
      if (!url.searchParams.get('state')) back.searchParams.delete('state')
      return new Response(null, { status: 302, headers: { location: back.href } })
    }
    if (rest === 'oauth2/v2.0/token') {
      tokenRequests++
      const body = new URLSearchParams(String(init?.body ?? ''))
      const pending = codes.get(body.get('code') ?? '')
      if (!pending) return Response.json({ error: 'invalid_grant' }, { status: 400 })
      const idToken = await new SignJWT({ ver: '2.0', tid: next.tid, oid: '00000000-0000-0000-66f3-3332eca7ea81', name: 'Abe Lincoln', email: 'abeli@contoso.example', xms_edov: true, nonce: pending.nonce ?? undefined })
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid! })
        .setIssuer(next.iss)
        .setSubject('AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ')
        .setAudience(CLIENT_ID)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(signingKey)
      return Response.json({ token_type: 'Bearer', scope: 'openid profile email', expires_in: 3599, access_token: 'eyJ0eXAiOiJKV1Qi.graph-access-token', id_token: idToken })
    }
    return new Response('not found', { status: 404 })
  }

  beforeAll(async () => {
    const pair = await generateKeyPair('RS256')
    signingKey = pair.privateKey
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'entra-test-key', alg: 'RS256', use: 'sig' }
    globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input)
      if (url.origin === ENTRA || url.origin === IMPOSTOR) return serve(url, input instanceof Request ? { body: await input.text() } : init)
      return realFetch(input, init)
    }) as typeof fetch
    app = await listen()
  })
  beforeEach(() => {
    tokenRequests = 0
  })
  afterAll(async () => {
    globalThis.fetch = realFetch
    await closeListeners()
  })

  async function signIn(providerOptions: Parameters<typeof MicrosoftEntraID>[0] = {}) {
    mountApp(app, { providers: [MicrosoftEntraID({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, ...providerOptions })] })
    const browser = new Browser()
    const authorizationUrl = await startSignIn(browser, app.url, 'microsoft-entra-id')
    const back = await browser.request(authorizationUrl)
    const callback = await finishSignIn(browser, { method: 'GET', url: back.headers.get('location')! })
    return { browser, authorizationUrl: new URL(authorizationUrl), callback }
  }

  it.each(['common', 'organizations'])('signs in a user of any tenant through "%s": the ID token issuer is its own tenant\'s', async (tenantId) => {
    next = { tid: CONTOSO, iss: `https://login.microsoftonline.com/${CONTOSO}/v2.0` }
    const { browser, authorizationUrl, callback } = await signIn({ tenantId })
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${ENTRA}/${tenantId}/oauth2/v2.0/authorize`)
    expect(redirectOf(callback).error).toBeNull()
    expect(tokenRequests).toBe(1)
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ', name: 'Abe Lincoln', email: 'abeli@contoso.example', image: null })
  })

  it("refuses an ID token whose issuer names another tenant than its tid (the template is filled from the token's own tid)", async () => {
    next = { tid: CONTOSO, iss: `https://login.microsoftonline.com/${FABRIKAM}/v2.0` }
    const { browser, callback } = await signIn({ tenantId: 'common' })
    expect(tokenRequests).toBe(1)
    expect(redirectOf(callback).error).toBe('OAuthCallbackError')
    expect(await sessionOf(browser, app.url)).toBeNull()
  })

  it('refuses an ID token whose issuer is the unfilled template', async () => {
    next = { tid: CONTOSO, iss: 'https://login.microsoftonline.com/{tenantid}/v2.0' }
    const { browser, callback } = await signIn({ tenantId: 'common' })
    expect(redirectOf(callback).error).toBe('OAuthCallbackError')
    expect(await sessionOf(browser, app.url)).toBeNull()
  })

  it("does not extend the exception to other hosts: another issuer whose discovery names the template is refused before any redirect", async () => {
    next = { tid: CONTOSO, iss: `${IMPOSTOR}/${CONTOSO}/v2.0` }
    mountApp(app, { providers: [MicrosoftEntraID({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: `${IMPOSTOR}/common/v2.0` })] })
    const browser = new Browser()
    const { csrfToken } = (await (await browser.request(`${app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
    const response = await browser.request(`${app.url}/api/auth/signin/microsoft-entra-id`, { body: new URLSearchParams({ csrfToken }) })
    const location = response.headers.get('location') ?? ''
    expect(location.startsWith(IMPOSTOR)).toBe(false)
    expect(new URL(location, app.url).searchParams.get('error')).toBeTruthy()
    expect(tokenRequests).toBe(0)
  })
})
