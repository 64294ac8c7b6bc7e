/**
 * The OAuth check cookies (state, PKCE verifier, nonce) over HTTPS carry the same protections as the
 * session and CSRF cookies: `__Secure-` names, HttpOnly (no script reads a verifier), Secure (never
 * sent over plain HTTP, where a network attacker would read the PKCE verifier and finish the flow),
 * SameSite=Lax and a 15-minute life. The callback clears them with the same attributes: a browser
 * ignores a `__Secure-` cookie set without Secure, so a clearing cookie without it would leave the
 * checks in place to be replayed.
 *
 * HTTPS here is a TLS-terminating proxy in front of the app (`trust proxy` and X-Forwarded-Proto).
 */
import express from 'express'
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals'
import OIDC from 'portcullis/providers/oidc'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, type Listener } from '../support/oauth-app.js'

const CHECK_COOKIES = ['__Secure-authjs.state', '__Secure-authjs.pkce.code_verifier', '__Secure-authjs.nonce']

let idp: TestIdp
let app: Listener

beforeAll(async () => {
  app = await listen()
  const httpsCallback = app.callbackUrl('corp').replace(/^http:/, 'https:')
  idp = await startIdp({ clients: [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [httpsCallback] }] })
  const behindTlsProxy = () => express().set('trust proxy', 'loopback')
  mountApp(
    app,
    { providers: [OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', checks: ['pkce', 'state', 'nonce'], dangerouslyAllowInsecureRequests: true })] },
    behindTlsProxy,
  )
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

interface ParsedCookie {
  name: string
  value: string
  /** Attribute names lower-cased, to their values ('' for flags). */
  attributes: Record<string, string>
}

function parseSetCookie(header: string): ParsedCookie {
  const [pair, ...attributes] = header.split(';').map((part) => part.trim())
  const separator = pair!.indexOf('=')
  return {
    name: pair!.slice(0, separator),
    value: pair!.slice(separator + 1),
    attributes: Object.fromEntries(attributes.map((attribute) => {
      const at = attribute.indexOf('=')
      return at < 0 ? [attribute.toLowerCase(), ''] : [attribute.slice(0, at).toLowerCase(), attribute.slice(at + 1)]
    })),
  }
}

const cookiesOf = (response: Response) => new Map(response.headers.getSetCookie().map(parseSetCookie).map((cookie) => [cookie.name, cookie]))

/** What every check cookie must say, set or cleared. */
function expectProtected(cookie: ParsedCookie | undefined, name: string) {
  expect(cookie).toBeDefined()
  expect({ name, httpOnly: 'httponly' in cookie!.attributes, secure: 'secure' in cookie!.attributes, sameSite: cookie!.attributes.samesite, path: cookie!.attributes.path }).toEqual({
    name,
    httpOnly: true,
    secure: true,
    sameSite: 'Lax',
    path: '/',
  })
}

const overHttps = { 'x-forwarded-proto': 'https' }

/** GET /csrf then POST /signin/corp over HTTPS (or plain HTTP): the response redirecting to the IdP. */
async function startSignIn(secure = true): Promise<Response> {
  const headers = secure ? overHttps : {}
  const csrf = await fetch(`${app.url}/api/auth/csrf`, { headers })
  const csrfCookie = cookiesOf(csrf).get(secure ? '__Host-authjs.csrf-token' : 'authjs.csrf-token')!
  const { csrfToken } = (await csrf.json()) as { csrfToken: string }
  return fetch(`${app.url}/api/auth/signin/corp`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...headers, cookie: `${csrfCookie.name}=${csrfCookie.value}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken }),
  })
}

it('sets the state, PKCE and nonce cookies HttpOnly, Secure, SameSite=Lax, Path=/, for 15 minutes', async () => {
  const response = await startSignIn()
  expect(response.status).toBe(302)
  expect(response.headers.get('location')!.startsWith(idp.authorizationEndpoint)).toBe(true)
  const cookies = cookiesOf(response)
  for (const name of CHECK_COOKIES) {
    expectProtected(cookies.get(name), name)
    expect(cookies.get(name)!.value.length).toBeGreaterThan(0)
    expect(cookies.get(name)!.attributes['max-age']).toBe('900')
  }
  // No unprefixed copy that plain HTTP could read or overwrite.
  for (const name of CHECK_COOKIES) expect(cookies.has(name.replace('__Secure-', ''))).toBe(false)
})

it('clears them on the callback with the same attributes, so the browser really drops them', async () => {
  const callback = await sendCallback(await startSignIn(), overHttps)
  expect(callback.status).toBe(302)
  expect(new URL(callback.headers.get('location')!).searchParams.get('error')).toBe('OAuthCallbackError')
  const cleared = cookiesOf(callback)
  for (const name of CHECK_COOKIES) {
    expectProtected(cleared.get(name), name)
    expect(cleared.get(name)!.value).toBe('')
    expect(cleared.get(name)!.attributes['max-age']).toBe('0')
  }
})

/**
 * The callback of the flow that `started` began, with a code the IdP never issued, sending back the
 * check cookies it set (under the names `rename` gives, or their own): whether the checks pass
 * shows in where the callback redirects (they pass when only the token exchange fails).
 */
async function sendCallback(started: Response, headers: Record<string, string>, rename = (name: string) => name): Promise<Response> {
  const checks = [...cookiesOf(started).values()].filter((cookie) => CHECK_COOKIES.includes(`__Secure-${cookie.name.replace(/^__Secure-/, '')}`))
  const state = new URL(started.headers.get('location')!).searchParams.get('state')!
  return fetch(`${app.url}/api/auth/callback/corp?code=never-issued&state=${encodeURIComponent(state)}&iss=${encodeURIComponent(idp.issuer)}`, {
    redirect: 'manual',
    headers: { ...headers, cookie: checks.map((cookie) => `${rename(cookie.name)}=${cookie.value}`).join('; ') },
  })
}

/** The `error` and `code` of that callback's redirect. */
async function callbackOf(started: Response, headers: Record<string, string>, rename?: (name: string) => string): Promise<{ error: string | null; code: string | null }> {
  const response = await sendCallback(started, headers, rename)
  expect(response.status).toBe(302)
  const params = new URL(response.headers.get('location')!).searchParams
  return { error: params.get('error'), code: params.get('code') }
}

// The sealed checks carry their own expiry, 15 minutes like the cookies' Max-Age (with the 15 s of
// clock skew every sealed token gets): a cookie kept past its Max-Age must not open either.
it.each([
  [14, { error: 'OAuthCallbackError', code: 'invalid_grant' }],
  [16, { error: 'InvalidCheck', code: 'state_cookie_invalid' }],
])('a callback %i minutes after the sign-in started: %o', async (minutes, expected) => {
  const started = await startSignIn()
  const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + minutes * 60_000)
  try {
    expect(await callbackOf(started, overHttps)).toEqual(expected)
  } finally {
    clock.mockRestore()
  }
})

// A sign-in started over plain HTTP sets unprefixed check cookies; a callback over HTTPS looks for
// the __Secure- ones: the failure names that cause (a proxy without "trust proxy"), not a lost cookie.
it('a sign-in started over HTTP and finished over HTTPS fails with state_cookie_name_mismatch', async () => {
  expect(await callbackOf(await startSignIn(false), overHttps)).toEqual({ error: 'InvalidCheck', code: 'state_cookie_name_mismatch' })
  expect(await callbackOf(await startSignIn(true), {})).toEqual({ error: 'InvalidCheck', code: 'state_cookie_name_mismatch' })
  // Cookies under neither name: the cookie is missing, and the failure says that instead.
  expect(await callbackOf(await startSignIn(true), overHttps, (name) => name.replace('__Secure-', 'x-'))).toEqual({ error: 'InvalidCheck', code: 'state_cookie_missing' })
})
