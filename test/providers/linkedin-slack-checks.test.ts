/**
 * The checks LinkedIn and Slack need instead of the OIDC defaults (PKCE and nonce), proved against
 * the in-process OpenID Provider at each one's issuer shape: neither sends a PKCE challenge (LinkedIn
 * answers a web app's `code_verifier` with `invalid_client`; Slack answers a `code_verifier` with a
 * client secret with `internal_error`), both send `state`, Slack keeps `nonce` and LinkedIn does not
 * (it does not document one), and both authenticate with the secret in the body; a forged `state`
 * is refused.
 *
 * @see https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
 * @see https://api.slack.com/authentication/sign-in-with-slack
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import LinkedIn from 'portcullis/providers/linkedin'
import Slack from 'portcullis/providers/slack'
import { Browser } from '../support/browser.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, startSignIn, type Listener } from '../support/oauth-app.js'

let app: Listener
let idp: TestIdp | undefined
beforeAll(async () => {
  app = await listen()
})
afterAll(() => closeListeners())
afterEach(async () => {
  await idp?.close()
  idp = undefined
})

const cases = [
  { id: 'linkedin', create: LinkedIn, issuerPath: '/oauth', nonce: false },
  { id: 'slack', create: Slack, issuerPath: undefined, nonce: true },
] as const

describe.each(cases)('$id', ({ id, create, issuerPath, nonce }) => {
  async function setUp() {
    idp = await startIdp({
      issuerPath,
      // client_secret_post only: a Basic header would be refused.
      clients: [{ client_id: `${id}-client`, client_secret: `${id}-secret`, redirect_uris: [app.callbackUrl(id)], token_endpoint_auth_method: 'client_secret_post' }],
    })
    mountApp(app, { providers: [create({ issuer: idp.issuer, clientId: `${id}-client`, clientSecret: `${id}-secret`, dangerouslyAllowInsecureRequests: true })] })
  }

  it(`sends state${nonce ? ' and nonce' : ''} and no PKCE challenge, and signs in with the secret in the body`, async () => {
    await setUp()
    const browser = new Browser()
    const authorizationUrl = new URL(await startSignIn(browser, app.url, id))
    expect(authorizationUrl.searchParams.has('code_challenge')).toBe(false)
    expect(authorizationUrl.searchParams.has('code_challenge_method')).toBe(false)
    expect(authorizationUrl.searchParams.get('state')).toEqual(expect.stringMatching(/\S{16,}/))
    expect(authorizationUrl.searchParams.has('nonce')).toBe(nonce)
    expect(authorizationUrl.searchParams.get('scope')).toBe('openid profile email')
    const callback = await finishSignIn(browser, await browser.authorize(authorizationUrl.href, 'alice'))
    expect(redirectOf(callback).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toMatchObject({ id: 'alice', email: 'alice@example.com' })
  })

  it('refuses a callback whose state was forged', async () => {
    await setUp()
    const browser = new Browser()
    const navigation = await browser.authorize(await startSignIn(browser, app.url, id), 'alice')
    const forged = new URL(navigation.url)
    forged.searchParams.set('state', 'forged-state-value-0000')
    const callback = await finishSignIn(browser, { method: 'GET', url: forged.href })
    expect(redirectOf(callback).error).not.toBeNull()
    expect(await sessionOf(browser, app.url)).toBeNull()
  })
})
