/**
 * The rig of the getAccessToken suites (JWT and database sessions): a test IdP with short-lived
 * access tokens, refresh tokens with rotation and reuse detection, and revocation; a count of the
 * refresh requests it receives; an app whose `/token` route answers `getAccessToken('corp')`.
 * `useRefreshRig()` starts the app's listener and the IdP once per suite and closes both after it.
 */
import { afterAll, beforeAll, beforeEach } from '@jest/globals'
import { RefreshAccessTokenError, type PortcullisConfig, type PortcullisResult } from 'portcullis'
import OIDC from 'portcullis/providers/oidc'
import { authApp } from './app-rig.js'
import { startIdp, type TestIdp } from './idp.js'
import type { Browser } from './browser.js'
import { closeListeners, listen, SECRET, signInWith, silentLogger, type Listener } from './oauth-app.js'

/** The IdP and what the tests steer and count of it. */
export interface RefreshIdp {
  idp: TestIdp
  /** Refresh token grants the IdP received (answered or not). */
  refreshes(): number
  /** Seconds the next access tokens live. */
  setAccessTokenTtl(seconds: number): void
  /** Runs before the IdP handles a token request; returning true means the hook answered it (counted as a refresh). */
  beforeTokenRequest(hook: ((ctx: { status: number; body: unknown }) => Promise<boolean | void>) | undefined): void
  /** Runs once the IdP has answered a refresh (and rotated), before the answer goes out: may hold it. */
  afterRefresh(hook: (() => Promise<void>) | undefined): void
  /** Revokes a refresh token at the revocation endpoint, as the user withdrawing consent would. */
  revoke(refreshToken: string): Promise<void>
  /** Whether the IdP's API accepts the access token (it is valid and not revoked). */
  accepts(accessToken: string): Promise<boolean>
}

/** The client every test signs in with. */
export const CLIENT = { client_id: 'rotating', client_secret: 'rotating-secret' }

/** Starts the IdP for `listeners`' callback URLs of providers `corp` and `corp-second`. Refresh tokens rotate on every use. */
export async function startRefreshIdp(listeners: Listener[]): Promise<RefreshIdp> {
  let ttl = 3600
  let count = 0
  let before: ((ctx: { status: number; body: unknown }) => Promise<boolean | void>) | undefined
  let after: (() => Promise<void>) | undefined
  const idp = await startIdp({
    clients: [{ ...CLIENT, redirect_uris: listeners.flatMap((listener) => [listener.callbackUrl('corp'), listener.callbackUrl('corp-second')]), grant_types: ['authorization_code', 'refresh_token'] }],
    accessTokenTtl: () => ttl,
    rotateRefreshToken: true,
    revocation: true,
  })
  idp.provider.use(async (ctx, next) => {
    const tokenRequest = ctx.method === 'POST' && ctx.path === '/token'
    // After sign-in, the token endpoint only sees refreshes: a hook may answer them itself.
    if (tokenRequest && before && (await before(ctx)) === true) {
      count++
      return
    }
    await next()
    if (tokenRequest && (ctx.oidc?.params as { grant_type?: string } | undefined)?.grant_type === 'refresh_token') {
      count++
      // The IdP has answered (and rotated); a hook may hold the answer back from the client.
      await after?.()
    }
  })
  return {
    idp,
    refreshes: () => count,
    setAccessTokenTtl: (seconds) => void (ttl = seconds),
    beforeTokenRequest: (hook) => void (before = hook),
    afterRefresh: (hook) => void (after = hook),
    async revoke(refreshToken) {
      const response = await fetch(idp.revocationEndpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: refreshToken, token_type_hint: 'refresh_token' }),
      })
      if (response.status !== 200) throw new Error(`revocation answered ${response.status}: ${await response.text()}`)
    },
    async accepts(accessToken) {
      const response = await fetch(idp.apiUrl, { headers: { authorization: `Bearer ${accessToken}` } })
      await response.body?.cancel()
      return response.status === 200
    },
  }
}

