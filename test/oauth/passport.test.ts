/**
 * The Passport bridge: a constructed passport-oauth2 strategy (and a published strategy built on it,
 * passport-github2) drives a Portcullis sign-in. `passport-oauth2` against the real in-process OpenID
 * Provider (as a plain OAuth 2 server: its authorization, token and userinfo endpoints), passport-github2
 * against the GitHub built from GitHub's docs. Users and accounts land in a real SQLite database.
 */
import knex, { type Knex } from 'knex'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import OAuth2Strategy, { type StrategyOptions, type VerifyFunction } from 'passport-oauth2'
import { Strategy as GitHubStrategy } from 'passport-github2'
import Portcullis from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Passport, { type PassportOAuth2Strategy, type PassportProfile } from 'portcullis/providers/passport'
import { Browser } from '../support/browser.js'
import { startGitHubMock, type GitHubMock } from '../support/github-api.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, SECRET, sessionOf, signInWith, startSignIn, type Listener } from '../support/oauth-app.js'

const CLIENT = { client_id: 'passport-app', client_secret: 'passport-secret' }

let app: Listener
let idp: TestIdp

beforeAll(async () => {
  app = await listen()
  idp = await startIdp({
    clients: [
      // passport-oauth2's client (the `oauth` package) posts its credentials in the form body.
      { ...CLIENT, token_endpoint_auth_method: 'client_secret_post', redirect_uris: [app.callbackUrl('idp'), app.callbackUrl('corp')] },
    ],
  })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

/** A strategy built on passport-oauth2 the way published ones are: it only adds `userProfile`. */
class IdpStrategy extends OAuth2Strategy {
  constructor(options: Partial<StrategyOptions> & { state?: boolean; pkce?: boolean }, verify: VerifyFunction = () => {}) {
    super({ authorizationURL: idp.authorizationEndpoint, tokenURL: idp.tokenEndpoint, clientID: CLIENT.client_id, clientSecret: CLIENT.client_secret, callbackURL: 'unused', state: true, ...options } as StrategyOptions, verify)
    this.name = 'idp'
    this._oauth2.useAuthorizationHeaderforGET(true)
  }

  override userProfile(accessToken: string, done: (error: unknown, profile?: PassportProfile) => void): void {
    this._oauth2.get(idp.userinfoEndpoint, accessToken, (error, body) => {
      if (error) return done(new Error(`userinfo failed: ${JSON.stringify(error)}`))
      const json = JSON.parse(String(body)) as Record<string, string | boolean>
      // As passport-google-oauth20 does: the IdP's email_verified becomes the entry's `verified`.
      const emails = [{ value: json.email as string, verified: json.email_verified === true }]
      done(null, { provider: 'idp', id: json.sub as string, displayName: json.name as string, emails, photos: [], _json: json })
    })
  }
}

/** Calls `listener` with the parameters of each token request the strategy's client makes. */
function onTokenRequest(strategy: OAuth2Strategy, listener: (params: Record<string, string>) => void): void {
  const client = (strategy as unknown as PassportOAuth2Strategy)._oauth2
  const exchange = client.getOAuthAccessToken.bind(client)
  client.getOAuthAccessToken = (code, params, callback) => {
    listener({ ...params })
    exchange(code, params, callback)
  }
}

const bridge = (strategy: OAuth2Strategy, options = {}) => Passport(strategy as unknown as PassportOAuth2Strategy, { dangerouslyAllowInsecureRequests: true, ...options })

describe('Passport bridge: passport-oauth2 against a real OAuth 2 server', () => {
  let db: Knex
  beforeEach(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true, pool: { min: 1, max: 1 } })
    await db.migrate.latest({ migrationSource: migrationSource() })
  })
  afterEach(() => db?.destroy())

  it('signs in through the strategy with PKCE and state, storing the user and the account with its tokens; verify is not called', async () => {
    const verified: unknown[] = []
    const strategy = new IdpStrategy({ scope: ['openid', 'profile', 'email'], pkce: true }, (...args: unknown[]) => void verified.push(args))
    mountApp(app, { providers: [bridge(strategy)], adapter: KnexAdapter(db) })
    const browser = new Browser()
    const authorizationUrl = new URL(await startSignIn(browser, app.url, 'idp'))
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(idp.authorizationEndpoint)
    expect(Object.fromEntries(authorizationUrl.searchParams)).toEqual({
      client_id: CLIENT.client_id,
      scope: 'openid profile email',
      redirect_uri: app.callbackUrl('idp'),
      response_type: 'code',
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.any(String),
    })
    const callback = await finishSignIn(browser, await browser.authorize(authorizationUrl.href, 'alice'))
    expect(redirectOf(callback)).toMatchObject({ error: null })
    expect(callback.headers.get('location')).toBe(`${app.url}/`)

    const session = await sessionOf(browser, app.url)
    expect(session?.user).toMatchObject({ name: 'Alice Example', email: 'alice@example.com', image: null })
    const accounts = await db('Account').select()
    expect(accounts).toEqual([expect.objectContaining({ provider: 'idp', type: 'oauth', providerAccountId: 'alice', userId: session!.user!.id, token_type: 'bearer' })])
    expect(accounts[0].access_token).toEqual(expect.any(String))
    expect(await db('User').select('email')).toEqual([{ email: 'alice@example.com' }])
    expect(verified).toEqual([])
  })

  it('sends the strategy\'s own authorizationParams and tokenParams, and state alone when it has no PKCE', async () => {
    const tokenParams: Record<string, string>[] = []
    class Tailored extends IdpStrategy {
      override authorizationParams() {
        return { ui_locales: 'de', max_age: 600 }
      }
      override tokenParams() {
        return { resource_hint: 'portcullis' }
      }
    }
    const strategy = new Tailored({ scope: 'openid email', pkce: false })
    onTokenRequest(strategy, (params) => tokenParams.push(params))
    mountApp(app, { providers: [bridge(strategy)], adapter: KnexAdapter(db) })
    const browser = new Browser()
    const authorizationUrl = new URL(await startSignIn(browser, app.url, 'idp'))
    expect(authorizationUrl.searchParams.get('ui_locales')).toBe('de')
    expect(authorizationUrl.searchParams.get('max_age')).toBe('600')
    expect(authorizationUrl.searchParams.get('code_challenge')).toBeNull()
    expect(authorizationUrl.searchParams.get('state')).toEqual(expect.any(String))
    const callback = await finishSignIn(browser, await browser.authorize(authorizationUrl.href, 'alice'))
    expect(redirectOf(callback).error).toBeNull()
    expect(tokenParams).toEqual([{ resource_hint: 'portcullis', grant_type: 'authorization_code', redirect_uri: app.callbackUrl('idp') }])
    expect((await sessionOf(browser, app.url))?.user?.email).toBe('alice@example.com')
  })

  it('refuses a callback whose state is not this browser\'s, before any token request (login CSRF)', async () => {
    let exchanges = 0
    const strategy = new IdpStrategy({ scope: 'openid', pkce: false })
    onTokenRequest(strategy, () => exchanges++)
    mountApp(app, { providers: [bridge(strategy)], adapter: KnexAdapter(db) })
    // The attacker starts a sign-in of their own and hands the victim the callback URL.
    const attacker = new Browser()
    const navigation = await attacker.authorize(await startSignIn(attacker, app.url, 'idp'), 'mallory')
    const victim = new Browser()
    await startSignIn(victim, app.url, 'idp')
    const callback = await finishSignIn(victim, navigation)
    expect(redirectOf(callback)).toMatchObject({ error: 'InvalidCheck', code: 'state_mismatch' })
    expect(exchanges).toBe(0)
    expect(await sessionOf(victim, app.url)).toBeNull()
    expect(await db('User').count({ n: '*' })).toEqual([{ n: 0 }])
  })

  it('reports a replayed code as the provider\'s token error through the strategy, with no session', async () => {
    const strategy = new IdpStrategy({ scope: 'openid', pkce: true })
    mountApp(app, { providers: [bridge(strategy)], adapter: KnexAdapter(db) })
    const browser = new Browser()
    const navigation = await browser.authorize(await startSignIn(browser, app.url, 'idp'), 'alice')
    const saved = Object.fromEntries(['authjs.pkce.code_verifier', 'authjs.state'].map((name) => [name, browser.cookie(app.url, name)!]))
    expect(redirectOf(await finishSignIn(browser, navigation)).error).toBeNull()

    const replayer = new Browser()
    for (const [name, value] of Object.entries(saved)) replayer.setCookie(app.url, name, value)
    const replay = await finishSignIn(replayer, navigation)
    expect(redirectOf(replay)).toMatchObject({ error: 'OAuthCallbackError', code: 'token_request_failed' })
    expect(await sessionOf(replayer, app.url)).toBeNull()
  })

  it('never takes an address the strategy says is unverified (pre-account takeover): no e-mail on the session or the user', async () => {
    class UnverifyingStrategy extends IdpStrategy {
      override userProfile(accessToken: string, done: (error: unknown, profile?: PassportProfile) => void): void {
        super.userProfile(accessToken, (error, profile) => done(error, profile && { ...profile, emails: profile.emails?.map((entry) => ({ ...entry, verified: false })) }))
      }
    }
    mountApp(app, { providers: [bridge(new UnverifyingStrategy({ scope: 'openid profile email', pkce: true }))], adapter: KnexAdapter(db) })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'idp')).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toMatchObject({ name: 'Alice Example', email: null })
    expect(await db('User').select('email')).toEqual([{ email: null }])
  })

  it('maps the profile with the app\'s own function when given one', async () => {
    const strategy = new IdpStrategy({ scope: 'openid profile email', pkce: true })
    mountApp(app, { providers: [bridge(strategy, { profile: (profile: PassportProfile) => ({ id: `corp-${profile.id}`, name: profile.displayName?.toUpperCase(), email: null }) })] })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'idp')).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toMatchObject({ name: 'ALICE EXAMPLE' })
  })
})

