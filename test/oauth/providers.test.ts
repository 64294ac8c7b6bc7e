/**
 * The built-in providers end to end. GitHub against an in-process GitHub built from GitHub's docs
 * (as a GitHub Enterprise Server: same paths, API under /api/v3); Google against a real OpenID
 * Provider standing in for accounts.google.com (there is no network to Google here), which proves
 * the provider's shape: discovery, scope, nonce, PKCE, ID token and userinfo, the profile mapping.
 */
import knex, { type Knex } from 'knex'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import GitHub, { type GitHubUserConfig } from 'portcullis/providers/github'
import Google, { type GoogleUserConfig } from 'portcullis/providers/google'
import { Browser, type Navigation } from '../support/browser.js'
import { startGitHubMock, type GitHubMock } from '../support/github-api.js'
import { finishSignIn, mountApp, redirectOf, sessionOf, signInWith, startSignIn } from '../support/oauth-app.js'
import { useOAuthRig } from '../support/oauth-rig.js'

const CLIENT_ID = 'gh-client'
const CLIENT_SECRET = 'gh-client-secret'
const OCTOCAT_AVATAR = 'https://avatars.githubusercontent.com/u/1?v=4'

const rig = useOAuthRig((app) => [{ client_id: 'google-client', client_secret: 'google-secret', redirect_uris: [app.callbackUrl('google')] }])

