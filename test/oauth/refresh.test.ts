/**
 * getAccessToken with JWT sessions, against a real OpenID Provider (oidc-provider in-process) that
 * issues short-lived access tokens and rotates refresh tokens, revoking the whole grant when a used
 * one comes back: the tokens kept in the session cookie, one refresh for concurrent requests, no
 * replay of a rotated refresh token, the re-sealed cookie, and the typed errors.
 */
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import express from 'express'
import { describe, expect, it } from '@jest/globals'
import { MissingRequestContextError, type JWT, type JWTCallbackParams, type Session } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { Browser } from '../support/browser.js'
import { signInWith } from '../support/oauth-app.js'
import { corpProvider, mountTokenApp, SESSION_COOKIE as COOKIE, SHORT_TTL, useRefreshRig } from '../support/refresh-rig.js'

const rig = useRefreshRig()

/** Records the jwt callback's sign-in calls; returns the token unchanged (or as `strip` leaves it). */
function recordSignIns(strip?: (token: JWT) => JWT) {
  const signIns: JWTCallbackParams[] = []
  const jwt = (params: JWTCallbackParams) => {
    if (params.trigger) signIns.push(structuredClone(params))
    return strip ? strip(params.token) : params.token
  }
  return { signIns, jwt }
}

/** Signs `login` in with access tokens living `ttl` seconds; later tokens (refreshes) live an hour. */
async function signedIn(browser: Browser, login: string, ttl = SHORT_TTL): Promise<void> {
  const callback = await rig.signInWith(browser, login, { ttl })
  expect(callback.status).toBe(302)
}

async function tokenOf(browser: Browser, query = '', cookie?: string): Promise<{ status: number; body: { token?: string; code?: string; auth?: Session | null }; setsSession: boolean }> {
  const response = await browser.request(`${rig.app.url}/token${query}`, cookie === undefined ? {} : { headers: { cookie } })
  return { status: response.status, body: (await response.json()) as never, setsSession: response.headers.getSetCookie().some((line) => line.startsWith(`${COOKIE}=`)) }
}

