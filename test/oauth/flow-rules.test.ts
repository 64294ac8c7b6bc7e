/**
 * The rules at the edges of an OAuth 2 / OIDC sign-in, each as a user or an attacker meets it, against
 * the real OpenID Provider of the test support (oidc-provider, in-process):
 * - the authorization request: the parameters the flow sets itself (response_type, state, nonce,
 *   request, request_uri) cannot be supplied through authorizationParams, and the log says which were
 *   ignored; a plain OAuth 2 provider is asked for no OpenID scope;
 * - a custom `token.request` (a Passport-style exchange): a callback without a code, an exchange that
 *   throws or answers without an access token fail with their codes and log lines, word for word; a
 *   token set without `token_type` is a bearer token;
 * - a custom `userinfo.request`: one that throws or answers no object fails with `userinfo_failed`; it
 *   is given the tokens with `expires_at` in seconds;
 * - `profile()`: one that throws or returns no id is a configuration error, never an account under a
 *   made-up id; the address is kept only when verified, and the log says so only when there was one;
 * - the client: an `oauth` provider's `jwks_endpoint` verifies ID token signatures; a `clientSecret`
 *   function that returns no secret stops the exchange; a failed discovery names provider and issuer.
 */
import express from 'express'
import { generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import type { JWTCallbackParams } from 'portcullis'
import OAuth, { type TokenRequestContext, type TokenSet } from 'portcullis/providers/oauth'
import OIDC from 'portcullis/providers/oidc'
import { Browser, type Navigation } from '../support/browser.js'
import { forgeIdTokens, startIdp, type TestIdp } from '../support/idp.js'
import { recordingLogger, type LogLevel, type RecordingLogger } from '../support/logger.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, signInWith, startSignIn, type Listener } from '../support/oauth-app.js'

let idp: TestIdp
let app: Listener
/** A listener with no app mounted: it answers every request 503, as an issuer that is down. */
let downIssuer: Listener
/** When set, the ID token of the IdP's token endpoint is replaced by what this makes of it. */
let forge: ((claims: Record<string, unknown>, kid: string) => Promise<string>) | undefined
/** The paths of the requests the IdP answered. */
const idpPaths: string[] = []

beforeAll(async () => {
  app = await listen()
  downIssuer = await listen()
  const client = (id: string) => ({ client_id: id, client_secret: `${id}-secret`, redirect_uris: [app.callbackUrl(id)] })
  idp = await startIdp({ clients: [client('corp'), client('acme'), client('signed')] })
  forgeIdTokens(idp, (claims, kid) => forge?.(claims, kid))
  idp.provider.use(async (ctx, next) => {
    idpPaths.push(ctx.path)
    await next()
  })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})
beforeEach(() => {
  forge = undefined
  idpPaths.length = 0
})

const corp = (overrides: Partial<Parameters<typeof OIDC>[0]> = {}) =>
  OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true, ...overrides })

/** A plain OAuth 2 provider: the IdP's endpoints, the profile from its GitHub-like API. */
const acme = (overrides: Partial<Parameters<typeof OAuth>[0]> = {}) =>
  OAuth({
    id: 'acme',
    name: 'Acme',
    clientId: 'acme',
    clientSecret: 'acme-secret',
    authorization: { url: idp.authorizationEndpoint, params: { scope: 'read:user' } },
    token: idp.tokenEndpoint,
    userinfo: idp.apiUrl,
    profile: (me) => ({ id: String(me.id), name: String(me.name), email: me.email as string, emailVerified: true }),
    dangerouslyAllowInsecureRequests: true,
    ...overrides,
  })