describe('Passport bridge: the default mapping of emails', () => {
  const strategy = () => new IdpStrategy({ scope: 'openid' })
  const map = (emails: PassportProfile['emails']) => bridge(strategy()).profile!({ id: 7, displayName: 'Ada', emails } as never, {})

  it('takes the primary verified entry, else the first verified one, and says it is verified', async () => {
    expect(await map([{ value: 'old@example.com', verified: true }, { value: 'ada@example.com', primary: true, verified: true }])).toEqual({ id: '7', name: 'Ada', email: 'ada@example.com', emailVerified: true, image: null })
    expect(await map([{ value: 'victim@example.com', primary: true, verified: false }, { value: 'ada@example.com', verified: true }])).toMatchObject({ email: 'ada@example.com', emailVerified: true })
  })

  it('marks an address unverified unless its entry says verified: true (absent, false or a string is not a yes)', async () => {
    expect(await map([{ value: 'victim@example.com', primary: true, verified: false }])).toMatchObject({ email: 'victim@example.com', emailVerified: false })
    // passport-github2 without allRawEmails: the primary address, bare.
    expect(await map([{ value: 'octocat@github.com' }])).toMatchObject({ email: 'octocat@github.com', emailVerified: false })
    expect(await map([{ value: 'ada@example.com', verified: 'true' as never }])).toMatchObject({ email: 'ada@example.com', emailVerified: false })
    expect(await map([])).toMatchObject({ email: null, emailVerified: false })
    expect(await map(undefined)).toMatchObject({ email: null, emailVerified: false })
  })

  it('reads passport-google-oauth20\'s shape (Google\'s email_verified copied into verified)', async () => {
    expect(await map([{ value: 'jsmith@example.com', verified: true }])).toMatchObject({ email: 'jsmith@example.com', emailVerified: true })
    expect(await map([{ value: 'jsmith@example.com', verified: false }])).toMatchObject({ email: 'jsmith@example.com', emailVerified: false })
  })
})