describe('the provider tokens in the session token', () => {
  it('are sealed in at sign-in under the provider id (no ID token), where the jwt callback sees them', async () => {
    const { signIns, jwt } = recordSignIns()
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)], callbacks: { jwt } })
    await signedIn(new Browser(), 'alice')
    const [signIn] = signIns
    const account = signIn!.account!
    expect(signIn!.token.provider_tokens).toEqual({
      corp: { access_token: account.access_token, refresh_token: account.refresh_token, expires_at: account.expires_at },
    })
    expect(account.refresh_token).toEqual(expect.any(String))
  })

  it('keep the first provider’s entry when the same user signs in with a second provider', async () => {
    const { signIns, jwt } = recordSignIns()
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp), corpProvider(rig.idp, { id: 'corp-second', name: 'Corp again' })], callbacks: { jwt } })
    const browser = new Browser()
    await signedIn(browser, 'alice', 3600)
    expect((await signInWith(browser, rig.app.url, 'corp-second', 'alice')).status).toBe(302)
    expect(Object.keys(signIns[1]!.token.provider_tokens!).sort()).toEqual(['corp', 'corp-second'])
    expect((await tokenOf(browser)).body.token).toBe(signIns[0]!.account!.access_token)
    expect((await tokenOf(browser, '?provider=corp-second')).body.token).toBe(signIns[1]!.account!.access_token)
    // Another user's session is not carried over: bob signs in on a browser holding alice's session.
    const other = new Browser()
    other.setCookie(rig.app.url, COOKIE, browser.cookie(rig.app.url, COOKIE)!)
    expect((await signInWith(other, rig.app.url, 'corp-second', 'bob')).status).toBe(302)
    expect(signIns[2]!.token.sub).toBe('bob')
    expect(Object.keys(signIns[2]!.token.provider_tokens!)).toEqual(['corp-second'])
  })

  it('stay reachable when the same user signs in again with a password, and do not pass to another user', async () => {
    const { signIns, jwt } = recordSignIns()
    const password = Credentials({ authorize: async ({ username }) => ({ id: String(username) }) })
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp), password], callbacks: { jwt } })
    const browser = new Browser()
    await signedIn(browser, 'alice', 3600)
    const withPassword = async (holder: Browser, username: string) => {
      const { csrfToken } = (await (await holder.request(`${rig.app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
      const response = await holder.request(`${rig.app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken, username, password: 'x' }) })
      expect(response.status).toBe(302)
    }
    const aliceCookie = browser.cookie(rig.app.url, COOKIE)!
    await withPassword(browser, 'alice')
    expect(signIns[1]!.account!.type).toBe('credentials')
    expect(signIns[1]!.token.provider_tokens).toEqual(signIns[0]!.token.provider_tokens)
    expect((await tokenOf(browser)).body.token).toBe(signIns[0]!.account!.access_token)
    // Bob, signing in with a password on a browser holding alice's session, gets none of her tokens.
    const other = new Browser()
    other.setCookie(rig.app.url, COOKIE, aliceCookie)
    await withPassword(other, 'bob')
    expect(signIns[2]!.token.sub).toBe('bob')
    expect(signIns[2]!.token.provider_tokens).toBeUndefined()
    expect((await tokenOf(other)).body.code).toBe('no_account')
  })

  it('are left out, with a warning, when they would take the session token over jwt.maxSize: the sign-in still works', async () => {
    const warnings: unknown[][] = []
    const { signIns, jwt } = recordSignIns()
    // Room for alice's claims (about 550 bytes sealed) but not for her tokens too (about 800).
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)], callbacks: { jwt }, jwt: { maxSize: 700 }, logger: { warn: (...args: unknown[]) => void warnings.push(args), error: () => {}, debug: () => {} } })
    const browser = new Browser()
    await signedIn(browser, 'alice', 3600)
    expect(signIns[0]!.token.provider_tokens).toBeDefined()
    expect(((await (await browser.request(`${rig.app.url}/me`)).json()) as Session).user.id).toBe('alice')
    expect((await tokenOf(browser)).body.code).toBe('no_account')
    const [, message] = warnings.find(([code]) => code === 'ProviderTokensDropped')!
    // What it cost and what to do: the size, the limit, and the two ways out.
    expect(message).toMatch(/^With the provider tokens, the session token would be \d+ bytes, over jwt\.maxSize \(700\): they are left out, and getAccessToken\(\) answers no_account for this session\. Raise jwt\.maxSize, or trim what the jwt callback adds\.$/)
  })

  it('can be dropped by the jwt callback: getAccessToken then answers no_account', async () => {
    const { jwt } = recordSignIns(({ provider_tokens: _dropped, ...token }) => token)
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)], callbacks: { jwt } })
    const browser = new Browser()
    await signedIn(browser, 'alice', 3600)
    expect((await tokenOf(browser)).body.code).toBe('no_account')
  })
})