describe('GitHub', () => {
  let github: GitHubMock

  // A fresh GitHub per test, so its hit counters and recorded requests are this test's alone.
  beforeEach(async () => {
    github = await startGitHubMock({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, callbackUrl: rig.app.callbackUrl('github') })
  })
  afterEach(() => github?.close())

  const gitHub = (overrides: GitHubUserConfig = {}) =>
    GitHub({ enterprise: { baseUrl: github.baseUrl }, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, dangerouslyAllowInsecureRequests: true, ...overrides })

  /** GitHub approves at once and redirects straight back: its 302 is the navigation to the callback. */
  async function authorizeAtGitHub(browser: Browser, authorizationUrl: string): Promise<Navigation & { method: 'GET' }> {
    const response = await browser.request(authorizationUrl)
    if (response.status !== 302) throw new Error(`mock GitHub /authorize answered ${response.status}: ${await response.text()}`)
    return { method: 'GET', url: response.headers.get('location')! }
  }

  /** CSRF, POST /signin/github, GitHub's authorize, the callback. */
  async function signInAtGitHub(browser = new Browser()) {
    const authorizationUrl = await startSignIn(browser, rig.app.url, 'github')
    const navigation = await authorizeAtGitHub(browser, authorizationUrl)
    const callback = await finishSignIn(browser, navigation)
    return { browser, authorizationUrl: new URL(authorizationUrl), navigation, callback }
  }

  it('signs in with the primary verified address from /user/emails when the profile hides it', async () => {
    mountApp(rig.app, { providers: [gitHub()] })
    const { browser, callback } = await signInAtGitHub()
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe(`${rig.app.url}/`)
    expect((await sessionOf(browser, rig.app.url))?.user).toEqual({ id: '1', name: 'The Octocat', email: 'octocat@github.com', image: OCTOCAT_AVATAR })
    expect(github.hits['/api/v3/user']).toBe(1)
    expect(github.hits['/api/v3/user/emails']).toBe(1)
  })

  it('takes the primary address from /user/emails, not the first verified one listed', async () => {
    github.users.octocat!.emails = [
      { email: 'work@example.com', primary: false, verified: true, visibility: 'private' },
      { email: 'octocat@github.com', primary: true, verified: true, visibility: 'private' },
    ]
    mountApp(rig.app, { providers: [gitHub()] })
    const { browser, callback } = await signInAtGitHub()
    expect(callback.status).toBe(302)
    expect((await sessionOf(browser, rig.app.url))?.user?.email).toBe('octocat@github.com')
  })

  it('checks a public address against /user/emails and takes it when GitHub lists it as verified', async () => {
    github.users.hubot = {
      id: 2, login: 'hubot', name: null, email: 'hubot@example.com',
      emails: [
        { email: 'hubot-private@example.com', primary: true, verified: true, visibility: 'private' },
        { email: 'hubot@example.com', primary: false, verified: true, visibility: 'public' },
      ],
    }
    github.nextUser = 'hubot'
    mountApp(rig.app, { providers: [gitHub()] })
    const { browser, callback } = await signInAtGitHub()
    expect(callback.status).toBe(302)
    // No name on the profile: the login stands in for it.
    expect((await sessionOf(browser, rig.app.url))?.user).toEqual({ id: '2', name: 'hubot', email: 'hubot@example.com', image: 'https://avatars.githubusercontent.com/u/2?v=4' })
    expect(github.hits['/api/v3/user']).toBe(1)
    expect(github.hits['/api/v3/user/emails']).toBe(1)
  })

  it('does not vouch for a public address /user/emails lists as unverified: the primary verified one is chosen', async () => {
    github.users.hubot = {
      id: 2, login: 'hubot', name: null, email: 'victim@example.com',
      emails: [
        { email: 'victim@example.com', primary: false, verified: false, visibility: 'public' },
        { email: 'hubot-private@example.com', primary: true, verified: true, visibility: 'private' },
      ],
    }
    github.nextUser = 'hubot'
    const provider = gitHub()
    mountApp(rig.app, { providers: [provider] })
    const { browser } = await signInAtGitHub()
    expect((await sessionOf(browser, rig.app.url))?.user?.email).toBe('hubot-private@example.com')
    // The mapping says so: the chosen address and GitHub's word on it.
    const profile = { id: 2, login: 'hubot', name: null, avatar_url: 'a', email: 'hubot-private@example.com', email_verified: true }
    expect(await provider.profile!(profile as never, {})).toMatchObject({ email: 'hubot-private@example.com', emailVerified: true })
  })

  it('asks for read:user user:email with PKCE (S256) and state, and authenticates with client_secret_post', async () => {
    mountApp(rig.app, { providers: [gitHub()] })
    const { browser, authorizationUrl, callback } = await signInAtGitHub()
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${github.baseUrl}/login/oauth/authorize`)
    expect(Object.fromEntries(authorizationUrl.searchParams)).toEqual({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'read:user user:email',
      redirect_uri: rig.app.callbackUrl('github'),
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.any(String),
    })
    expect(callback.status).toBe(302)
    expect(redirectOf(callback).error).toBeNull()
    expect((await sessionOf(browser, rig.app.url))?.user?.id).toBe('1')

    const tokenRequests = github.requests.filter((request) => request.url.startsWith('/login/oauth/access_token'))
    expect(tokenRequests).toHaveLength(1)
    const [tokenRequest] = tokenRequests
    // client_secret_post: the credentials travel in the form body (the mock accepted them), not in Basic.
    expect(tokenRequest!.method).toBe('POST')
    expect(tokenRequest!.url).toBe('/login/oauth/access_token')
    expect(tokenRequest!.headers.authorization).toBeUndefined()
    expect(tokenRequest!.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/)
    // The REST calls as GitHub requires them: bearer token, User-Agent, API version, and the largest page of addresses.
    const apiRequests = github.requests.filter((request) => request.url.startsWith('/api/v3/'))
    expect(apiRequests.map((request) => request.url)).toEqual(['/api/v3/user', '/api/v3/user/emails?per_page=100'])
    for (const request of apiRequests) {
      expect(request.headers.authorization).toMatch(/^Bearer gho_[0-9a-f]+$/)
      expect(request.headers['user-agent']).toBeTruthy()
      expect(request.headers['x-github-api-version']).toBe('2022-11-28')
    }
  })

  it("reports GitHub's token error (HTTP 200 with error=bad_verification_code) for a replayed code, with no session", async () => {
    mountApp(rig.app, { providers: [gitHub()] })
    const browser = new Browser()
    const navigation = await authorizeAtGitHub(browser, await startSignIn(browser, rig.app.url, 'github'))
    const saved = Object.fromEntries(['authjs.pkce.code_verifier', 'authjs.state'].map((name) => [name, browser.cookie(rig.app.url, name)!]))
    expect(Object.values(saved).every(Boolean)).toBe(true)
    expect((await browser.navigate(navigation)).status).toBe(302)

    // The same callback again, with the same check cookies: the checks pass, GitHub refuses the used code.
    const attacker = new Browser()
    for (const [name, value] of Object.entries(saved)) attacker.setCookie(rig.app.url, name, value)
    const replay = await attacker.navigate(navigation)
    expect(replay.status).toBe(302)
    const redirect = redirectOf(replay)
    expect(redirect.url.href).toBe(`${rig.app.url}/api/auth/signin?error=OAuthCallbackError&code=bad_verification_code`)
    expect(github.hits['/login/oauth/access_token']).toBe(2)
    expect(replay.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.session-token='))).toBe(false)
    expect(await sessionOf(attacker, rig.app.url)).toBeNull()
  })

  it('reports the user denying access as error=OAuthCallbackError&code=access_denied, without a token request', async () => {
    github.denyNext = true
    mountApp(rig.app, { providers: [gitHub()] })
    const { browser, navigation, callback } = await signInAtGitHub()
    expect(new URL(navigation.url).searchParams.get('error')).toBe('access_denied')
    expect(callback.status).toBe(302)
    expect(redirectOf(callback).url.href).toBe(`${rig.app.url}/api/auth/signin?error=OAuthCallbackError&code=access_denied`)
    expect(github.hits['/login/oauth/access_token']).toBe(0)
    expect(await sessionOf(browser, rig.app.url)).toBeNull()
  })

  it('takes a narrower scope override, keeps the URL, and then neither asks /user/emails nor invents an address', async () => {
    mountApp(rig.app, { providers: [gitHub({ authorization: { params: { scope: 'read:user' } } })] })
    const { browser, authorizationUrl, callback } = await signInAtGitHub()
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${github.baseUrl}/login/oauth/authorize`)
    expect(authorizationUrl.searchParams.get('scope')).toBe('read:user')
    // The other defaults survive the override.
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorizationUrl.searchParams.has('state')).toBe(true)
    expect(callback.status).toBe(302)
    expect(redirectOf(callback).error).toBeNull()
    expect(github.hits['/api/v3/user/emails']).toBe(0)
    expect((await sessionOf(browser, rig.app.url))?.user).toEqual({ id: '1', name: 'The Octocat', email: null, image: OCTOCAT_AVATAR })
  })

  it('adds an authorization param from the override and keeps the default scope', async () => {
    mountApp(rig.app, { providers: [gitHub({ authorization: { params: { allow_signup: 'false' } } })] })
    const url = new URL(await startSignIn(new Browser(), rig.app.url, 'github'))
    expect(url.origin + url.pathname).toBe(`${github.baseUrl}/login/oauth/authorize`)
    expect(url.searchParams.get('allow_signup')).toBe('false')
    expect(url.searchParams.get('scope')).toBe('read:user user:email')
  })

  describe('with a database adapter', () => {
    let db: Knex
    beforeAll(async () => {
      db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
      await db.migrate.latest({ migrationSource: migrationSource() })
    })
    afterAll(() => db?.destroy())

    it('stores the account as provider "github", providerAccountId "1", type "oauth"', async () => {
      mountApp(rig.app, { providers: [gitHub()], adapter: KnexAdapter(db) })
      const { browser, callback } = await signInAtGitHub()
      expect(callback.status).toBe(302)
      const session = await sessionOf(browser, rig.app.url)
      expect(session?.user).toMatchObject({ name: 'The Octocat', email: 'octocat@github.com', image: OCTOCAT_AVATAR })
      expect(await db('User').select('id', 'email')).toEqual([{ id: session!.user!.id, email: 'octocat@github.com' }])
      expect(await db('Account').select('userId', 'provider', 'providerAccountId', 'type', 'access_token')).toEqual([
        { userId: session!.user!.id, provider: 'github', providerAccountId: '1', type: 'oauth', access_token: expect.stringMatching(/^gho_/) },
      ])
    })
  })
})

