/**
 * Authorization code + PKCE sign-ins against a real OpenID Provider (oidc-provider, in-process):
 * OIDC with discovery (JWT and database sessions), plain OAuth 2 with the profile from an API,
 * client_secret_post, a public client, response_mode=form_post, Express 4 and 5, and the
 * server-side signIn.
 */
import express from 'express'
import express4 from 'express4'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { JWTCallbackParams } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import OAuth from 'portcullis/providers/oauth'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, signInWith, startSignIn, type Listener } from '../support/oauth-app.js'

let idp: TestIdp
let app: Listener
let app4: Listener

const client = (id: string, listener: Listener, provider: string, extra: Record<string, unknown> = {}) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  redirect_uris: [listener.callbackUrl(provider)],
  ...extra,
})

beforeAll(async () => {
  app = await listen()
  app4 = await listen()
  idp = await startIdp({
    clients: [
      client('basic', app, 'corp'),
      client('basic4', app4, 'corp'),
      client('post', app, 'corp-post', { token_endpoint_auth_method: 'client_secret_post' }),
      { client_id: 'public', redirect_uris: [app.callbackUrl('corp-public')], token_endpoint_auth_method: 'none' },
      client('formpost', app, 'corp-formpost'),
      client('plain', app, 'acme', { scope: 'read:user' }),
    ],
  })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

const corp = (overrides: Partial<Parameters<typeof OIDC>[0]> = {}) =>
  OIDC({ id: 'corp', name: 'Corp SSO', issuer: idp.issuer, clientId: 'basic', clientSecret: 'basic-secret', dangerouslyAllowInsecureRequests: true, ...overrides })

/** Every jwt callback call, for assertions on what it received. */
function recordJwt() {
  const calls: JWTCallbackParams[] = []
  const jwt = (params: JWTCallbackParams) => {
    calls.push(params)
    return params.token
  }
  return { calls, jwt }
}

describe('OIDC with discovery, JWT sessions', () => {
  it('signs in, with the profile from the ID token and userinfo, the account with its tokens, and clears the checks', async () => {
    const { calls, jwt } = recordJwt()
    mountApp(app, { providers: [corp()], callbacks: { jwt } })
    const browser = new Browser()
    const authorizationUrl = await startSignIn(browser, app.url, 'corp', { callbackUrl: '/after' })
    const authorization = new URL(authorizationUrl)
    expect(authorization.origin).toBe(idp.issuer)
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      client_id: 'basic',
      response_type: 'code',
      scope: 'openid profile email',
      redirect_uri: app.callbackUrl('corp'),
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      nonce: expect.any(String),
    })
    expect(authorization.searchParams.has('state')).toBe(false)
    expect(browser.cookie(app.url, 'authjs.pkce.code_verifier')).toBeDefined()
    expect(browser.cookie(app.url, 'authjs.nonce')).toBeDefined()

    const callback = await finishSignIn(browser, await browser.authorize(authorizationUrl, 'alice'))
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe(`${app.url}/after`)
    // Single use: the callback clears every check cookie.
    expect(browser.cookie(app.url, 'authjs.pkce.code_verifier')).toBeUndefined()
    expect(browser.cookie(app.url, 'authjs.nonce')).toBeUndefined()

    const session = await sessionOf(browser, app.url)
    expect(session?.user).toEqual({ id: 'alice', name: 'Alice Example', email: 'alice@example.com', image: null })
    const signIn = calls.find((call) => call.trigger === 'signIn')!
    expect(signIn.isNewUser).toBe(false)
    expect(signIn.profile).toMatchObject({ sub: 'alice', iss: idp.issuer, aud: 'basic', email_verified: true, preferred_username: 'alice' })
    expect(signIn.account).toMatchObject({
      provider: 'corp',
      type: 'oidc',
      providerAccountId: 'alice',
      token_type: 'bearer',
      access_token: expect.any(String),
      id_token: expect.any(String),
      expires_at: expect.any(Number),
    })
    expect(signIn.account!.expires_at).toBeGreaterThan(Date.now() / 1000 + 3000)
  })

  it('takes clientId, clientSecret and issuer from AUTH_<ID>_ID/_SECRET/_ISSUER', async () => {
    process.env.AUTH_CORP_ID = 'basic'
    process.env.AUTH_CORP_SECRET = 'basic-secret'
    process.env.AUTH_CORP_ISSUER = idp.issuer
    try {
      mountApp(app, { providers: [OIDC({ id: 'corp', name: 'Corp SSO', dangerouslyAllowInsecureRequests: true })] })
    } finally {
      delete process.env.AUTH_CORP_ID
      delete process.env.AUTH_CORP_SECRET
      delete process.env.AUTH_CORP_ISSUER
    }
    const browser = new Browser()
    expect((await signInWith(browser, app.url, 'corp')).status).toBe(302)
    expect((await sessionOf(browser, app.url))?.user?.email).toBe('alice@example.com')
  })

  it('maps the profile with the provider profile() (here with userinfo: false, from the ID token)', async () => {
    mountApp(app, {
      providers: [corp({ userinfo: false, profile: (profile) => ({ id: `corp:${String(profile.sub)}`, name: String(profile.preferred_username), email: profile.email, emailVerified: profile.email_verified === true }) })],
    })
    const browser = new Browser()
    await signInWith(browser, app.url, 'corp', 'bob')
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'corp:bob', name: 'bob', email: 'bob@example.com' })
  })

  it('runs on Express 4 as on Express 5', async () => {
    mountApp(app4, { providers: [corp({ clientId: 'basic4', clientSecret: 'basic4-secret' })] }, express4 as unknown as () => express.Express)
    const browser = new Browser()
    expect((await signInWith(browser, app4.url, 'corp', 'carol')).headers.get('location')).toBe(`${app4.url}/`)
    expect((await sessionOf(browser, app4.url))?.user?.name).toBe('Carol Example')
  })

  it('passes authorizationParams through, but never lets them replace the flow’s own parameters', async () => {
    mountApp(app, { providers: [corp({ authorization: { params: { scope: 'openid email' } } })] })
    const browser = new Browser()
    const url = new URL(await startSignIn(browser, app.url, 'corp', { query: 'prompt=login&login_hint=dave&redirect_uri=https%3A%2F%2Fevil.example%2F&nonce=fixed' }))
    expect(url.searchParams.get('prompt')).toBe('login')
    expect(url.searchParams.get('login_hint')).toBe('dave')
    expect(url.searchParams.get('scope')).toBe('openid email')
    expect(url.searchParams.get('redirect_uri')).toBe(app.callbackUrl('corp'))
    expect(url.searchParams.get('nonce')).not.toBe('fixed')
    expect((await finishSignIn(browser, await browser.authorize(url.href, 'dave'))).status).toBe(302)
    // The provider's scope (no `profile`): the e-mail claims only.
    expect((await sessionOf(browser, app.url))?.user).toMatchObject({ id: 'dave', name: null, email: 'dave@example.com' })
  })
})

