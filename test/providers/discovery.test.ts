/**
 * Every OpenID provider of the catalogue signed in once through discovery: the in-process
 * oidc-provider stands in for the real one, with its issuer at the provider's issuer shape
 * (`"discovery": { "issuerPath": "/realms/test" }` in test/providers/fixtures/<id>.json: Keycloak's
 * `/realms/<realm>`, Entra's `/<tenant>/v2.0`, Auth0's `/`...). The provider is called with
 * `{ issuer, clientId, clientSecret, dangerouslyAllowInsecureRequests: true, ...discovery.options }`,
 * so its own defaults (scopes, client authentication, checks, response mode, userinfo) are what
 * run; the session user must be the provider's mapping of the claims the IdP releases for the
 * scopes the provider asks for.
 */
import { generateKeyPair, SignJWT } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import type { OAuthConfig } from 'portcullis/providers/oauth'
import type { OIDCConfig } from 'portcullis/providers/oidc'
import { catalogueIds, loadProviderModule } from '../../scripts/providers-table-lib.js'
import { Browser } from '../support/browser.js'
import { forgeIdTokens, startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, signInWith, type Listener } from '../support/oauth-app.js'
import { readFixture, type DiscoveryRun } from '../support/provider-fixtures.js'

/** The test IdP's account `alice` (see test/support/idp.ts) and the scope releasing each claim. */
const ALICE = { sub: 'alice', name: 'Alice Example', preferred_username: 'alice', email: 'alice@example.com', email_verified: true }
const SCOPE_OF_CLAIM: Record<string, string> = { name: 'profile', preferred_username: 'profile', email: 'email', email_verified: 'email' }

const runs = catalogueIds()
  .map((id) => ({ id, discovery: readFixture(id)?.discovery }))
  .filter((entry): entry is { id: string; discovery: DiscoveryRun } => typeof entry.discovery === 'object' && entry.discovery !== null)

let app: Listener
beforeAll(async () => {
  app = await listen()
})
afterAll(() => closeListeners())

/**
 * The claims the IdP releases: `sub` and the provider's own with `openid`, the standard ones by
 * scope or when named in a `claims` request parameter (OIDC Core §5.5).
 */
function releasedClaims(params: Record<string, string> | undefined, extra: Record<string, unknown>): Record<string, unknown> {
  const scopes = (params?.scope ?? 'openid profile email').split(/\s+/)
  const requested = params?.claims ? (JSON.parse(params.claims) as Record<string, Record<string, unknown> | undefined>) : {}
  const named = new Set([...Object.keys(requested.id_token ?? {}), ...Object.keys(requested.userinfo ?? {})])
  const claims: Record<string, unknown> = { ...extra, sub: ALICE.sub }
  for (const [claim, value] of Object.entries(ALICE)) {
    if (claim === 'sub') continue
    const needed = SCOPE_OF_CLAIM[claim]
    if ((needed && scopes.includes(needed)) || named.has(claim)) claims[claim] = claim in extra ? extra[claim] : value
    else delete claims[claim]
  }
  return claims
}

it('has discovery runs to make (the catalogue has OpenID providers)', () => {
  expect(runs.length).toBeGreaterThan(0)
})

describe.each(runs)('$id', ({ id, discovery }) => {
  let idp: TestIdp | undefined
  afterEach(async () => {
    await idp?.close()
    idp = undefined
  })

  /** The IdP at the provider's issuer shape, and the provider configured by that issuer alone, mounted. */
  async function startProvider(): Promise<{ idp: TestIdp; provider: OAuthConfig | OIDCConfig; extraClaims: Record<string, unknown> }> {
    const module = await loadProviderModule(id)
    const bare = module.default()
    const extraClaims = discovery.claims ?? {}
    idp = await startIdp({
      issuerPath: discovery.issuerPath,
      clients: [
        {
          client_id: `${id}-client`,
          client_secret: `${id}-client-secret`,
          redirect_uris: [app.callbackUrl(id)],
          token_endpoint_auth_method: bare.client?.token_endpoint_auth_method ?? 'client_secret_basic',
        },
      ],
      claims: () => extraClaims,
      releasedClaims: Object.keys(extraClaims).filter((claim) => !(claim in ALICE)),
    })
    const provider = module.default({
      issuer: idp.issuer,
      clientId: `${id}-client`,
      clientSecret: `${id}-client-secret`,
      dangerouslyAllowInsecureRequests: true,
      ...discovery.options,
    }) as OAuthConfig | OIDCConfig
    expect(provider.type).toBe('oidc')
    if (discovery.issuerPath) expect(new URL(idp.issuer).pathname).toBe(discovery.issuerPath)
    mountApp(app, { providers: [provider] })
    return { idp, provider, extraClaims }
  }

  it(`signs in through discovery at an issuer shaped ${JSON.stringify(discovery.issuerPath ?? '')}, the session user being the mapped claims`, async () => {
    const { provider, extraClaims } = await startProvider()
    const browser = new Browser()
    const callback = await signInWith(browser, app.url, id, 'alice')
    expect(redirectOf(callback)).toMatchObject({ error: null })
    expect(callback.headers.get('location')).toBe(`${app.url}/`)

    const authorization = typeof provider.authorization === 'object' ? provider.authorization : {}
    const expected = await provider.profile!(releasedClaims(authorization.params, extraClaims) as never, {})
    expect(typeof expected.id === 'string' && expected.id.length > 0).toBe(true)
    const session = await sessionOf(browser, app.url)
    // The address only when the mapping marks it verified (the core drops any other).
    const email = expected.emailVerified === true ? (expected.email ?? null) : null
    expect(session?.user).toEqual({ id: expected.id, name: expected.name ?? null, email, image: expected.image ?? null })
  })

  // The ID token's signature is what proves the IdP issued it: the token endpoint's TLS connection
  // is not enough (a compromised or mixed-up endpoint, a proxy). With the provider configured by
  // its issuer alone, the keys come from the discovered jwks_uri.
  it('refuses an ID token signed with a rogue key under the IdP’s key id, from the discovered token endpoint', async () => {
    const { idp: server } = await startProvider()
    const rogue = await generateKeyPair('RS256')
    forgeIdTokens(server, (claims, kid) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(rogue.privateKey))

    const browser = new Browser()
    const callback = await signInWith(browser, app.url, id, 'alice')
    expect(redirectOf(callback)).toMatchObject({ error: 'OAuthCallbackError', code: 'id_token_signature' })
    expect(redirectOf(callback).url.pathname).toBe('/api/auth/signin')
    expect(await sessionOf(browser, app.url)).toBeNull()
  })

  it('accepts the same ID token re-signed with the IdP’s own key (the forgery above is the only change)', async () => {
    const { idp: server } = await startProvider()
    forgeIdTokens(server, (claims) => server.signIdToken(claims))
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, id, 'alice'))).toMatchObject({ error: null })
    expect(await sessionOf(browser, app.url)).not.toBeNull()
  })
})