describe('getAccessToken with JWT sessions', () => {
  it('returns the stored access token while it is fresh, without asking the provider', async () => {
    const { signIns, jwt } = recordSignIns()
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)], callbacks: { jwt } })
    const browser = new Browser()
    await signedIn(browser, 'alice', 3600)
    const before = rig.refreshes()
    const answer = await tokenOf(browser)
    expect(answer).toMatchObject({ status: 200, body: { token: signIns[0]!.account!.access_token }, setsSession: false })
    expect(rig.refreshes()).toBe(before)
  })

  it('50 concurrent requests with the same expiring cookie cause one refresh; all get the new token and cookie', async () => {
    const { signIns, jwt } = recordSignIns()
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)], callbacks: { jwt } })
    const browser = new Browser()
    await signedIn(browser, 'alice')
    const first = signIns[0]!.account!
    const oldCookie = `${COOKIE}=${browser.cookie(rig.app.url, COOKIE)}`
    const before = rig.refreshes()

    const answers = await Promise.all(Array.from({ length: 50 }, () => tokenOf(browser, '', oldCookie)))
    expect(rig.refreshes() - before).toBe(1)
    const tokens = new Set(answers.map((answer) => answer.body.token))
    expect(tokens.size).toBe(1)
    const [token] = [...tokens] as [string]
    expect(token).not.toBe(first.access_token)
    expect(answers.every((answer) => answer.status === 200 && answer.setsSession)).toBe(true)
    expect(await rig.accepts(token)).toBe(true)

    // The browser's new cookie holds the new token set: fresh now, so no further refresh.
    expect((await tokenOf(browser)).body.token).toBe(token)
    // A request still carrying the old cookie (sent before the new one arrived) gets the new tokens:
    // sending the rotated refresh token again would make the IdP revoke the whole grant.
    const late = await tokenOf(browser, '', oldCookie)
    expect(late).toMatchObject({ status: 200, body: { token }, setsSession: true })
    expect(rig.refreshes() - before).toBe(1)
    expect(await rig.accepts(token)).toBe(true)
  })

  it('two refreshes in one request (two providers) both reach the cookie: another instance then refreshes each without a replay', async () => {
    const providers = [corpProvider(rig.idp), corpProvider(rig.idp, { id: 'corp-second', name: 'Corp again' })]
    const portcullis = mountTokenApp(rig.app, { providers })
    // One more route on the same app: both providers' tokens in one handler, both due.
    const both = express()
    both.use('/api/auth', portcullis.handlers)
    both.get('/both', portcullis.auth(async (_req, res) => void res.json({ corp: await portcullis.getAccessToken('corp'), second: await portcullis.getAccessToken('corp-second') })))
    rig.app.mount(both)
    const browser = new Browser()
    expect((await rig.signInWith(browser, 'alice')).status).toBe(302)
    expect((await rig.signInWith(browser, 'alice', { provider: 'corp-second' })).status).toBe(302)
    const before = rig.refreshes()
    expect((await browser.request(`${rig.app.url}/both`)).status).toBe(200)
    expect(rig.refreshes() - before).toBe(2)

    // Another instance (another process, in effect: no memory of used refresh tokens) with the cookie
    // the browser kept: each provider's stored refresh token must be the current one.
    mountTokenApp(rig.app, { providers })
    for (const provider of ['corp', 'corp-second']) {
      const answer = await tokenOf(browser, `?provider=${provider}&skew=7200`)
      expect({ provider, status: answer.status, code: answer.body.code }).toEqual({ provider, status: 200, code: undefined })
      expect(await rig.accepts(answer.body.token!)).toBe(true)
    }
  })

  it('stores the rotated refresh token in the cookie: the next refresh uses it and works', async () => {
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    const browser = new Browser()
    await signedIn(browser, 'alice')
    const before = rig.refreshes()
    const first = (await tokenOf(browser)).body.token!
    // skew above the new token's lifetime: due again.
    const second = await tokenOf(browser, '?skew=7200')
    expect(second.status).toBe(200)
    expect(second.body.token).not.toBe(first)
    expect(rig.refreshes() - before).toBe(2)
    expect(await rig.accepts(second.body.token!)).toBe(true)
  })

  it('a browser back with the cookie from before a refresh gets the new token later on, not a replay', async () => {
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    const browser = new Browser()
    await signedIn(browser, 'alice')
    const oldCookie = `${COOKIE}=${browser.cookie(rig.app.url, COOKIE)}`
    const refreshed = await tokenOf(browser, '', oldCookie)
    const before = rig.refreshes()
    // The response with the new cookie was lost; the browser comes back with the old one a while later.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const again = await tokenOf(browser, '', oldCookie)
    expect(again).toMatchObject({ status: 200, body: { token: refreshed.body.token } })
    expect(rig.refreshes()).toBe(before)
  })

  it('a cookie two rotations behind follows them to the newest refresh token instead of replaying a used one', async () => {
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    const browser = new Browser()
    await signedIn(browser, 'alice')
    const oldest = `${COOKIE}=${browser.cookie(rig.app.url, COOKIE)}`
    await tokenOf(browser)
    // skew above the new token's lifetime: due again, so a second rotation.
    await tokenOf(browser, '?skew=7200')
    const before = rig.refreshes()
    const third = await tokenOf(browser, '?skew=7200', oldest)
    expect(third.status).toBe(200)
    expect(rig.refreshes() - before).toBe(1)
    expect(await rig.accepts(third.body.token!)).toBe(true)
  })

  it('a revoked refresh token gives invalid_grant, marks the session, and is not sent again', async () => {
    const { signIns, jwt } = recordSignIns()
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)], callbacks: { jwt } })
    const browser = new Browser()
    await signedIn(browser, 'bob')
    await rig.revoke(signIns[0]!.account!.refresh_token!)
    const before = rig.refreshes()

    const failed = await tokenOf(browser)
    expect(failed).toMatchObject({ status: 401, body: { code: 'invalid_grant', auth: { user: { id: 'bob' }, error: 'RefreshAccessTokenError' } }, setsSession: true })
    expect(rig.refreshes() - before).toBe(1)
    // Still signed in, and the session says a new sign-in is needed.
    const me = (await (await browser.request(`${rig.app.url}/me`)).json()) as Session
    expect(me).toMatchObject({ user: { id: 'bob' }, error: 'RefreshAccessTokenError' })
    // The mark is in the cookie: the dead refresh token is not sent again.
    expect((await tokenOf(browser)).body.code).toBe('invalid_grant')
    expect(rig.refreshes() - before).toBe(1)

    // Signing in again replaces the marked entry.
    await signedIn(browser, 'bob')
    expect(((await (await browser.request(`${rig.app.url}/me`)).json()) as Session).error).toBeUndefined()
    const again = await tokenOf(browser)
    expect(again.status).toBe(200)
    expect(await rig.accepts(again.body.token!)).toBe(true)
  })

  it('an expired access token without a refresh token gives no_refresh_token and marks the session', async () => {
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp, { authorization: { params: { scope: 'openid profile email' } } })] })
    const browser = new Browser()
    await signedIn(browser, 'carol')
    const before = rig.refreshes()
    expect(await tokenOf(browser)).toMatchObject({ status: 401, body: { code: 'no_refresh_token', auth: { error: 'RefreshAccessTokenError' } } })
    expect(rig.refreshes()).toBe(before)
  })

  it('a provider outage gives provider_error without marking the session; the next call refreshes', async () => {
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    const browser = new Browser()
    await signedIn(browser, 'dave')
    rig.beforeTokenRequest(async (ctx) => {
      ctx.status = 503
      ctx.body = 'down for maintenance'
      return true
    })
    const failed = await tokenOf(browser)
    expect(failed).toMatchObject({ status: 401, body: { code: 'provider_error' }, setsSession: false })
    expect(failed.body.auth?.error).toBeUndefined()

    rig.beforeTokenRequest(undefined)
    const answer = await tokenOf(browser)
    expect(answer.status).toBe(200)
    expect(await rig.accepts(answer.body.token!)).toBe(true)
  })

  it('answers not_signed_in without a session', async () => {
    mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    expect((await tokenOf(new Browser())).body.code).toBe('not_signed_in')
  })
})

describe('getAccessToken misuse', () => {
  const request = () => {
    const req = new IncomingMessage(new Socket())
    req.method = 'GET'
    req.headers = { host: '127.0.0.1' }
    return req
  }

  it('throws MissingRequestContextError outside a request context, naming the form to use', async () => {
    const { getAccessToken } = mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    await expect(getAccessToken('corp')).rejects.toThrow(MissingRequestContextError)
    await expect(getAccessToken('corp')).rejects.toThrow('getAccessToken({ req, res }, providerId)')
  })

  it('throws TypeError for a provider that is not a configured OAuth provider', async () => {
    const { getAccessToken } = mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    const req = request()
    await expect(getAccessToken({ req, res: new ServerResponse(req) }, 'github')).rejects.toThrow('"github" is not a configured OAuth/OIDC provider (configured: corp)')
  })

  it('throws TypeError with JWT sessions when there is no response to re-seal the cookie on', async () => {
    const { getAccessToken } = mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)] })
    await expect(getAccessToken({ req: request() }, 'corp')).rejects.toThrow(TypeError)
  })
})