describe('Passport bridge: what it refuses', () => {
  it('refuses an OAuth 1.0a strategy, a non-strategy and a strategy without an id, at init', () => {
    const oauth1 = { name: 'twitter', _oauth: { _requestUrl: 'https://api.twitter.com/oauth/request_token' }, userProfile() {} }
    expect(() => Passport(oauth1 as unknown as PassportOAuth2Strategy)).toThrow(/"twitter" is an OAuth 1\.0a strategy; only OAuth 2 strategies/)
    expect(() => Passport({ name: 'local', userProfile() {} } as unknown as PassportOAuth2Strategy)).toThrow(/not built on passport-oauth2/)
    const generic = new OAuth2Strategy({ authorizationURL: 'https://as.example/authorize', tokenURL: 'https://as.example/token', clientID: 'id', clientSecret: 's', callbackURL: '/cb' }, () => {})
    expect(() => Passport(generic as unknown as PassportOAuth2Strategy)).toThrow(/give the provider an id/)
    const provider = Passport(generic as unknown as PassportOAuth2Strategy, { id: 'corp' })
    expect(() => Portcullis({ secret: SECRET, providers: [provider] })).not.toThrow()
  })

  it('refuses the sign-in when the strategy has no userProfile of its own (a bare OAuth2Strategy answers {}), instead of making every user one account', async () => {
    const bare = new OAuth2Strategy({ authorizationURL: idp.authorizationEndpoint, tokenURL: idp.tokenEndpoint, clientID: CLIENT.client_id, clientSecret: CLIENT.client_secret, callbackURL: '/cb', state: true, scope: 'openid' } as StrategyOptions, () => {})
    mountApp(app, { providers: [Passport(bare as unknown as PassportOAuth2Strategy, { id: 'corp', dangerouslyAllowInsecureRequests: true })] })
    const browser = new Browser()
    const callback = await signInWith(browser, app.url, 'corp')
    expect(redirectOf(callback)).toMatchObject({ error: 'OAuthCallbackError', code: 'userinfo_failed' })
    expect(await sessionOf(browser, app.url)).toBeNull()
  })

  it('a strategy without a client secret is a public client (PKCE required by Portcullis config) and still resolves', () => {
    const strategy = new OAuth2Strategy({ authorizationURL: 'https://as.example/authorize', tokenURL: 'https://as.example/token', clientID: 'id', callbackURL: '/cb', state: true, pkce: true } as StrategyOptions, () => {})
    const provider = Passport(strategy as unknown as PassportOAuth2Strategy, { id: 'public' })
    expect(provider.client?.token_endpoint_auth_method).toBe('none')
    expect(provider.checks).toEqual(['pkce', 'state'])
    expect(() => Portcullis({ secret: SECRET, providers: [provider] })).not.toThrow()
  })
})