describe('Google (shape proven against a real OpenID Provider in place of accounts.google.com)', () => {
  const google = (overrides: GoogleUserConfig = {}) =>
    Google({ issuer: rig.idp.issuer, clientId: 'google-client', clientSecret: 'google-secret', dangerouslyAllowInsecureRequests: true, ...overrides })

  it('signs in: the session user is the claims mapped (sub, name, email; no picture from this IdP)', async () => {
    mountApp(rig.app, { providers: [google()] })
    const browser = new Browser()
    const callback = await signInWith(browser, rig.app.url, 'google', 'alice')
    expect(callback.status).toBe(302)
    expect(callback.headers.get('location')).toBe(`${rig.app.url}/`)
    expect((await sessionOf(browser, rig.app.url))?.user).toEqual({ id: 'alice', name: 'Alice Example', email: 'alice@example.com', image: null })
  })

  it('asks for openid profile email, with a nonce and PKCE', async () => {
    mountApp(rig.app, { providers: [google()] })
    const url = new URL(await startSignIn(new Browser(), rig.app.url, 'google'))
    expect(url.origin + url.pathname).toBe(rig.idp.authorizationEndpoint)
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'google-client',
      response_type: 'code',
      scope: 'openid profile email',
      redirect_uri: rig.app.callbackUrl('google'),
      nonce: expect.stringMatching(/^[\w-]{43}$/),
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
    })
  })

  it('adds access_type=offline and prompt=consent from the override and keeps the scope', async () => {
    mountApp(rig.app, { providers: [google({ authorization: { params: { access_type: 'offline', prompt: 'consent' } } })] })
    const url = new URL(await startSignIn(new Browser(), rig.app.url, 'google'))
    expect(url.origin + url.pathname).toBe(rig.idp.authorizationEndpoint)
    expect(url.searchParams.get('scope')).toBe('openid profile email')
    expect(url.searchParams.get('access_type')).toBe('offline')
    expect(url.searchParams.get('prompt')).toBe('consent')
    expect(url.searchParams.has('nonce')).toBe(true)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
  })

  it('given bare, takes AUTH_GOOGLE_ID/AUTH_GOOGLE_SECRET and shows "Sign in with Google" on the sign-in page', async () => {
    const saved = { id: process.env.AUTH_GOOGLE_ID, secret: process.env.AUTH_GOOGLE_SECRET }
    process.env.AUTH_GOOGLE_ID = 'google-env-id'
    process.env.AUTH_GOOGLE_SECRET = 'google-env-secret'
    try {
      mountApp(rig.app, { providers: [Google] })
    } finally {
      restoreEnv('AUTH_GOOGLE_ID', saved.id)
      restoreEnv('AUTH_GOOGLE_SECRET', saved.secret)
    }
    // Rendering the page needs no discovery (no request to accounts.google.com).
    const page = await new Browser().request(`${rig.app.url}/api/auth/signin`)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain('<button type="submit">Sign in with Google</button>')
    expect(html).toMatch(/<form method="post" action="[^"]*\/api\/auth\/signin\/google">/)
  })
})

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name]
  else process.env[name] = value
}
