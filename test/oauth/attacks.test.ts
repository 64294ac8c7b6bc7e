/**
 * Attacks on the OAuth callback, against a real OpenID Provider. Each must be rejected with a
 * clear error code on the sign-in page, leave no session, no user or account row, and never
 * answer 5xx; every check cookie is cleared whatever the outcome.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import OIDC from 'portcullis/providers/oidc'
import { Browser, type Navigation } from '../support/browser.js'
import { forgeIdTokens, startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, signInWith, startSignIn, type Listener } from '../support/oauth-app.js'

let idp: TestIdp
let app: Listener
let db: Knex
let tokenProxy: Server
let tokenProxyUrl: string
/** Every token the token endpoint handed out, to prove none reaches the log. */
const issuedTokens: string[] = []
/** When set, the token endpoint's ID token is replaced by this function's result. */
let forgeIdToken: ((claims: Record<string, unknown>, kid: string) => Promise<string>) | undefined
/** The same, at the IdP's own token endpoint (the one discovery finds). */
let forgeAtIdp: ((claims: Record<string, unknown>, kid: string) => Promise<string>) | undefined

beforeAll(async () => {
  app = await listen()
  tokenProxy = createServer((req, res) => void proxyToken(req, res))
  await new Promise<void>((resolve) => tokenProxy.listen(0, '127.0.0.1', resolve))
  tokenProxyUrl = `http://127.0.0.1:${(tokenProxy.address() as AddressInfo).port}/token`
  const client = (id: string, provider: string) => ({ client_id: id, client_secret: `${id}-secret`, redirect_uris: [app.callbackUrl(provider)] })
  idp = await startIdp({ clients: [client('corp', 'corp'), client('other', 'other')] })
  forgeIdTokens(idp, (claims, kid) => forgeAtIdp?.(claims, kid))
  db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
})
afterAll(async () => {
  await closeListeners()
  await new Promise((resolve) => tokenProxy?.close(resolve))
  await idp?.close()
  await db?.destroy()
})

/** The IdP's token endpoint, with the ID token swapped when a test forges one. */
async function proxyToken(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const upstream = await fetch(idp.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': req.headers['content-type']!, authorization: req.headers.authorization ?? '', accept: 'application/json' },
    body: Buffer.concat(chunks),
  })
  const body = (await upstream.json()) as Record<string, unknown>
  for (const key of ['access_token', 'id_token', 'refresh_token']) if (typeof body[key] === 'string') issuedTokens.push(body[key] as string)
  if (forgeIdToken && typeof body.id_token === 'string') {
    body.id_token = await forgeIdToken(decodeJwt(body.id_token), decodeProtectedHeader(body.id_token).kid!)
  }
  res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

const provider = (id: 'corp' | 'other', overrides: Partial<Parameters<typeof OIDC>[0]> = {}) =>
  OIDC({
    id,
    name: id,
    issuer: idp.issuer,
    clientId: id,
    clientSecret: `${id}-secret`,
    checks: ['pkce', 'state', 'nonce'],
    token: tokenProxyUrl,
    dangerouslyAllowInsecureRequests: true,
    ...overrides,
  })

const CHECK_COOKIES = ['authjs.pkce.code_verifier', 'authjs.state', 'authjs.nonce']

beforeEach(async () => {
  forgeIdToken = undefined
  forgeAtIdp = undefined
  await db('Session').del()
  await db('Account').del()
  await db('User').del()
  mountApp(app, { providers: [provider('corp'), provider('other')], adapter: KnexAdapter(db) })
})

/** A browser that has been through the IdP: the callback navigation, not yet delivered. */
async function authorized(providerId: 'corp' | 'other' = 'corp', browser = new Browser()): Promise<{ browser: Browser; navigation: Navigation & { method: 'GET' } }> {
  const navigation = await browser.authorize(await startSignIn(browser, app.url, providerId))
  if (navigation.method !== 'GET') throw new Error('expected a redirect back')
  return { browser, navigation }
}

function withParams(navigation: Navigation & { method: 'GET' }, change: (params: URLSearchParams) => void, path?: string): Navigation {
  const url = new URL(navigation.url)
  if (path) url.pathname = path
  change(url.searchParams)
  return { method: 'GET', url: url.href }
}