describe('Passport bridge: a published strategy (passport-github2)', () => {
  let github: GitHubMock
  beforeEach(async () => {
    github = await startGitHubMock({ clientId: 'gh-id', clientSecret: 'gh-secret', callbackUrl: app.callbackUrl('github') })
  })
  afterEach(() => github?.close())

  const gitHubStrategy = (options: Record<string, unknown> = {}) =>
    new GitHubStrategy(
      {
        clientID: 'gh-id',
        clientSecret: 'gh-secret',
        callbackURL: '/ignored',
        scope: ['read:user', 'user:email'],
        authorizationURL: `${github.baseUrl}/login/oauth/authorize`,
        tokenURL: `${github.baseUrl}/login/oauth/access_token`,
        userProfileURL: `${github.baseUrl}/api/v3/user`,
        userEmailURL: `${github.baseUrl}/api/v3/user/emails`,
        ...options,
      },
      () => {},
    )

  it('without allRawEmails, passport-github2 gives an address with no verified flag: it is never taken (set allRawEmails: true)', async () => {
    // Its default drops the flags of /user/emails (and without user:email it gives the public
    // address, which GitHub does not vouch for): the bridge cannot tell, so it takes neither.
    mountApp(app, { providers: [bridge(gitHubStrategy() as unknown as OAuth2Strategy)] })
    const browser = new Browser()
    const approved = await browser.request(await startSignIn(browser, app.url, 'github'))
    const callback = await finishSignIn(browser, { method: 'GET', url: approved.headers.get('location')! })
    expect(redirectOf(callback).error).toBeNull()
    expect(github.hits['/api/v3/user/emails']).toBe(1)
    expect((await sessionOf(browser, app.url))?.user).toMatchObject({ id: '1', email: null })
  })

  it('signs in with passport-github2 unchanged: its token exchange, its /user and /user/emails calls, its profile', async () => {
    mountApp(app, { providers: [bridge(gitHubStrategy({ allRawEmails: true }) as unknown as OAuth2Strategy)] })
    const browser = new Browser()
    const authorizationUrl = new URL(await startSignIn(browser, app.url, 'github'))
    // passport-github2 joins scopes with a comma, as GitHub documents.
    expect(authorizationUrl.searchParams.get('scope')).toBe('read:user,user:email')
    const approved = await browser.request(authorizationUrl.href)
    expect(approved.status).toBe(302)
    const callback = await finishSignIn(browser, { method: 'GET', url: approved.headers.get('location')! })
    expect(redirectOf(callback).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: '1', name: 'The Octocat', email: 'octocat@github.com', image: 'https://avatars.githubusercontent.com/u/1?v=4' })
    expect(github.hits['/login/oauth/access_token']).toBe(1)
    expect(github.hits['/api/v3/user']).toBe(1)
    expect(github.hits['/api/v3/user/emails']).toBe(1)
    // Its own client: the User-Agent passport-github2 sets, the token as a bearer header.
    const apiRequest = github.requests.find((request) => request.url === '/api/v3/user')!
    expect(apiRequest.headers['user-agent']).toBe('passport-github')
    expect(apiRequest.headers.authorization).toMatch(/^Bearer gho_/)
  })
})
