/**
 * A real Express app around Portcullis, listening on an ephemeral port, and the few HTTP steps the
 * security tests repeat (get a CSRF token, sign in, read Set-Cookie). Cookies are handled by hand,
 * not by a cookie jar, so that each test decides exactly what the "browser" sends.
 */
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import type { Server, ServerOptions } from 'node:http'
import { jest } from '@jest/globals'
import { parseSetCookie } from 'cookie'
import express from 'express'
import request from 'supertest'
import type { Response } from 'supertest'
import type { PortcullisConfig, PortcullisResult, User } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { authApp, closeAll, listenApp } from './app-rig.js'
import { SECRET } from './flow.js'

// Express 4 is installed under another name and has no types of its own; its API is the same
// for what these tests use (`express()`, `app.use`, `app.get`, `app.listen`).
const express4 = createRequire(import.meta.url)('express4') as typeof express

export { SECRET, closeAll }
export const OTHER_SECRET = 'another-test-secret-of-at-least-32-chars'
export const SESSION_COOKIE = 'authjs.session-token'
export const CSRF_COOKIE = 'authjs.csrf-token'
export const CALLBACK_COOKIE = 'authjs.callback-url'
export const USERNAME = 'ada'
export const PASSWORD = 'correct-horse-battery-staple'
export const USER = { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' } as const

export type AuthorizeMock = jest.Mock<(credentials: Record<string, unknown>, req: unknown) => Promise<User | null>>

export interface SecurityApp extends PortcullisResult {
  /** `http://127.0.0.1:<port>`: the origin the app sees in the Host header. */
  origin: string
  /** supertest against the running server: `app.http.get('/me')`. */
  http: ReturnType<typeof request>
  /** The credentials provider's authorize. */
  authorize: AuthorizeMock
  server: Server
}

export interface SecurityAppOptions {
  /** Overrides of the Portcullis config; `providers` replaces the default credentials provider. */
  config?: Partial<PortcullisConfig>
  authorize?: AuthorizeMock
  flavor?: 'express5' | 'express4'
  /** Node's server options, e.g. a larger `maxHeaderSize` for many cookie chunks. */
  server?: ServerOptions
}

/** An authorize that accepts `ada` / PASSWORD. */
export function acceptingAuthorize(): AuthorizeMock {
  return jest.fn(async (credentials: Record<string, unknown>) =>
    credentials['username'] === USERNAME && credentials['password'] === PASSWORD ? { ...USER } : null,
  )
}

/**
 * Starts the app rig (support/app-rig.ts) with the credentials provider of `authorize`, listening.
 * Close every started app with `closeAll()` in `afterAll`.
 */
export async function startApp(options: SecurityAppOptions = {}): Promise<SecurityApp> {
  const authorize = options.authorize ?? acceptingAuthorize()
  const credentials = Credentials({
    credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
    authorize: authorize as never,
  })
  const { app, ...portcullis } = authApp({ secret: SECRET, providers: [credentials], ...options.config }, options.flavor === 'express4' ? express4 : express)
  const { server, origin } = await listenApp(app, options.server)
  return { ...portcullis, origin, http: request(origin), authorize, server }
}

/** One `Set-Cookie` header of a response. */
export interface SetCookie {
  name: string
  /** Decoded value. */
  value: string
  /** `name=value` exactly as sent, ready to go back in a `Cookie` header. */
  pair: string
  maxAge: number | undefined
  expires: Date | undefined
  raw: string
}

/** Every `Set-Cookie` header of `res`, parsed. */
export function setCookies(res: Response): SetCookie[] {
  const header = res.headers['set-cookie'] as unknown
  const list = header === undefined ? [] : Array.isArray(header) ? (header as string[]) : [String(header)]
  return list.map((raw) => {
    const parsed = parseSetCookie(raw)
    return {
      name: parsed.name,
      value: parsed.value ?? '',
      pair: raw.split(';')[0]!,
      maxAge: parsed.maxAge,
      expires: parsed.expires,
      raw,
    }
  })
}

/** The `Set-Cookie` of `name`, if the response set it. */
export function setCookie(res: Response, name: string): SetCookie | undefined {
  return setCookies(res).find((cookie) => cookie.name === name)
}

/** True when the cookie tells the browser to drop it: empty value and Max-Age=0 or an expiry in the past. */
export function isCleared(cookie: SetCookie | undefined): boolean {
  if (!cookie || cookie.value !== '') return false
  return cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now())
}