async function rowCounts() {
  const count = async (table: string) => Number((await db(table).count({ n: '*' }))[0]!.n)
  return { users: await count('User'), accounts: await count('Account'), sessions: await count('Session') }
}

/** The callback was refused: sign-in page with this error and code, no session, nothing stored, checks cleared. */
async function expectRejected(browser: Browser, response: Response, error: string, code: string | RegExp, before = { users: 0, accounts: 0, sessions: 0 }) {
  expect(response.status).toBe(302)
  const redirect = redirectOf(response)
  expect(redirect.url.pathname).toBe('/api/auth/signin')
  expect({ error: redirect.error, code: redirect.code }).toEqual({ error, code: expect.stringMatching(code) })
  expect(response.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.session-token=') && !/Max-Age=0/i.test(cookie))).toBe(false)
  for (const name of CHECK_COOKIES) expect(browser.cookie(app.url, name)).toBeUndefined()
  expect(await sessionOf(browser, app.url)).toBeNull()
  expect(await rowCounts()).toEqual(before)
}

describe('state', () => {
  it('rejects a callback without the state parameter', async () => {
    const { browser, navigation } = await authorized()
    const response = await browser.navigate(withParams(navigation, (params) => params.delete('state')))
    await expectRejected(browser, response, 'InvalidCheck', 'state_missing')
  })

  it('rejects a replayed callback: the state cookie was used up by the first', async () => {
    const { browser, navigation } = await authorized()
    expect((await browser.navigate(navigation)).status).toBe(302)
    const before = await rowCounts()
    expect(before).toEqual({ users: 1, accounts: 1, sessions: 1 })
    await browser.request(`${app.url}/api/auth/signout`, { method: 'POST', body: new URLSearchParams({ csrfToken: await csrfToken(browser) }) })
    const replay = await browser.navigate(navigation)
    await expectRejected(browser, replay, 'InvalidCheck', 'state_cookie_missing', { ...before, sessions: 0 })
  })

  it('rejects a callback from an older flow of the same browser (a second tab replaced the cookie)', async () => {
    const { browser, navigation: first } = await authorized()
    await authorized('corp', browser)
    await expectRejected(browser, await browser.navigate(first), 'InvalidCheck', 'state_mismatch')
  })

  it("rejects another provider's flow delivered to this provider's callback", async () => {
    const { browser, navigation } = await authorized('other')
    const response = await browser.navigate(withParams(navigation, () => {}, '/api/auth/callback/corp'))
    await expectRejected(browser, response, 'InvalidCheck', 'state_provider_mismatch')
  })

  // Every check cookie is sealed with the same keys, so only the check type inside tells a nonce
  // cookie from a state cookie: without it, a value the attacker saw as a nonce could pass as state.
  it("rejects the nonce cookie copied into the state cookie's place and the state parameter: state_cookie_invalid", async () => {
    const { browser, navigation } = await authorized()
    const nonce = browser.cookie(app.url, 'authjs.nonce')!
    browser.setCookie(app.url, 'authjs.state', nonce)
    const response = await browser.navigate(withParams(navigation, (params) => params.set('state', nonce)))
    await expectRejected(browser, response, 'InvalidCheck', 'state_cookie_invalid')
  })

  it("rejects the PKCE cookie copied into the nonce cookie's place: nonce_cookie_invalid", async () => {
    const { browser, navigation } = await authorized()
    browser.setCookie(app.url, 'authjs.nonce', browser.cookie(app.url, 'authjs.pkce.code_verifier')!)
    await expectRejected(browser, await browser.navigate(navigation), 'InvalidCheck', 'nonce_cookie_invalid')
  })

  it("rejects a callback made with someone else's code and state (login CSRF)", async () => {
    const { navigation } = await authorized()
    const victim = new Browser()
    await startSignIn(victim, app.url, 'corp')
    await expectRejected(victim, await victim.navigate(navigation), 'InvalidCheck', 'state_mismatch')
  })
})

describe('PKCE and nonce', () => {
  it('rejects a callback whose PKCE cookie is missing', async () => {
    const { browser, navigation } = await authorized()
    browser.deleteCookie(app.url, 'authjs.pkce.code_verifier')
    await expectRejected(browser, await browser.navigate(navigation), 'InvalidCheck', 'pkce_cookie_missing')
  })

  it('rejects an ID token whose nonce is not the one this browser sent', async () => {
    const { browser, navigation } = await authorized()
    const { browser: other } = await authorized()
    browser.setCookie(app.url, 'authjs.nonce', other.cookie(app.url, 'authjs.nonce')!)
    await expectRejected(browser, await browser.navigate(navigation), 'InvalidCheck', 'nonce_mismatch')
  })

  it('names the cookie and the usual causes in the log line', async () => {
    const lines: unknown[][] = []
    mountApp(app, { providers: [provider('corp')], adapter: KnexAdapter(db), logger: { error: () => {}, debug: () => {}, warn: (...args: unknown[]) => void lines.push(args) } })
    const { browser, navigation } = await authorized()
    browser.deleteCookie(app.url, 'authjs.state')
    await browser.navigate(navigation)
    const line = lines.map((args) => args.join(' ')).find((text) => text.includes('InvalidCheck'))
    expect(line).toContain('"authjs.state" cookie')
    expect(line).toMatch(/SameSite/)
    expect(line).toMatch(/trust proxy/)
    expect(line).toMatch(/another host/)
    expect(line).not.toContain(new URL(navigation.url).searchParams.get('code')!)
  })
})

describe('ID token', () => {
  const cases: [string, (claims: Record<string, unknown>) => Record<string, unknown>, string][] = [
    ['for another audience', (claims) => ({ ...claims, aud: 'someone-else' }), 'id_token_audience'],
    ['from another issuer', (claims) => ({ ...claims, iss: 'https://evil.example' }), 'id_token_issuer'],
    ['expired', (claims) => ({ ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), 'id_token_expired'],
  ]
  it.each(cases)('rejects an ID token %s, signed with the IdP’s own key', async (_name, change, code) => {
    forgeIdToken = (claims) => idp.signIdToken(change(claims))
    const { browser, navigation } = await authorized()
    await expectRejected(browser, await browser.navigate(navigation), 'OAuthCallbackError', code)
  })

  it('rejects an ID token signed with a rogue key under the IdP’s key id', async () => {
    const rogue = await generateKeyPair('RS256')
    forgeIdToken = (claims, kid) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(rogue.privateKey)
    const { browser, navigation } = await authorized()
    await expectRejected(browser, await browser.navigate(navigation), 'OAuthCallbackError', 'id_token_signature')
  })

  it('accepts the same token signed honestly (the forging proxy itself is sound)', async () => {
    forgeIdToken = (claims) => idp.signIdToken(claims)
    const { browser, navigation } = await authorized()
    expect(redirectOf(await browser.navigate(navigation)).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user?.email).toBe('alice@example.com')
  })

  describe('with a provider configured by its issuer alone (every endpoint and the keys discovered)', () => {
    const discovered = () => OIDC({ id: 'corp', name: 'corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', checks: ['pkce', 'state', 'nonce'], dangerouslyAllowInsecureRequests: true })
    beforeEach(() => void mountApp(app, { providers: [discovered()], adapter: KnexAdapter(db) }))

    it('rejects an ID token signed with a rogue key under the IdP’s key id', async () => {
      const rogue = await generateKeyPair('RS256')
      forgeAtIdp = (claims, kid) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(rogue.privateKey)
      const { browser, navigation } = await authorized()
      await expectRejected(browser, await browser.navigate(navigation), 'OAuthCallbackError', 'id_token_signature')
    })

    it('accepts the same token signed honestly (the forgery is the only change)', async () => {
      forgeAtIdp = (claims) => idp.signIdToken(claims)
      const { browser, navigation } = await authorized()
      expect(redirectOf(await browser.navigate(navigation)).error).toBeNull()
      expect((await sessionOf(browser, app.url))?.user?.email).toBe('alice@example.com')
    })
  })
})

describe('the provider’s response', () => {
  it('reports error=access_denied from the provider', async () => {
    const { browser, navigation } = await authorized()
    const denied = withParams(navigation, (params) => {
      params.delete('code')
      params.set('error', 'access_denied')
      params.set('error_description', 'The user said no')
    })
    await expectRejected(browser, await browser.navigate(denied), 'OAuthCallbackError', 'access_denied')
  })

  it('rejects a code replayed after a successful sign-in, even with the original cookies', async () => {
    const { browser, navigation } = await authorized()
    const saved = Object.fromEntries(CHECK_COOKIES.map((name) => [name, browser.cookie(app.url, name)!]))
    expect((await browser.navigate(navigation)).status).toBe(302)
    const before = await rowCounts()
    const attacker = new Browser()
    for (const [name, value] of Object.entries(saved)) attacker.setCookie(app.url, name, value)
    await expectRejected(attacker, await attacker.navigate(navigation), 'OAuthCallbackError', 'invalid_grant', before)
  })

  it('rejects a code the provider never issued', async () => {
    const { browser, navigation } = await authorized()
    const forged = withParams(navigation, (params) => params.set('code', 'never-issued-code'))
    await expectRejected(browser, await browser.navigate(forged), 'OAuthCallbackError', 'invalid_grant')
  })

  it('rejects an authorization response from another issuer (mix-up, RFC 9207 iss)', async () => {
    const { browser, navigation } = await authorized()
    expect(new URL(navigation.url).searchParams.get('iss')).toBe(idp.issuer)
    const mixedUp = withParams(navigation, (params) => params.set('iss', 'https://evil.example'))
    await expectRejected(browser, await browser.navigate(mixedUp), 'OAuthCallbackError', 'issuer_mismatch')
  })

  it('answers a callback for an unknown provider with 400 listing the configured ids, not a page or a 5xx', async () => {
    const { browser, navigation } = await authorized()
    const response = await browser.navigate(withParams(navigation, () => {}, '/api/auth/callback/unknown'))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: 'InvalidProvider', message: expect.stringMatching(/^Unknown provider "unknown" \(configured: .*corp.*\)\.$/) })
    expect(await rowCounts()).toEqual({ users: 0, accounts: 0, sessions: 0 })
  })
})

