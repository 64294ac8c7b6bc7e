/**
 * redirectProxyUrl (spec §2.1): one deployment (the proxy) is the redirect URI registered with the
 * provider; a sign-in started on another deployment (e.g. a preview) comes back through it and is
 * forwarded to where it started, which the state names, sealed with the shared secret. Two app
 * instances on two ports, a real OpenID Provider.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { OTHER_SECRET } from '../support/security-app.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, startSignIn, type Listener } from '../support/oauth-app.js'
import { recordingLogger } from '../email/email-app.js'

let idp: TestIdp
let proxy: Listener
let preview: Listener
let stranger: Listener
let forwarding: Listener
const proxyLog = recordingLogger()

beforeAll(async () => {
  ;[proxy, preview, stranger, forwarding] = await Promise.all([listen(), listen(), listen(), listen()])
  idp = await startIdp({ clients: [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [proxy.callbackUrl('corp')] }] })
  const provider = (id = 'corp') => OIDC({ id, name: id, issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true })
  const redirectProxyUrl = `${proxy.url}/api/auth`
  // The proxy forwards to the preview (and the stranger, whose state it cannot open anyway), nothing else.
  process.env.AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS = `${stranger.url}, ${forwarding.url}`
  try {
    mountApp(proxy, { providers: [provider(), provider('other')], redirectProxyUrl, redirectProxy: { allowedOrigins: [preview.url, stranger.url] }, logger: proxyLog.logger })
    process.env.AUTH_REDIRECT_PROXY_URL = redirectProxyUrl
    // The preview deployment takes the proxy URL from the environment.
    mountApp(preview, { providers: [provider()] })
  } finally {
    delete process.env.AUTH_REDIRECT_PROXY_URL
    delete process.env.AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS
  }
  // Same proxy URL, another secret: a deployment the proxy cannot vouch for.
  mountApp(stranger, { providers: [provider()], redirectProxyUrl, secret: OTHER_SECRET })
  // A deployment that trusts X-Forwarded-Host (trustHost behind a proxy that passes it through).
  mountApp(forwarding, { providers: [provider()], redirectProxyUrl, trustHost: true })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

describe('redirectProxyUrl', () => {
  it('sends the provider the proxy’s redirect URI, with state enabled automatically', async () => {
    const url = new URL(await startSignIn(new Browser(), preview.url, 'corp'))
    expect(url.searchParams.get('redirect_uri')).toBe(proxy.callbackUrl('corp'))
    expect(url.searchParams.get('state')).toMatch(/^[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+$/)
  })

  it('signs in on the deployment that started the flow: the proxy forwards the callback there', async () => {
    const browser = new Browser()
    const navigation = await browser.authorize(await startSignIn(browser, preview.url, 'corp', { callbackUrl: '/dashboard' }))
    expect(navigation.url.startsWith(proxy.callbackUrl('corp'))).toBe(true)
    const atProxy = await browser.navigate(navigation)
    expect(atProxy.status).toBe(302)
    const forwarded = new URL(atProxy.headers.get('location')!)
    expect(forwarded.origin + forwarded.pathname).toBe(preview.callbackUrl('corp'))
    expect(forwarded.searchParams.get('code')).toBe(new URL(navigation.url).searchParams.get('code'))
    // The proxy signed nobody in and kept no cookie of the flow.
    expect(atProxy.headers.getSetCookie()).toEqual([])

    const callback = await browser.request(forwarded.href)
    expect(callback.headers.get('location')).toBe(`${preview.url}/dashboard`)
    expect((await sessionOf(browser, preview.url))?.user?.email).toBe('alice@example.com')
    expect(await sessionOf(browser, proxy.url)).toBeNull()
  })

  it('signs in on the proxy itself without forwarding', async () => {
    const browser = new Browser()
    const callback = await browser.navigate(await browser.authorize(await startSignIn(browser, proxy.url, 'corp')))
    expect(callback.headers.get('location')).toBe(`${proxy.url}/`)
    expect((await sessionOf(browser, proxy.url))?.user?.id).toBe('alice')
  })

  it('does not forward a state whose sealed origin was tampered with', async () => {
    const browser = new Browser()
    const navigation = await browser.authorize(await startSignIn(browser, preview.url, 'corp'))
    const url = new URL(navigation.url)
    const state = url.searchParams.get('state')!
    const parts = state.split('.')
    // Flip one character of the ciphertext, where the origin is sealed.
    parts[3] = parts[3]!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))
    url.searchParams.set('state', parts.join('.'))
    const atProxy = await browser.navigate({ method: 'GET', url: url.href })
    const redirect = redirectOf(atProxy)
    expect(redirect.url.origin).toBe(proxy.url)
    expect(redirect.url.pathname).toBe('/api/auth/signin')
    expect(redirect.error).toBe('InvalidCheck')
    expect(await sessionOf(browser, preview.url)).toBeNull()
  })

  it('does not forward to an origin it does not allow: a sign-in started with a forged Host cannot have the victim\'s code sent there', async () => {
    // The attacker starts the sign-in with a Host of his choice and hands the authorization URL to a victim.
    const attacker = new Browser()
    const { csrfToken } = (await (await attacker.request(`${forwarding.url}/api/auth/csrf`)).json()) as { csrfToken: string }
    const start = await attacker.request(`${forwarding.url}/api/auth/signin/corp`, { body: new URLSearchParams({ csrfToken }), headers: { 'x-forwarded-host': 'evil.example:4444' } })
    const authorizationUrl = start.headers.get('location')!
    expect(new URL(authorizationUrl).searchParams.get('redirect_uri')).toBe(proxy.callbackUrl('corp'))
    const victim = new Browser()
    const atProxy = await victim.navigate(await victim.authorize(authorizationUrl, 'victim'))
    const redirect = redirectOf(atProxy)
    expect(redirect.url.origin).toBe(proxy.url)
    expect(redirect).toMatchObject({ error: 'InvalidCheck', code: 'state_origin_refused' })
    expect(atProxy.headers.get('location')).not.toContain('evil.example')
    expect(proxyLog.lines.warn.join('\n')).toContain('did not forward the callback to "http://evil.example:4444": that origin is neither this deployment\'s nor in redirectProxy.allowedOrigins')
  })

  // A state names the provider its flow is for: delivered to another provider's callback on the
  // proxy, it is not forwarded (that provider's code would reach the flow's deployment as the first's).
  it("does not forward a state sealed for another provider's flow", async () => {
    const browser = new Browser()
    const url = new URL((await browser.authorize(await startSignIn(browser, preview.url, 'corp'))).url)
    url.pathname = url.pathname.replace(/\/corp$/, '/other')
    const atProxy = await browser.navigate({ method: 'GET', url: url.href })
    expect(redirectOf(atProxy).url.origin).toBe(proxy.url)
    expect(redirectOf(atProxy).error).toBe('InvalidCheck')
    expect(await sessionOf(browser, preview.url)).toBeNull()
  })

  it('the config\'s allowedOrigins win over AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS; either is read', async () => {
    // The proxy was given both: the config's list (preview, stranger), not the env's (stranger, forwarding).
    const browser = new Browser()
    const atProxy = await browser.navigate(await browser.authorize(await startSignIn(browser, forwarding.url, 'corp')))
    expect(redirectOf(atProxy)).toMatchObject({ error: 'InvalidCheck', code: 'state_origin_refused' })
    process.env.AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS = `https://*.preview.example ${forwarding.url}`
    try {
      mountApp(proxy, { providers: [OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true })], redirectProxyUrl: `${proxy.url}/api/auth` })
    } finally {
      delete process.env.AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS
    }
    const second = new Browser()
    const forwarded = await second.navigate(await second.authorize(await startSignIn(second, forwarding.url, 'corp')))
    expect(new URL(forwarded.headers.get('location')!).origin).toBe(forwarding.url)
  })

  it('does not forward for a deployment sealed with another secret', async () => {
    const browser = new Browser()
    const navigation = await browser.authorize(await startSignIn(browser, stranger.url, 'corp'))
    const atProxy = await browser.navigate(navigation)
    expect(redirectOf(atProxy).url.origin).toBe(proxy.url)
    expect(redirectOf(atProxy).error).toBe('InvalidCheck')
    expect(await sessionOf(browser, stranger.url)).toBeNull()
  })
})