/** The `corp` provider, asking for a refresh token (offline_access with consent). */
export function corpProvider(idp: TestIdp, overrides: Partial<Parameters<typeof OIDC>[0]> = {}) {
  return OIDC({
    id: 'corp',
    name: 'Corp SSO',
    issuer: idp.issuer,
    clientId: CLIENT.client_id,
    clientSecret: CLIENT.client_secret,
    dangerouslyAllowInsecureRequests: true,
    authorization: { params: { scope: 'openid profile email offline_access', prompt: 'consent' } },
    ...overrides,
  })
}

/**
 * Portcullis at /api/auth of `listener`; `/me` answers the session; `/token` answers
 * `{ token }` from `getAccessToken(?provider ?? 'corp', { skewSeconds: ?skew })`, or 401 `{ code, auth }` with the
 * error's code and the request's session as the handler then sees it.
 */
export function mountTokenApp(listener: Listener, config: Partial<PortcullisConfig>): PortcullisResult {
  const { app, ...portcullis } = authApp({ secret: SECRET, logger: silentLogger, providers: [], ...config })
  app.get(
    '/token',
    portcullis.auth(async (req, res) => {
      const skew = typeof req.query.skew === 'string' ? { skewSeconds: Number(req.query.skew) } : {}
      const provider = typeof req.query.provider === 'string' ? req.query.provider : 'corp'
      try {
        res.json({ token: await portcullis.getAccessToken(provider, skew) })
      } catch (error) {
        if (!(error instanceof RefreshAccessTokenError)) throw error
        res.status(401).json({ code: error.code, auth: req.auth })
      }
    }),
  )
  listener.mount(app)
  return portcullis
}

/** The session cookie the suites read and replay. */
export const SESSION_COOKIE = 'authjs.session-token'
/** Seconds an access token lives at sign-in: under the default skew of 60 seconds, due for a refresh at once. */
export const SHORT_TTL = 30

/** One suite's app listener and refresh IdP, as `useRefreshRig` sets them up. */
export interface RefreshRig extends RefreshIdp {
  /** The listener the suite mounts its apps on (`mountTokenApp(rig.app, …)`). */
  readonly app: Listener
  /**
   * Signs `login` in at `provider` with access tokens living `ttl` seconds; later tokens (refreshes)
   * live an hour. Answers the callback response: the suite asserts on it.
   */
  signInWith(browser: Browser, login: string, options?: { provider?: string; ttl?: number }): Promise<Response>
}

/**
 * Starts the app listener and the refresh IdP before the suite, resets the IdP's hooks before each
 * test, and closes both after the suite. Call it at the top level of a test file.
 */
export function useRefreshRig(): RefreshRig {
  let app: Listener | undefined
  let refreshIdp: RefreshIdp | undefined
  const started = (): { app: Listener; idp: RefreshIdp } => {
    if (app === undefined || refreshIdp === undefined) throw new Error('the refresh rig is used before its beforeAll has run')
    return { app, idp: refreshIdp }
  }
  beforeAll(async () => {
    app = await listen()
    refreshIdp = await startRefreshIdp([app])
  })
  afterAll(async () => {
    await closeListeners()
    await refreshIdp?.idp.close()
  })
  beforeEach(() => {
    refreshIdp?.beforeTokenRequest(undefined)
    refreshIdp?.afterRefresh(undefined)
  })
  return {
    get app() {
      return started().app
    },
    get idp() {
      return started().idp.idp
    },
    refreshes: () => started().idp.refreshes(),
    setAccessTokenTtl: (seconds) => started().idp.setAccessTokenTtl(seconds),
    beforeTokenRequest: (hook) => started().idp.beforeTokenRequest(hook),
    afterRefresh: (hook) => started().idp.afterRefresh(hook),
    revoke: (refreshToken) => started().idp.revoke(refreshToken),
    accepts: (accessToken) => started().idp.accepts(accessToken),
    async signInWith(browser, login, { provider = 'corp', ttl = SHORT_TTL } = {}) {
      const { app, idp } = started()
      idp.setAccessTokenTtl(ttl)
      try {
        return await signInWith(browser, app.url, provider, login)
      } finally {
        idp.setAccessTokenTtl(3600)
      }
    },
  }
}
