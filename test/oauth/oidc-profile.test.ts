/**
 * Where an OpenID Connect sign-in takes its profile from: the ID token's claims, completed by the
 * userinfo endpoint when the issuer has one, or by the provider's own `userinfo.request`; and that a
 * token response without an ID token is refused (the code flow of OIDC Core §3.1.3.3 always has one).
 * Against a real OpenID provider (oidc-provider) that releases the profile claims at userinfo only, or
 * has no userinfo endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { startIdp, type IdpOptions, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, signInWith, type Listener } from '../support/oauth-app.js'

let app: Listener
const idps: TestIdp[] = []

beforeAll(async () => {
  app = await listen()
})
afterAll(async () => {
  await closeListeners()
  await Promise.all(idps.map((idp) => idp.close()))
})

async function idpWith(options: Omit<IdpOptions, 'clients'>): Promise<TestIdp> {
  const idp = await startIdp({ clients: [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [app.callbackUrl('corp')] }], ...options })
  idps.push(idp)
  return idp
}

const corp = (idp: TestIdp, overrides: Partial<Parameters<typeof OIDC>[0]> = {}) =>
  OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true, ...overrides })

/** Every request the IdP answers, by path. */
function requestsTo(idp: TestIdp): string[] {
  const paths: string[] = []
  idp.provider.use(async (ctx, next) => {
    paths.push(ctx.path)
    await next()
  })
  return paths
}

describe('the profile of an OpenID Connect sign-in', () => {
  it('completes the ID token with the claims the IdP releases at userinfo only', async () => {
    const idp = await idpWith({ profileClaimsIn: 'userinfo' })
    const paths = requestsTo(idp)
    mountApp(app, { providers: [corp(idp)] })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'corp')).url.href).toBe(`${app.url}/`)
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'alice', name: 'Alice Example', email: 'alice@example.com', image: null })
    expect(paths).toContain('/me')
  })

  it('with an issuer that has no userinfo endpoint, is the ID token\'s claims, and asks for nothing more', async () => {
    const idp = await idpWith({ userinfo: false })
    const paths = requestsTo(idp)
    mountApp(app, { providers: [corp(idp)] })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'corp')).url.href).toBe(`${app.url}/`)
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'alice', name: 'Alice Example', email: 'alice@example.com', image: null })
    expect(paths).not.toContain('/me')
  })

  it("takes userinfo.request's claims over the endpoint's, the ID token's sub kept", async () => {
    const idp = await idpWith({ profileClaimsIn: 'userinfo' })
    const paths = requestsTo(idp)
    const seen: string[] = []
    mountApp(app, {
      providers: [
        corp(idp, {
          userinfo: {
            request: async ({ tokens }) => {
              seen.push(String(tokens.access_token))
              return { sub: 'mallory', name: 'Named By Request', email: 'request@example.com', email_verified: true }
            },
          },
        }),
      ],
    })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'corp')).url.href).toBe(`${app.url}/`)
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'alice', name: 'Named By Request', email: 'request@example.com', image: null })
    expect(seen).toHaveLength(1)
    expect(paths).not.toContain('/me')
  })

  it('refuses a token response without an ID token (a sign-in whose scope lacks openid): no session', async () => {
    const idp = await idpWith({})
    // Without the nonce check too: oidc-provider refuses a nonce in a request that is not OpenID's.
    mountApp(app, { providers: [corp(idp, { authorization: { params: { scope: 'email' } }, checks: ['pkce', 'state'] })] })
    const browser = new Browser()
    const callback = redirectOf(await signInWith(browser, app.url, 'corp'))
    // openid-client's own check (an invalid response), not a failure further on for want of claims.
    expect([callback.error, callback.code]).toEqual(['OAuthCallbackError', 'invalid_response'])
    expect(await sessionOf(browser, app.url)).toBeNull()
  })
})