describe('the log', () => {
  it('never holds a code, state, check value or token, at any level, through successes and failures', async () => {
    const lines: string[] = []
    const record = (...args: unknown[]) => void lines.push(args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' '))
    mountApp(app, { providers: [provider('corp')], adapter: KnexAdapter(db), debug: true, logger: { error: record, warn: record, debug: record } })
    const secrets: string[] = []
    const remember = (browser: Browser, navigation: Navigation) => {
      const params = new URL(navigation.url).searchParams
      secrets.push(params.get('code')!, params.get('state')!, ...CHECK_COOKIES.map((name) => browser.cookie(app.url, name)!))
    }
    issuedTokens.length = 0

    const ok = await authorized()
    remember(ok.browser, ok.navigation)
    const saved = Object.fromEntries(CHECK_COOKIES.map((name) => [name, ok.browser.cookie(app.url, name)!]))
    await ok.browser.navigate(ok.navigation)
    const replay = new Browser()
    for (const [name, value] of Object.entries(saved)) replay.setCookie(app.url, name, value)
    await replay.navigate(ok.navigation)

    forgeIdToken = (claims) => idp.signIdToken({ ...claims, aud: 'someone-else' })
    const forged = await authorized()
    remember(forged.browser, forged.navigation)
    await forged.browser.navigate(forged.navigation)

    expect(lines.some((line) => line.includes('invalid_grant'))).toBe(true)
    expect(lines.some((line) => line.includes('id_token_audience') || line.includes('"aud"'))).toBe(true)
    expect(issuedTokens.length).toBeGreaterThanOrEqual(4)
    for (const secret of [...secrets, ...issuedTokens]) {
      expect(secret.length).toBeGreaterThan(8)
      for (const line of lines) expect(line).not.toContain(secret)
    }
  })
})

async function csrfToken(browser: Browser): Promise<string> {
  return ((await (await browser.request(`${app.url}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
}

it('signs in normally after all that (the fixtures are sound)', async () => {
  const browser = new Browser()
  expect((await signInWith(browser, app.url, 'corp')).status).toBe(302)
  expect((await sessionOf(browser, app.url))?.user?.name).toBe('Alice Example')
})