/** Session cookies (whole or chunk) the response set with a non-empty value. */
export function sessionCookiesSet(res: Response): SetCookie[] {
  return setCookies(res).filter((cookie) => isSessionCookieName(cookie.name) && cookie.value !== '')
}

export function isSessionCookieName(name: string): boolean {
  return name === SESSION_COOKIE || /^authjs\.session-token\.\d+$/.test(name)
}

/** A `Cookie` header from `name=value` pairs (values sent as given). */
export function cookieHeader(...pairs: (string | undefined)[]): string {
  return pairs.filter((pair): pair is string => pair !== undefined && pair !== '').join('; ')
}

export interface Csrf {
  token: string
  /** `authjs.csrf-token=<value>` as the server sent it. */
  cookie: string
  /** The decoded cookie value, `token|hash`. */
  cookieValue: string
}

/** GET /api/auth/csrf: a fresh token and its cookie. */
export async function getCsrf(app: SecurityApp): Promise<Csrf> {
  const res = await app.http.get('/api/auth/csrf')
  if (res.status !== 200) throw new Error(`GET /api/auth/csrf answered ${res.status}`)
  const token = (res.body as { csrfToken: string }).csrfToken
  const cookie = setCookie(res, CSRF_COOKIE)
  if (!cookie) throw new Error('GET /api/auth/csrf set no CSRF cookie')
  return { token, cookie: cookie.pair, cookieValue: cookie.value }
}

/** A CSRF cookie `token|sha256(token + secret)` for any secret, URL-encoded as a Cookie header pair. */
export function csrfCookieFor(token: string, secret: string): string {
  const hash = createHash('sha256').update(token + secret).digest('hex')
  return `${CSRF_COOKIE}=${encodeURIComponent(`${token}|${hash}`)}`
}

export interface SignedIn {
  res: Response
  /** The session cookie pair(s), as one `Cookie` header value. */
  sessionCookie: string
  /** The decoded session token (chunks joined). */
  sessionToken: string
  csrf: Csrf
}

/**
 * Signs in through POST /api/auth/callback/credentials with a fresh CSRF token.
 * Throws unless the response sets a session cookie.
 */
export async function signIn(app: SecurityApp, fields: Record<string, string> = {}): Promise<SignedIn> {
  const csrf = await getCsrf(app)
  const res = await app.http
    .post('/api/auth/callback/credentials')
    .set('Cookie', csrf.cookie)
    .type('form')
    .send({ csrfToken: csrf.token, username: USERNAME, password: PASSWORD, ...fields })
  const session = sessionCookiesSet(res).sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }))
  if (session.length === 0) throw new Error(`sign-in set no session cookie (status ${res.status}, Location ${String(res.headers['location'])})`)
  return {
    res,
    sessionCookie: cookieHeader(...session.map((cookie) => cookie.pair)),
    sessionToken: session.map((cookie) => cookie.value).join(''),
    csrf,
  }
}

/** GET /me with `cookie`. */
export function me(app: SecurityApp, cookie?: string) {
  const test = app.http.get('/me')
  return cookie ? test.set('Cookie', cookie) : test
}

/** GET /api/auth/session with `cookie`. */
export function getSession(app: SecurityApp, cookie?: string) {
  const test = app.http.get('/api/auth/session')
  return cookie ? test.set('Cookie', cookie) : test
}

/** `location` parsed, with a clear failure when it is missing or not absolute. */
export function originOf(location: unknown): string {
  if (typeof location !== 'string') throw new Error(`expected a URL, got ${String(location)}`)
  return new URL(location).origin
}
