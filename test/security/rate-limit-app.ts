/**
 * Shared steps of the rate-limit suites: an Express app with a credentials provider that counts
 * how often `authorize` really runs, and a browser-like client that posts the sign-in form
 * (optionally through a proxy's `X-Forwarded-For`).
 */
import express from 'express'
import request from 'supertest'
import Portcullis, { type PortcullisConfig, type PortcullisResult } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { SECRET } from '../support/flow.js'

/** Log lines by level, for assertions (and to keep the test output clean). */
export interface CapturedLog {
  error: string[]
  warn: string[]
  debug: string[]
}

export interface RateLimitedApp {
  app: express.Express
  portcullis: PortcullisResult
  /** How many times `authorize` ran: refused attempts must never reach it. */
  authorizeCalls(): number
  log: CapturedLog
}

/**
 * An app whose credentials provider accepts `ada` / `lovelace` and counts its `authorize` calls.
 *
 * @param config Overrides of the Portcullis config (`rateLimit` above all).
 * @param trustProxy Express's `trust proxy` setting, when given.
 */
export function rateLimitedApp(config: Partial<PortcullisConfig> = {}, trustProxy?: boolean | number | string): RateLimitedApp {
  let calls = 0
  const log: CapturedLog = { error: [], warn: [], debug: [] }
  const provider = Credentials({
    credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
    authorize: async ({ username, password }) => {
      calls += 1
      return username === 'ada' && password === 'lovelace' ? { id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com' } : null
    },
  })
  const portcullis = Portcullis({
    secret: SECRET,
    trustHost: true,
    providers: [provider],
    logger: {
      error: (code, ...message) => void log.error.push([code, ...message].join(' ')),
      warn: (code, ...message) => void log.warn.push([code, ...message].join(' ')),
      debug: (code, ...message) => void log.debug.push([code, ...message].join(' ')),
    },
    ...config,
  })
  const app = express()
  if (trustProxy !== undefined) app.set('trust proxy', trustProxy)
  app.use('/api/auth', portcullis.handlers)
  return { app, portcullis, authorizeCalls: () => calls, log }
}

/** A browser: it fetches a CSRF token once, then posts the credentials form with it. */
export function browser(app: express.Express, headers: Record<string, string> = {}) {
  const agent = request.agent(app)
  let primed: string | undefined
  const fetchToken = async () => (await agent.get('/api/auth/csrf').expect(200)).body.csrfToken as string
  return {
    /** Fetches one CSRF token for the posts that follow (parallel posts would each fetch one). */
    async prime() {
      primed = await fetchToken()
    },
    /**
     * POST /callback/credentials, with a fresh CSRF token unless primed (a sign-in clears the CSRF
     * cookie); resolves with the response (302 or 429).
     */
    async signIn(fields: Record<string, string>, extraHeaders: Record<string, string> = {}) {
      const csrfToken = primed ?? (await fetchToken())
      return agent
        .post('/api/auth/callback/credentials')
        .set({ ...headers, ...extraHeaders })
        .type('form')
        .send({ csrfToken, ...fields })
    },
  }
}

/** The same, from the given client address (an `X-Forwarded-For` that a trusted proxy would set). */
export function browserAt(app: express.Express, address: string) {
  return browser(app, { 'X-Forwarded-For': address })
}

/** A wrong password for `username`. */
export const wrong = (username = 'ada') => ({ username, password: 'wrong' })
/** The right password. */
export const right = { username: 'ada', password: 'lovelace' }

/**
 * What became of an attempt: `signed in`, `wrong password` (the sign-in page with
 * CredentialsSignin), `refused` (429 RateLimited), or anything else as `<status> <location>`, so a
 * test never mistakes, say, a CSRF failure for a counted attempt.
 */
export function outcome(response: { status: number; headers: Record<string, unknown>; body?: unknown }): string {
  if (response.status === 429) return 'refused'
  const location = (response.headers.location as string | undefined) ?? (response.body as { url?: string } | undefined)?.url ?? ''
  const error = location ? new URL(location).searchParams.get('error') : null
  if (error === 'CredentialsSignin') return 'wrong password'
  if (error === null && location && !new URL(location).pathname.startsWith('/api/auth/')) return 'signed in'
  return `${response.status} ${location}`
}