/** The code exchange a Passport-style `token.request` makes, at the IdP's token endpoint. */
async function exchangeAtIdp({ code, redirectUri, codeVerifier }: TokenRequestContext): Promise<TokenSet> {
  const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri })
  if (codeVerifier) body.set('code_verifier', codeVerifier)
  const response = await fetch(idp.tokenEndpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from('acme:acme-secret').toString('base64')}`, accept: 'application/json' },
    body,
  })
  return (await response.json()) as TokenSet
}

/** The log lines at `level` with `code`, each as its message. */
function logged(logger: RecordingLogger, level: LogLevel, code: string): string[] {
  return logger.lines.filter((line) => line.level === level && line.code === code).map((line) => line.message.join(' '))
}

/** A browser that has been through the IdP: the callback navigation, not yet delivered. */
async function authorized(providerId: string, browser = new Browser()): Promise<{ browser: Browser; navigation: Navigation & { method: 'GET' } }> {
  const navigation = await browser.authorize(await startSignIn(browser, app.url, providerId))
  if (navigation.method !== 'GET') throw new Error('expected a redirect back')
  return { browser, navigation }
}

/** The sign-in was refused: back on the sign-in page with `error` and `code`, and no session. */
async function expectRefused(browser: Browser, response: Response, error: string, code: string | null): Promise<void> {
  const redirect = redirectOf(response)
  expect({ path: redirect.url.pathname, error: redirect.error, code: redirect.code }).toEqual({ path: '/api/auth/signin', error, code })
  expect(await sessionOf(browser, app.url)).toBeNull()
}

/** The sign-in ended on the error page with `Configuration` (the app's fault), and no session. */
async function expectConfigurationError(browser: Browser, response: Response): Promise<void> {
  const redirect = redirectOf(response)
  expect({ path: redirect.url.pathname, error: redirect.error }).toEqual({ path: '/api/auth/error', error: 'Configuration' })
  expect(await sessionOf(browser, app.url)).toBeNull()
}

describe('the authorization request', () => {
  it('ignores authorizationParams that the flow sets itself (client_id, redirect_uri, response_type, state, nonce, PKCE, request, request_uri), logging each, and still signs in', async () => {
    const logger = recordingLogger()
    mountApp(app, { providers: [corp()], logger })
    const browser = new Browser()
    const query = new URLSearchParams({
      client_id: 'evil-client',
      redirect_uri: 'https://evil.example/callback',
      code_challenge: 'attacker-chosen-challenge',
      code_challenge_method: 'plain',
      response_type: 'token', state: 'forged-state', nonce: 'fixed-nonce', request: 'eyJhbGciOiJub25lIn0.e30.', request_uri: 'urn:evil:request', prompt: 'login' })
    const url = new URL(await startSignIn(browser, app.url, 'corp', { query: query.toString() }))
    expect(url.searchParams.getAll('client_id')).toEqual(['corp'])
    expect(url.searchParams.getAll('redirect_uri')).toEqual([`${app.url}/api/auth/callback/corp`])
    expect(url.searchParams.getAll('code_challenge')).toEqual([expect.not.stringMatching(/^attacker-chosen-challenge$/)])
    expect(url.searchParams.getAll('code_challenge_method')).toEqual(['S256'])
    expect(url.searchParams.getAll('response_type')).toEqual(['code'])
    // The default checks of an oidc provider have no state: a caller's state must not appear either.
    expect(url.searchParams.has('state')).toBe(false)
    expect(url.searchParams.getAll('nonce')).toEqual([expect.not.stringMatching(/^fixed-nonce$/)])
    expect(url.searchParams.has('request')).toBe(false)
    expect(url.searchParams.has('request_uri')).toBe(false)
    expect(url.searchParams.get('prompt')).toBe('login')
    expect(logged(logger, 'warn', 'AuthorizationParamIgnored')).toEqual(
      ['client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'response_type', 'state', 'nonce', 'request', 'request_uri'].map((key) => `authorizationParams.${key} is set by the sign-in flow and was ignored.`),
    )
    expect(redirectOf(await finishSignIn(browser, await browser.authorize(url.href))).url.href).toBe(`${app.url}/`)
    expect((await sessionOf(browser, app.url))?.user?.id).toBe('alice')
  })

  it('asks a plain OAuth 2 provider for no OpenID scope: without a configured scope, none is sent', async () => {
    mountApp(app, { providers: [acme({ authorization: idp.authorizationEndpoint })] })
    const url = new URL(await startSignIn(new Browser(), app.url, 'acme'))
    expect(url.searchParams.has('scope')).toBe(false)
    expect(url.searchParams.get('response_type')).toBe('code')
  })
})

describe('a custom token.request (oauth providers whose exchange is not standard)', () => {
  it('is given the code and PKCE verifier; a token set without token_type is a bearer token', async () => {
    const calls: JWTCallbackParams[] = []
    const jwt = (params: JWTCallbackParams) => {
      calls.push(params)
      return params.token
    }
    mountApp(app, {
      callbacks: { jwt },
      providers: [
        acme({
          token: {
            request: async (context) => {
              const { token_type: _dropped, ...tokens } = await exchangeAtIdp(context)
              return tokens
            },
          },
        }),
      ],
    })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'acme', 'frank')).url.href).toBe(`${app.url}/`)
    expect((await sessionOf(browser, app.url))?.user).toMatchObject({ id: 'frank', email: 'frank@example.com' })
    const account = calls.find((call) => call.trigger === 'signIn')!.account!
    expect(account).toMatchObject({ provider: 'acme', type: 'oauth', providerAccountId: 'frank', token_type: 'bearer', access_token: expect.any(String) })
  })

  it('fails with code_missing when the callback has no code, without asking the exchange', async () => {
    const logger = recordingLogger()
    let requests = 0
    mountApp(app, { logger, providers: [acme({ token: { request: (context) => (requests++, exchangeAtIdp(context)) } })] })
    const { browser, navigation } = await authorized('acme')
    const url = new URL(navigation.url)
    url.searchParams.delete('code')
    await expectRefused(browser, await browser.request(url.href), 'OAuthCallbackError', 'code_missing')
    expect(requests).toBe(0)
    expect(logged(logger, 'warn', 'OAuthCallbackError')).toEqual(['The "acme" callback has no code parameter.'])
  })

  it('fails with token_request_failed when the exchange throws, the log saying what it threw', async () => {
    const logger = recordingLogger()
    mountApp(app, {
      logger,
      providers: [
        acme({
          token: {
            request: () => {
              throw new Error('the strategy could not reach the provider')
            },
          },
        }),
      ],
    })
    const browser = new Browser()
    await expectRefused(browser, await signInWith(browser, app.url, 'acme'), 'OAuthCallbackError', 'token_request_failed')
    expect(logged(logger, 'warn', 'OAuthCallbackError')).toEqual(['token.request of the "acme" provider failed: Error: the strategy could not reach the provider'])
  })

  const notTokenSets: [string, unknown][] = [
    ['null', null],
    ['an object without access_token', { token_type: 'bearer', expires_in: 3600 }],
    ['an empty access_token', { access_token: '' }],
    ['a numeric access_token', { access_token: 42 }],
    ['a function carrying an access_token', Object.assign(() => undefined, { access_token: 'looks-like-a-token' })],
  ]
  it.each(notTokenSets)('fails with token_request_failed when the exchange answers %s: no session made of nothing', async (_name, answer) => {
    const logger = recordingLogger()
    mountApp(app, { logger, providers: [acme({ token: { request: () => answer as TokenSet } })] })
    const browser = new Browser()
    await expectRefused(browser, await signInWith(browser, app.url, 'acme'), 'OAuthCallbackError', 'token_request_failed')
    expect(logged(logger, 'warn', 'OAuthCallbackError')).toEqual(['token.request of the "acme" provider returned no access_token.'])
  })
})

describe('a custom userinfo.request', () => {
  it('is given the token set with expires_at in seconds since the epoch', async () => {
    const seen: TokenSet[] = []
    mountApp(app, { providers: [acme({ userinfo: { request: ({ tokens }) => (seen.push(tokens), { id: 'from-request', name: 'Requested' }) } })] })
    const before = Math.floor(Date.now() / 1000)
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'acme')).error).toBeNull()
    const after = Math.ceil(Date.now() / 1000)
    expect((await sessionOf(browser, app.url))?.user?.id).toBe('from-request')
    expect(seen).toHaveLength(1)
    // The test IdP's access tokens live one hour.
    expect(seen[0]!.expires_at).toBeGreaterThanOrEqual(before + 3600)
    expect(seen[0]!.expires_at).toBeLessThanOrEqual(after + 3600)
  })

  it('fails with userinfo_failed when it throws, the log saying what it threw', async () => {
    const logger = recordingLogger()
    mountApp(app, {
      logger,
      providers: [
        acme({
          userinfo: {
            request: () => {
              throw new Error('the API is down')
            },
          },
        }),
      ],
    })
    const browser = new Browser()
    await expectRefused(browser, await signInWith(browser, app.url, 'acme'), 'OAuthCallbackError', 'userinfo_failed')
    expect(logged(logger, 'warn', 'OAuthCallbackError')).toEqual(['userinfo.request of the "acme" provider failed: Error: the API is down'])
  })

  it.each([
    ['null', null],
    ['a string', 'alice'],
    ['a number', 42],
  ])('fails with userinfo_failed when it answers %s instead of a profile object', async (_name, answer) => {
    const logger = recordingLogger()
    const profile = (me: Record<string, unknown>) => ({ id: String(me.id) })
    mountApp(app, { logger, providers: [acme({ profile, userinfo: { request: () => answer as unknown as Record<string, unknown> } })] })
    const browser = new Browser()
    await expectRefused(browser, await signInWith(browser, app.url, 'acme'), 'OAuthCallbackError', 'userinfo_failed')
    expect(logged(logger, 'warn', 'OAuthCallbackError')).toEqual(['userinfo.request of the "acme" provider returned no profile object.'])
  })
})

describe("profile()'s user", () => {
  it('a profile() that throws is a configuration error, logged with what it threw', async () => {
    const logger = recordingLogger()
    mountApp(app, {
      logger,
      providers: [
        acme({
          profile: () => {
            throw new Error('unexpected profile shape')
          },
        }),
      ],
    })
    const browser = new Browser()
    await expectConfigurationError(browser, await signInWith(browser, app.url, 'acme'))
    expect(logged(logger, 'error', 'CallbackRouteError')).toEqual(['CallbackRouteError: profile() of the "acme" provider threw: Error: unexpected profile shape'])
  })

  const noId: [string, unknown][] = [
    ['null', null],
    ['a user without id', { name: 'Nobody' }],
    ['an id of null', { id: null, name: 'Nobody' }],
    ['an empty id', { id: '', name: 'Nobody' }],
    ['a function carrying an id', Object.assign(() => undefined, { id: 'looks-like-an-id' })],
  ]
  it.each(noId)('a profile() that returns %s signs nobody in: no account under a made-up id', async (_name, user) => {
    const logger = recordingLogger()
    mountApp(app, { logger, providers: [acme({ profile: () => user as { id: string } })] })
    const browser = new Browser()
    await expectConfigurationError(browser, await signInWith(browser, app.url, 'acme'))
    expect(logged(logger, 'error', 'CallbackRouteError')).toEqual([
      `CallbackRouteError: profile() of the "acme" provider returned no id: it becomes the account's providerAccountId, so return the provider's stable user id.`,
    ])
  })

  it('keeps no address that is empty, even one marked verified', async () => {
    const users: JWTCallbackParams['user'][] = []
    const jwt = (params: JWTCallbackParams) => {
      if (params.trigger === 'signIn') users.push(params.user)
      return params.token
    }
    mountApp(app, { callbacks: { jwt }, providers: [acme({ profile: (me) => ({ id: String(me.id), name: 'Empty', email: '', emailVerified: true }) })] })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'acme')).error).toBeNull()
    expect(users).toEqual([expect.objectContaining({ id: 'alice', email: null })])
    expect((await sessionOf(browser, app.url))?.user?.email ?? null).toBeNull()
  })

  it.each([
    ['no address (null)', null],
    ['an empty address', ''],
    ['no email field at all', undefined],
  ])('logs nothing about unverified addresses for a profile with %s', async (_name, email) => {
    const logger = recordingLogger()
    mountApp(app, { logger, debug: true, providers: [acme({ profile: (me) => ({ id: String(me.id), name: 'No Address', ...(email === undefined ? {} : { email }) }) })] })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'acme')).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user?.email ?? null).toBeNull()
    expect(logger.lines.filter((line) => line.code === 'UnverifiedEmailIgnored')).toEqual([])
  })

  it('drops an address profile() marks unverified (emailVerified: false) with a debug line, not the warning meant for unmarked ones', async () => {
    const logger = recordingLogger()
    mountApp(app, { logger, debug: true, providers: [acme({ profile: (me) => ({ id: String(me.id), name: 'Unverified', email: me.email as string, emailVerified: false }) })] })
    for (const login of ['alice', 'bob']) {
      const browser = new Browser()
      expect(redirectOf(await signInWith(browser, app.url, 'acme', login)).error).toBeNull()
      expect((await sessionOf(browser, app.url))?.user?.email ?? null).toBeNull()
    }
    expect(logged(logger, 'warn', 'UnverifiedEmailIgnored')).toEqual([])
    expect(logged(logger, 'debug', 'UnverifiedEmailIgnored')).toEqual(Array(2).fill('The "acme" provider did not mark the address verified; it is not used.'))
  })
})

describe('the client', () => {
  describe('an oauth provider with issuer and jwks_endpoint (ID tokens without discovery)', () => {
    const signed = () =>
      OAuth({
        id: 'signed',
        name: 'Signed',
        clientId: 'signed',
        clientSecret: 'signed-secret',
        issuer: idp.issuer,
        jwks_endpoint: idp.jwksUri,
        authorization: { url: idp.authorizationEndpoint, params: { scope: 'openid profile email' } },
        token: idp.tokenEndpoint,
        userinfo: idp.userinfoEndpoint,
        checks: ['pkce', 'nonce'],
        dangerouslyAllowInsecureRequests: true,
      })

    it('rejects an ID token signed with a rogue key under the IdP’s key id: its signature is checked against jwks_endpoint', async () => {
      const rogue = await generateKeyPair('RS256')
      forge = (claims, kid) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(rogue.privateKey)
      mountApp(app, { providers: [signed()] })
      const browser = new Browser()
      await expectRefused(browser, await signInWith(browser, app.url, 'signed'), 'OAuthCallbackError', 'id_token_signature')
    })

    it('accepts the same token signed honestly (the forgery is the only change)', async () => {
      forge = (claims) => idp.signIdToken(claims)
      mountApp(app, { providers: [signed()] })
      const browser = new Browser()
      expect(redirectOf(await signInWith(browser, app.url, 'signed')).url.href).toBe(`${app.url}/`)
      expect((await sessionOf(browser, app.url))?.user?.email).toBe('alice@example.com')
    })
  })

  describe('a clientSecret function', () => {
    it('is asked for the secret of each token request', async () => {
      const asked: string[] = []
      mountApp(app, { providers: [corp({ clientSecret: ({ clientId }) => (asked.push(clientId), 'corp-secret') })] })
      for (const login of ['alice', 'bob']) expect(redirectOf(await signInWith(new Browser(), app.url, 'corp', login)).url.href).toBe(`${app.url}/`)
      expect(asked).toEqual(['corp', 'corp'])
      expect(idpPaths.filter((path) => path === '/token')).toHaveLength(2)
    })

    it.each([
      ['an empty string', ''],
      ['nothing', undefined],
      ['an object instead of the string', { secret: 'corp-secret' }],
    ])('that returns %s stops the sign-in before any token request with OAuthSignInError, the log naming the provider', async (_name, secret) => {
      const logger = recordingLogger()
      mountApp(app, { logger, providers: [corp({ clientSecret: () => secret as string })] })
      const browser = new Browser()
      const response = await signInWith(browser, app.url, 'corp')
      expect(idpPaths).not.toContain('/token')
      // A configuration fault of the app: OAuthSignInError on the sign-in page and in the log at error level.
      expect(redirectOf(response)).toMatchObject({ url: expect.objectContaining({ pathname: '/api/auth/signin' }), error: 'OAuthSignInError' })
      expect(await sessionOf(browser, app.url)).toBeNull()
      expect(logger.lines.filter((line) => line.code === 'OAuthSignInError')).toEqual([
        { level: 'error', code: 'OAuthSignInError', message: ['OAuthSignInError: The clientSecret function of the "corp" provider returned no secret.'] },
      ])
    })
  })

  it('a failed discovery fails the sign-in naming the provider and its issuer; server-side signIn() rejects with the redacted cause', async () => {
    const logger = recordingLogger()
    const portcullis = mountApp(app, { logger, providers: [corp({ issuer: downIssuer.url })] })
    const browser = new Browser()
    const { csrfToken } = (await (await browser.request(`${app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
    const failed = await browser.request(`${app.url}/api/auth/signin/corp`, { body: new URLSearchParams({ csrfToken }) })
    expect(redirectOf(failed).error).toBe('OAuthSignInError')
    const line = `OAuthSignInError: Discovery of the "corp" provider's issuer ${downIssuer.url} failed: ClientError [OAUTH_RESPONSE_IS_NOT_CONFORM]: unexpected HTTP response status code`
    expect(logged(logger, 'error', 'OAuthSignInError')).toEqual([line])

    const withLink = express()
    withLink.use('/api/auth', portcullis.handlers)
    withLink.get(
      '/login',
      portcullis.auth(async (_req, res) => {
        try {
          res.json({ url: await portcullis.signIn('corp', { redirect: false }) })
        } catch (error) {
          const { name, message, cause } = error as Error & { cause?: Error & { code?: unknown } }
          res.status(502).json({ name, message, cause: cause && { name: cause.name, code: cause.code, message: cause.message, nested: cause.cause !== undefined } })
        }
      }),
    )
    app.mount(withLink)
    const answer = (await (await new Browser().request(`${app.url}/login`)).json()) as Record<string, unknown>
    expect(`${String(answer.name)}: ${String(answer.message)}`).toBe(line)
    // A redacted copy of openid-client's error: what failed, without the response it kept.
    expect(answer.cause).toEqual({ name: 'ClientError', code: 'OAUTH_RESPONSE_IS_NOT_CONFORM', message: 'unexpected HTTP response status code', nested: false })
  })
})