describe('discovery', () => {
  it('is fetched once per provider, and retried after a failure', async () => {
    let discoveries = 0
    let failing = true
    idp.provider.use(async (ctx, next) => {
      if (ctx.path !== '/.well-known/openid-configuration') return next()
      discoveries++
      if (failing) ctx.status = 503
      else await next()
    })
    mountApp(app, { providers: [corp()] })
    const browser = new Browser()
    const { csrfToken } = (await (await browser.request(`${app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
    const failed = await browser.request(`${app.url}/api/auth/signin/corp`, { body: new URLSearchParams({ csrfToken }) })
    expect(redirectOf(failed)).toMatchObject({ error: 'OAuthSignInError' })
    expect(discoveries).toBe(1)

    failing = false
    expect((await signInWith(browser, app.url, 'corp')).status).toBe(302)
    expect((await signInWith(new Browser(), app.url, 'corp', 'bob')).status).toBe(302)
    expect(discoveries).toBe(2)
  })
})

describe('OIDC with discovery, database sessions', () => {
  let db: Knex
  beforeAll(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
  })
  afterAll(() => db?.destroy())

  it('creates the user and the account once, then signs the same user in again', async () => {
    mountApp(app, { providers: [corp()], adapter: KnexAdapter(db) })
    const first = new Browser()
    await signInWith(first, app.url, 'corp', 'erin')
    const session = await sessionOf(first, app.url)
    expect(session?.user).toMatchObject({ name: 'Erin Example', email: 'erin@example.com' })
    expect(first.cookie(app.url, 'authjs.session-token')).toMatch(/^[\w-]+$/)

    const second = new Browser()
    await signInWith(second, app.url, 'corp', 'erin')
    expect((await sessionOf(second, app.url))?.user?.id).toBe(session!.user!.id)
    expect(await db('User').count({ n: '*' })).toEqual([{ n: 1 }])
    const accounts = await db('Account').select('userId', 'type', 'provider', 'providerAccountId', 'access_token', 'id_token', 'expires_at')
    expect(accounts).toEqual([
      { userId: session!.user!.id, type: 'oidc', provider: 'corp', providerAccountId: 'erin', access_token: expect.any(String), id_token: expect.any(String), expires_at: expect.any(Number) },
    ])
    expect(await db('Session').count({ n: '*' })).toEqual([{ n: 2 }])
  })
})

describe('other clients and response modes', () => {
  it('plain OAuth 2 (no openid scope): the profile comes from the userinfo API', async () => {
    const { calls, jwt } = recordJwt()
    mountApp(app, {
      callbacks: { jwt },
      providers: [
        OAuth({
          id: 'acme',
          name: 'Acme',
          clientId: 'plain',
          clientSecret: 'plain-secret',
          authorization: { url: idp.authorizationEndpoint, params: { scope: 'read:user' } },
          token: idp.tokenEndpoint,
          userinfo: idp.apiUrl,
          // The test IdP's API, like GitHub's /user, shows only verified addresses.
          profile: (me) => ({ id: String(me.id), name: String(me.name), email: me.email as string, emailVerified: true }),
          dangerouslyAllowInsecureRequests: true,
        }),
      ],
    })
    const browser = new Browser()
    const authorizationUrl = new URL(await startSignIn(browser, app.url, 'acme'))
    expect(authorizationUrl.searchParams.get('scope')).toBe('read:user')
    expect(authorizationUrl.searchParams.has('nonce')).toBe(false)
    expect((await finishSignIn(browser, await browser.authorize(authorizationUrl.href, 'frank'))).status).toBe(302)
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'frank', name: 'Frank Example', email: 'frank@example.com' })
    const account = calls.find((call) => call.trigger === 'signIn')!.account!
    expect(account).toMatchObject({ type: 'oauth', provider: 'acme', providerAccountId: 'frank', scope: 'read:user' })
    expect(account.id_token).toBeUndefined()
  })

  it('client_secret_post', async () => {
    mountApp(app, { providers: [corp({ id: 'corp-post', clientId: 'post', clientSecret: 'post-secret', client: { token_endpoint_auth_method: 'client_secret_post' } })] })
    const browser = new Browser()
    expect((await signInWith(browser, app.url, 'corp-post')).status).toBe(302)
    expect((await sessionOf(browser, app.url))?.user?.id).toBe('alice')
  })

  it('a public client (no secret, PKCE)', async () => {
    mountApp(app, { providers: [corp({ id: 'corp-public', clientId: 'public', clientSecret: undefined, client: { token_endpoint_auth_method: 'none' } })] })
    const browser = new Browser()
    expect((await signInWith(browser, app.url, 'corp-public')).status).toBe(302)
    expect((await sessionOf(browser, app.url))?.user?.id).toBe('alice')
  })

  describe('response_mode=form_post', () => {
    const formPost = () => corp({ id: 'corp-formpost', clientId: 'formpost', clientSecret: 'formpost-secret', authorization: { params: { response_mode: 'form_post' } } })

    it('survives SameSite=Lax: the cross-site POST carries no cookies and is turned into a same-site GET', async () => {
      mountApp(app, { providers: [formPost()] })
      const browser = new Browser()
      const navigation = await browser.authorize(await startSignIn(browser, app.url, 'corp-formpost'))
      expect(navigation.method).toBe('POST')
      // What a browser sends with a cross-site POST under SameSite=Lax: none of the app's cookies.
      const post = await browser.request(navigation.url, {
        body: (navigation as { body: URLSearchParams }).body,
        headers: { cookie: '', origin: idp.issuer, 'sec-fetch-site': 'cross-site' },
      })
      expect(post.status).toBe(303)
      const target = new URL(post.headers.get('location')!)
      expect(target.href.startsWith(app.callbackUrl('corp-formpost'))).toBe(true)
      expect(target.searchParams.get('code')).toBe((navigation as { body: URLSearchParams }).body.get('code'))
      const callback = await browser.request(target.href)
      expect(callback.status).toBe(302)
      expect(redirectOf(callback).error).toBeNull()
      expect((await sessionOf(browser, app.url))?.user?.id).toBe('alice')
    })

    it('is not blocked by the CSRF check when the cookies do arrive (SameSite=None)', async () => {
      mountApp(app, { providers: [formPost()] })
      const browser = new Browser()
      const navigation = (await browser.authorize(await startSignIn(browser, app.url, 'corp-formpost'))) as { method: 'POST'; url: string; body: URLSearchParams }
      // A cross-site POST, as the provider's page sends it: exempt from the CSRF and origin checks.
      const callback = await browser.request(navigation.url, { body: navigation.body, headers: { origin: idp.issuer, 'sec-fetch-site': 'cross-site' } })
      expect(callback.status).toBe(302)
      expect(redirectOf(callback).url.href).toBe(`${app.url}/`)
      expect((await sessionOf(browser, app.url))?.user?.id).toBe('alice')
    })
  })
})

describe('server-side signIn(provider, options, authorizationParams)', () => {
  it('with redirect: false, resolves with the authorization URL and sets the check cookies', async () => {
    const portcullis = mountApp(app, { providers: [corp()] })
    const withLogin = express()
    withLogin.use('/api/auth', portcullis.handlers)
    withLogin.get('/me', async (req, res) => void res.json(await portcullis.auth(req, res)))
    withLogin.post(
      '/login',
      express.urlencoded({ extended: false }),
      portcullis.auth(async (_req, res) => {
        res.json({ url: await portcullis.signIn('corp', { redirect: false, redirectTo: '/dashboard' }, { prompt: 'login' }) })
      }),
    )
    app.mount(withLogin)

    const browser = new Browser()
    const { csrfToken } = (await (await browser.request(`${app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
    const { url } = (await (await browser.request(`${app.url}/login`, { body: new URLSearchParams({ csrfToken }) })).json()) as { url: string }
    const authorization = new URL(url)
    expect(authorization.origin).toBe(idp.issuer)
    expect(authorization.searchParams.get('prompt')).toBe('login')
    expect(browser.cookie(app.url, 'authjs.pkce.code_verifier')).toBeDefined()

    const callback = await finishSignIn(browser, await browser.authorize(url, 'gina'))
    expect(callback.headers.get('location')).toBe(`${app.url}/dashboard`)
    expect((await sessionOf(browser, app.url))?.user?.name).toBe('Gina Example')
  })

  // Passport's `app.get('/auth/github', passport.authenticate('github'))`, the most common Express pattern.
  it('starts from a link (GET, no CSRF token), also one on another site: the check cookies bind the flow to this browser', async () => {
    const portcullis = mountApp(app, { providers: [corp()] })
    const withLink = express()
    withLink.use('/api/auth', portcullis.handlers)
    withLink.get('/me', async (req, res) => void res.json(await portcullis.auth(req, res)))
    withLink.get('/login/corp', portcullis.auth(() => portcullis.signIn('corp', { redirectTo: '/dashboard' })))
    withLink.get('/login/corp/url', portcullis.auth(async (_req, res) => void res.json({ url: await portcullis.signIn('corp', { redirect: false }) })))
    app.mount(withLink)

    for (const site of ['same-origin', 'cross-site']) {
      const browser = new Browser()
      const start = await browser.request(`${app.url}/login/corp`, { headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'navigate' } })
      expect(start.status).toBe(302)
      const url = start.headers.get('location')!
      expect(new URL(url).origin).toBe(idp.issuer)
      const callback = await finishSignIn(browser, await browser.authorize(url, 'gina'))
      expect(callback.headers.get('location')).toBe(`${app.url}/dashboard`)
      expect((await sessionOf(browser, app.url))?.user?.name).toBe('Gina Example')
    }
    const browser = new Browser()
    const { url } = (await (await browser.request(`${app.url}/login/corp/url`)).json()) as { url: string }
    expect(new URL(url).origin).toBe(idp.issuer)
    // The flow stays bound to the browser that started it: another browser cannot finish it.
    const stranger = new Browser()
    const stolen = await finishSignIn(stranger, await browser.authorize(url, 'gina'))
    expect(redirectOf(stolen).error).toBe('InvalidCheck')
    expect(await sessionOf(stranger, app.url)).toBeNull()
  })
})
