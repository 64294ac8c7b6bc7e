/**
 * Brute-force limits on credentials sign-in, with the default (memory) store: per client address
 * (as Express computes it, `trust proxy` honoured) and per identifier, the refusal as 429 with
 * Retry-After for browsers and JSON clients, and the option's checks at init. The shared stores
 * (Redis, SQL) have their own suites: rate-limit-redis.test.ts and rate-limit-sql.test.ts.
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import Portcullis, { CredentialsSignin, InvalidConfigurationError, RateLimitedError } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import type { ResolvedConfig } from '../../src/config/types.js'
import { credentialsIdentifier } from '../../src/security/rate-limit.js'
import { addressBucket, clientAddress } from '../../src/security/rate-limit-ip.js'
import { resolveRateLimit } from '../../src/security/rate-limit-config.js'
import { SECRET, credentialsProvider } from '../support/flow.js'
import { browser, browserAt, outcome, rateLimitedApp, right, wrong } from './rate-limit-app.js'

describe('per client address', () => {
  it('refuses the attempt after ip.attempts from one address with 429, Retry-After and a page saying how long to wait', async () => {
    const { app, authorizeCalls } = rateLimitedApp({ rateLimit: { ip: { attempts: 3, windowSeconds: 600 }, identifier: false } })
    const client = browser(app)
    for (const name of ['a', 'b', 'c']) expect(outcome(await client.signIn(wrong(name)))).toBe('wrong password')

    const refused = await client.signIn(right)
    expect(refused.status).toBe(429)
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(590)
    expect(retryAfter).toBeLessThanOrEqual(600)
    expect(refused.headers['content-type']).toMatch(/^text\/html/)
    expect(refused.text).toContain('Too many attempts')
    expect(refused.text).toContain('Please wait about 10 minutes before trying again.')
    expect(refused.text).toMatch(/href="http:\/\/127\.0\.0\.1:\d+\/api\/auth\/signin\?error=RateLimited"/)
    // Refused before the password was checked, and no session.
    expect(authorizeCalls()).toBe(3)
    expect(String(refused.headers['set-cookie'] ?? '')).not.toMatch(/session-token=[^;]/)
  })

  it('does not hold successful sign-ins against the address (one NAT, many users), nor let them buy more guesses', async () => {
    const { app } = rateLimitedApp({ rateLimit: { ip: { attempts: 3 }, identifier: false } })
    const client = browser(app)
    const outcomes = []
    for (const fields of [right, right, right, right, wrong('b'), right, wrong('c'), right, wrong('d'), wrong('e'), right]) outcomes.push(outcome(await client.signIn(fields)))
    expect(outcomes).toEqual(['signed in', 'signed in', 'signed in', 'signed in', 'wrong password', 'signed in', 'wrong password', 'signed in', 'wrong password', 'refused', 'refused'])
  })

  it('counts clients behind a trusted proxy apart, by the address the proxy reports', async () => {
    const { app } = rateLimitedApp({ rateLimit: { ip: { attempts: 2 }, identifier: false } }, 'loopback')
    const first = browserAt(app, '203.0.113.1')
    expect(outcome(await first.signIn(wrong('a')))).toBe('wrong password')
    expect(outcome(await first.signIn(wrong('b')))).toBe('wrong password')
    expect(outcome(await first.signIn(wrong('c')))).toBe('refused')
    // Another client of the same proxy has its own window.
    const second = browserAt(app, '203.0.113.2')
    expect(outcome(await second.signIn(wrong('d')))).toBe('wrong password')
    expect(outcome(await second.signIn(right))).toBe('signed in')
  })

  it('ignores X-Forwarded-For when Express does not trust the proxy: a spoofed header changes nothing', async () => {
    const { app } = rateLimitedApp({ rateLimit: { ip: { attempts: 2 }, identifier: false } })
    const client = browser(app)
    expect(outcome(await client.signIn(wrong('a'), { 'X-Forwarded-For': '198.51.100.1' }))).toBe('wrong password')
    expect(outcome(await client.signIn(wrong('b'), { 'X-Forwarded-For': '198.51.100.2' }))).toBe('wrong password')
    expect(outcome(await client.signIn(wrong('c'), { 'X-Forwarded-For': '198.51.100.3' }))).toBe('refused')
    expect(outcome(await client.signIn(right, { 'X-Forwarded-For': '198.51.100.4, 198.51.100.5' }))).toBe('refused')
  })

  it('ignores X-Forwarded-For on Connect and node:http, which have no trust proxy setting', async () => {
    const quiet = { error: () => {}, warn: () => {}, debug: () => {} }
    const portcullis = Portcullis({ secret: SECRET, trustHost: true, logger: quiet, providers: [credentialsProvider], rateLimit: { ip: { attempts: 1 }, identifier: false } })
    const { createServer } = await import('node:http')
    const server = createServer((req, res) => void portcullis.handlers(req, res))
    const agent = request.agent(server)
    const { csrfToken } = (await agent.get('/api/auth/csrf').expect(200)).body as { csrfToken: string }
    const post = (address: string) => agent.post('/api/auth/callback/credentials').set('X-Forwarded-For', address).type('form').send({ csrfToken, ...wrong() })
    expect(outcome(await post('192.0.2.1'))).toBe('wrong password')
    expect(outcome(await post('192.0.2.2'))).toBe('refused')
  })

  it('counts an IPv6 client by its /64 network (ipv6Subnet), and /128 when told to', async () => {
    const { app } = rateLimitedApp({ rateLimit: { ip: { attempts: 1 }, identifier: false } }, 'loopback')
    expect(outcome(await browserAt(app, '2001:db8:1:2::1').signIn(wrong('a')))).toBe('wrong password')
    expect(outcome(await browserAt(app, '2001:db8:1:2:ffff:ffff:ffff:fffe').signIn(wrong('b')))).toBe('refused')
    expect(outcome(await browserAt(app, '2001:db8:1:3::1').signIn(wrong('c')))).toBe('wrong password')

    const exact = rateLimitedApp({ rateLimit: { ip: { attempts: 1 }, identifier: false, ipv6Subnet: 128 } }, 'loopback').app
    expect(outcome(await browserAt(exact, '2001:db8:1:2::1').signIn(wrong('a')))).toBe('wrong password')
    expect(outcome(await browserAt(exact, '2001:db8:1:2::2').signIn(wrong('b')))).toBe('wrong password')
  })

  it('reduces addresses to the bucket they are counted in', () => {
    expect(addressBucket('203.0.113.9', 64)).toBe('203.0.113.9')
    expect(addressBucket('::ffff:203.0.113.9', 64)).toBe('203.0.113.9')
    expect(addressBucket('2001:DB8:0:0:1::7', 64)).toBe('2001:db8::/64')
    expect(addressBucket('2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 48)).toBe('2001:db8:aaaa::/48')
    expect(addressBucket('2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff', 56)).toBe('2001:db8:aaaa:bb00::/56')
    expect(addressBucket('fe80::1%eth0', 64)).toBe('fe80::/64')
    expect(addressBucket('2001:db8::1', 128)).toBe('2001:db8::1')
    expect(addressBucket('::1', 64)).toBe('::/64')
    expect(addressBucket('64:ff9b::192.0.2.33', 128)).toBe('64:ff9b::c000:221')
    expect(addressBucket('::ffff:198.51.100.4', 64)).toBe('198.51.100.4')
  })

  // Only ::ffff:a.b.c.d is IPv4 (with its first 80 bits zero): were any address with ffff in its
  // sixth group read as one, a client with an IPv6 network could pick the low 32 bits and fill the
  // bucket of any IPv4 address it likes, locking that address out.
  it.each(['1::ffff:203.0.113.9', '0:1::ffff:203.0.113.9', '0:0:1::ffff:203.0.113.9', '0:0:0:1:0:ffff:203.0.113.9', '::1:ffff:203.0.113.9'])(
    'does not read %s as the IPv4 address it ends with',
    (address) => {
      expect(addressBucket(address, 128)).not.toBe('203.0.113.9')
      expect(addressBucket(address, 128)).toMatch(/:cb00:7109$/)
    },
  )

  // One address, one bucket, however it is spelled (a trusted proxy's X-Forwarded-For need not be
  // canonical); the text is RFC 5952's: lower case, the first longest run of two or more zero groups
  // as ::, a single zero group kept.
  it.each([
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2:3:4:5:6'],
    ['2001:0db8:0:1:2:3:4:5', '2001:db8:0:1:2:3:4:5'],
    ['2001:0:0:1:0:0:2:3', '2001::1:0:0:2:3'],
    ['2001:db8:0:0:1:0:0:0', '2001:db8:0:0:1::'],
    ['2001:DB8::', '2001:db8::'],
    ['::', '::'],
  ])('writes %s as %s', (address, canonical) => {
    expect(addressBucket(address, 128)).toBe(canonical)
  })

  it("counts Express's req.ip, else the socket's address (Connect, node:http, or an empty req.ip)", () => {
    const socket = { remoteAddress: '198.51.100.7' }
    const request = (extra: Record<string, unknown>) => ({ headers: {}, socket, ...extra }) as unknown as Parameters<typeof clientAddress>[0]
    expect(clientAddress(request({ ip: '203.0.113.9' }), 64)).toBe('203.0.113.9')
    expect(clientAddress(request({}), 64)).toBe('198.51.100.7')
    expect(clientAddress(request({ ip: '' }), 64)).toBe('198.51.100.7')
    expect(clientAddress({ headers: {}, socket: {} } as unknown as Parameters<typeof clientAddress>[0], 64)).toBeUndefined()
  })
})

// Which submitted field a failed attempt is counted against (the per-identifier limit).
describe('credentialsIdentifier', () => {
  const config = { rateLimit: {} } as unknown as ResolvedConfig
  const declaring = { id: 'c', credentials: { code: {}, username: {}, email: { type: 'email' }, secret: { type: 'password' } } }

  it('without declared fields: email, else username; no other field', () => {
    const plain = { id: 'c' }
    expect(credentialsIdentifier(config, plain, { username: 'ada', email: 'ada@example.com', password: 'x' })).toBe('ada@example.com')
    expect(credentialsIdentifier(config, plain, { username: 'ada', password: 'x' })).toBe('ada')
    expect(credentialsIdentifier(config, plain, { login: 'ada', password: 'x' })).toBeUndefined()
  })

  it('with declared fields: email, username, then the rest in order; never a password field', () => {
    expect(credentialsIdentifier(config, declaring, { code: '7', username: 'ada', email: 'ada@example.com', secret: 's' })).toBe('ada@example.com')
    expect(credentialsIdentifier(config, declaring, { code: '7', username: 'ada', secret: 's' })).toBe('ada')
    expect(credentialsIdentifier(config, declaring, { code: '7', secret: 's' })).toBe('7')
    expect(credentialsIdentifier(config, declaring, { secret: 's' })).toBeUndefined()
  })

  it('skips empty, blank and null values and inherited properties; reads other JSON values as String() does', () => {
    expect(credentialsIdentifier(config, declaring, { email: '', username: '   ', code: 'c' })).toBe('c')
    expect(credentialsIdentifier(config, declaring, { email: null, username: 42 })).toBe('42')
    expect(credentialsIdentifier(config, declaring, { email: ['admin'] })).toBe('admin')
    expect(credentialsIdentifier(config, declaring, Object.assign(Object.create({ email: 'inherited' }) as object, { username: 'own' }))).toBe('own')
  })

  it('takes a custom credentialsIdentifier, a blank answer as none; nothing when rate limits are off', () => {
    const custom = (answer: unknown) => ({ rateLimit: { credentialsIdentifier: () => answer } }) as unknown as ResolvedConfig
    expect(credentialsIdentifier(custom('ada'), declaring, { email: 'x@example.com' })).toBe('ada')
    expect(credentialsIdentifier(custom(' '), declaring, { email: 'x@example.com' })).toBeUndefined()
    expect(credentialsIdentifier({ rateLimit: false } as unknown as ResolvedConfig, declaring, { email: 'x@example.com' })).toBeUndefined()
  })
})

describe('per identifier', () => {
  it('refuses the (N+1)th failed attempt on one identifier, whatever the address, before authorize runs', async () => {
    const { app, authorizeCalls } = rateLimitedApp({ rateLimit: { identifier: { attempts: 3, windowSeconds: 300 } } }, 'loopback')
    for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) expect(outcome(await browserAt(app, address).signIn(wrong('ada')))).toBe('wrong password')
    // Spelling variants are the same identifier.
    const refused = await browserAt(app, '192.0.2.4').signIn({ username: ' ADA ', password: 'lovelace' })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(290)
    expect(authorizeCalls()).toBe(3)
    // Other accounts are not affected.
    expect(outcome(await browserAt(app, '192.0.2.4').signIn(wrong('grace')))).toBe('wrong password')
  })

  it('is on by default: the 11th failed attempt on one identifier within 15 minutes is refused', async () => {
    const { app } = rateLimitedApp({}, 'loopback')
    for (let index = 1; index <= 10; index += 1) expect(outcome(await browserAt(app, `192.0.2.${index}`).signIn(wrong()))).toBe('wrong password')
    const refused = await browserAt(app, '192.0.2.11').signIn(right)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(800)
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(900)
  })

  it('forgets the failures of an identifier when it signs in', async () => {
    const { app } = rateLimitedApp({ rateLimit: { identifier: { attempts: 3 } } })
    const client = browser(app)
    const statuses = []
    for (const fields of [wrong(), wrong(), right, wrong(), wrong(), wrong(), right]) statuses.push(outcome(await client.signIn(fields)))
    expect(statuses).toEqual(['wrong password', 'wrong password', 'signed in', 'wrong password', 'wrong password', 'wrong password', 'refused'])
  })

  it('counts parallel guesses atomically: no more than `attempts` reach authorize', async () => {
    const { app, authorizeCalls } = rateLimitedApp({ rateLimit: { identifier: { attempts: 3 } } })
    const client = browser(app)
    await client.prime()
    const responses = await Promise.all(Array.from({ length: 12 }, () => client.signIn(wrong())))
    expect(responses.filter((response) => outcome(response) === 'wrong password')).toHaveLength(3)
    expect(responses.filter((response) => outcome(response) === 'refused')).toHaveLength(9)
    expect(authorizeCalls()).toBe(3)
  })

  it("takes the identifier from the provider's first non-password field, or from credentialsIdentifier", async () => {
    const login = Credentials({
      credentials: { login: { label: 'Login' }, secret: { label: 'Secret', type: 'password' } },
      authorize: async () => null,
    })
    const post = (app: express.Express, address: string, fields: Record<string, string>) => browserAt(app, address).signIn(fields)
    const byField = rateLimitedApp({ providers: [login], rateLimit: { identifier: { attempts: 1 } } }, 'loopback').app
    expect(outcome(await post(byField, '192.0.2.1', { login: 'ada', secret: 'x' }))).toBe('wrong password')
    expect(outcome(await post(byField, '192.0.2.2', { login: 'ada', secret: 'y' }))).toBe('refused')
    // The password field never counts as the identifier: another login is free.
    expect(outcome(await post(byField, '192.0.2.3', { login: 'grace', secret: 'x' }))).toBe('wrong password')
    // A field the provider does not declare cannot choose the bucket: an extra random `email` or
    // `username` next to the login authorize reads is still counted against that login.
    expect(outcome(await post(byField, '192.0.2.4', { login: 'grace', secret: 'y', email: 'random-1@example.com' }))).toBe('refused')
    expect(outcome(await post(byField, '192.0.2.5', { login: 'grace', secret: 'z', username: 'random-2' }))).toBe('refused')

    const custom = rateLimitedApp(
      { providers: [login], rateLimit: { identifier: { attempts: 1 }, credentialsIdentifier: (credentials) => String(credentials.login).split('@')[0] } },
      'loopback',
    ).app
    expect(outcome(await post(custom, '192.0.2.1', { login: 'ada@one.example', secret: 'x' }))).toBe('wrong password')
    expect(outcome(await post(custom, '192.0.2.2', { login: 'ada@two.example', secret: 'x' }))).toBe('refused')
  })

  it('logs the refusal as a warning with the address, never the identifier or the password', async () => {
    const { app, log } = rateLimitedApp({ rateLimit: { identifier: { attempts: 1 } } })
    const client = browser(app)
    await client.signIn({ username: 'ada.secret@example.com', password: 'hunter2' })
    expect(outcome(await client.signIn({ username: 'ada.secret@example.com', password: 'hunter2' }))).toBe('refused')
    const lines = log.warn.filter((line) => line.startsWith('RateLimited'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/Too many failed sign-in attempts for one identifier of the "credentials" provider \(limit: 1 per 900 s\), the last from (::ffff:)?127\.0\.0\.1/)
    const everything = [...log.error, ...log.warn, ...log.debug].join('\n')
    expect(everything).not.toContain('ada.secret')
    expect(everything).not.toContain('hunter2')
  })
})

describe('the refusal', () => {
  it('answers JSON clients (X-Auth-Return-Redirect: 1) with 429 { url, error: "RateLimited" } and Retry-After', async () => {
    const { app } = rateLimitedApp({ rateLimit: { ip: { attempts: 1 } } })
    const client = browser(app, { 'X-Auth-Return-Redirect': '1' })
    expect(outcome(await client.signIn(wrong()))).toBe('wrong password')
    const refused = await client.signIn(right)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.body).toEqual({ url: expect.stringMatching(/\/api\/auth\/signin\?error=RateLimited$/), error: 'RateLimited', message: expect.stringContaining('Retry-After') })
  })

  it("links to the app's own sign-in page, with ?error=RateLimited, when pages.signIn is set", async () => {
    const { app } = rateLimitedApp({ pages: { signIn: '/login' }, rateLimit: { ip: { attempts: 1 } } })
    const client = browser(app)
    await client.signIn(wrong())
    const refused = await client.signIn(wrong())
    expect(refused.status).toBe(429)
    expect(refused.headers.location).toBeUndefined()
    expect(refused.text).toMatch(/href="http:\/\/127\.0\.0\.1:\d+\/login\?error=RateLimited"/)
    // The page is one of the router's: not framable, no scripts.
    expect(refused.headers['content-security-policy']).toContain("default-src 'none'")
  })

  it('shows the RateLimited message on the built-in sign-in page the refusal links to', async () => {
    const { app } = rateLimitedApp()
    const page = await request(app).get('/api/auth/signin?error=RateLimited').expect(200)
    expect(page.text).toContain('There were too many sign-in attempts. Please wait a few minutes before trying again.')
  })

  it('makes the server-side signIn() throw RateLimitedError (redirect: false) or answer with the 429 page', async () => {
    const { app: base, portcullis } = rateLimitedApp({ rateLimit: { ip: { attempts: 1 } } })
    const app = express()
    app.use(express.urlencoded({ extended: false }))
    app.use(portcullis.auth)
    app.post('/login', async (req, res, next) => {
      try {
        if (req.body.mode === 'page') return void (await portcullis.signIn('credentials', { ...req.body, skipCsrfCheck: true }))
        res.json({ url: await portcullis.signIn('credentials', { ...req.body, redirect: false, skipCsrfCheck: true }) })
      } catch (error) {
        if (error instanceof RateLimitedError) return void res.status(429).json({ type: error.type, scope: error.scope, retryAfter: error.retryAfterSeconds })
        if (error instanceof CredentialsSignin) return void res.status(401).json({ type: error.type })
        next(error)
      }
    })
    app.use(base)
    expect((await request(app).post('/login').type('form').send(wrong())).body).toEqual({ type: 'CredentialsSignin' })
    const thrown = await request(app).post('/login').type('form').send(right)
    expect(thrown.body).toEqual({ type: 'RateLimited', scope: 'ip', retryAfter: expect.any(Number) })
    const page = await request(app).post('/login').type('form').send({ ...right, mode: 'page' })
    expect(page.status).toBe(429)
    expect(page.headers['retry-after']).toBeDefined()
    expect(page.text).toContain('Too many attempts')
  })
})

describe('the rateLimit option', () => {
  it('rateLimit: false turns the limits off', async () => {
    const { app, authorizeCalls } = rateLimitedApp({ rateLimit: false })
    const client = browser(app)
    for (let index = 0; index < 60; index += 1) expect(outcome(await client.signIn(wrong()))).toBe('wrong password')
    expect(authorizeCalls()).toBe(60)
  })

  it('keeps the counts of each Portcullis instance apart with the memory store', async () => {
    const one = rateLimitedApp({ rateLimit: { ip: { attempts: 1 } } }).app
    const two = rateLimitedApp({ rateLimit: { ip: { attempts: 1 } } }).app
    expect(outcome(await browser(one).signIn(wrong()))).toBe('wrong password')
    expect(outcome(await browser(two).signIn(wrong()))).toBe('wrong password')
    expect(outcome(await browser(one).signIn(wrong()))).toBe('refused')
  })

  it.each([
    [{ ip: { attempts: 0 } }, /rateLimit\.ip\.attempts must be a whole number/],
    [{ identifier: { windowSeconds: 1.5 } }, /rateLimit\.identifier\.windowSeconds must be a whole number of seconds/],
    [{ ip: 'lots' }, /rateLimit\.ip must be \{ attempts, windowSeconds \}/],
    [{ ipv6Subnet: 0 }, /rateLimit\.ipv6Subnet must be a prefix length from 1 to 128/],
    [{ keyPrefix: '' }, /rateLimit\.keyPrefix must be a non-empty string/],
    [{ store: 'redis' }, /rateLimit\.store must be 'memory', \{ knex \} or \{ redis \}/],
    [{ store: { redis: 'redis://localhost' } }, /rateLimit\.store\.redis must be a connected Redis client/],
    [{ store: { knex: {} } }, /rateLimit\.store\.knex must be a Knex instance/],
    [{ store: { knex: Object.assign(() => {}, { raw: () => {}, schema: {}, client: { config: { client: 'mssql' } } }) } }, /Knex client "mssql"/],
    [{ store: { knex: Object.assign(() => {}, { raw: () => {}, schema: {}, client: { config: { client: 'pg' } } }), tableName: 'rate limits; drop' } }, /rateLimit\.store\.tableName must be a plain table name/],
    [{ credentialsIdentifier: 'username' }, /rateLimit\.credentialsIdentifier must be a function/],
    ['on', /rateLimit must be an object of options, or false/],
  ])('refuses %p at init, naming the field', (rateLimit, message) => {
    const init = () => Portcullis({ secret: SECRET, providers: [credentialsProvider], rateLimit: rateLimit as never })
    expect(init).toThrow(InvalidConfigurationError)
    expect(init).toThrow(message)
  })

  it("leaves the caller's rateLimit object as it was", () => {
    const option = { ip: { attempts: 5 } }
    Portcullis({ secret: SECRET, providers: [credentialsProvider], rateLimit: option })
    expect(option).toEqual({ ip: { attempts: 5 } })
    expect(Object.isFrozen(option)).toBe(false)
  })
})

describe('resolveRateLimit: the values it keeps and the edges of each check', () => {
  const refused = (option: unknown) => {
    try {
      resolveRateLimit(option as never)
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidConfigurationError)
      return (error as Error).message
    }
    throw new Error(`${JSON.stringify(option)} was accepted`)
  }
  /** A stand-in with the shape the init check reads: Knex is a function with raw() and its client's name. */
  const knexOf = (client: unknown) => Object.assign(() => {}, { raw: () => {}, schema: {}, client: { config: { client } } }) as never

  it('fills every field with its default, and false turns the limits off', () => {
    const defaults = { store: { type: 'memory' }, ip: { attempts: 50, windowSeconds: 900 }, identifier: { attempts: 10, windowSeconds: 900 }, credentialsIdentifier: undefined, ipv6Subnet: 64, keyPrefix: 'portcullis', storeTimeoutMs: 1000 }
    expect(resolveRateLimit(undefined)).toEqual(defaults)
    expect(resolveRateLimit(true)).toEqual(defaults)
    expect(resolveRateLimit({})).toEqual(defaults)
    expect(resolveRateLimit({ store: 'memory' })).toEqual(defaults)
    expect(resolveRateLimit(false)).toBe(false)
  })

  it('keeps what is given, a window completed by its default, and a window turned off', () => {
    const credentialsIdentifier = () => 'ada'
    expect(resolveRateLimit({ ip: { attempts: 3 }, identifier: false, ipv6Subnet: 48, keyPrefix: 'app', credentialsIdentifier })).toEqual({
      store: { type: 'memory' },
      ip: { attempts: 3, windowSeconds: 900 },
      identifier: false,
      credentialsIdentifier,
      ipv6Subnet: 48,
      keyPrefix: 'app',
      storeTimeoutMs: 1000,
    })
    expect(resolveRateLimit({ identifier: { windowSeconds: 60 }, ip: false })).toMatchObject({ ip: false, identifier: { attempts: 10, windowSeconds: 60 } })
  })

  it('accepts the smallest and largest value of each bound, and refuses one past it', () => {
    expect(resolveRateLimit({ ipv6Subnet: 1 })).toMatchObject({ ipv6Subnet: 1 })
    expect(resolveRateLimit({ ipv6Subnet: 128 })).toMatchObject({ ipv6Subnet: 128 })
    expect(refused({ ipv6Subnet: 129 })).toBe('rateLimit.ipv6Subnet must be a prefix length from 1 to 128 (64 counts one /64 network as one client); got 129.')
    expect(refused({ ipv6Subnet: 0 })).toMatch(/got 0\.$/)
    expect(refused({ ipv6Subnet: 63.5 })).toMatch(/got 63\.5\.$/)
    expect(refused({ ipv6Subnet: '64' })).toMatch(/ipv6Subnet .*got "64"\.$/)

    expect(resolveRateLimit({ keyPrefix: 'a' })).toMatchObject({ keyPrefix: 'a' })
    expect(resolveRateLimit({ keyPrefix: 'k'.repeat(100) })).toMatchObject({ keyPrefix: 'k'.repeat(100) })
    expect(refused({ keyPrefix: 'k'.repeat(101) })).toMatch(/^rateLimit\.keyPrefix must be a non-empty string of at most 100 characters; got "k{101}"\.$/)
    expect(refused({ keyPrefix: 7 })).toMatch(/keyPrefix .*got 7\.$/)
    expect(refused({ keyPrefix: () => 'tenant' })).toMatch(/keyPrefix .*got a function\.$/)

    for (const name of ['ip', 'identifier'] as const) {
      expect(resolveRateLimit({ [name]: { attempts: 1, windowSeconds: 1 } })).toMatchObject({ [name]: { attempts: 1, windowSeconds: 1 } })
      expect(resolveRateLimit({ [name]: { attempts: Number.MAX_SAFE_INTEGER } })).toMatchObject({ [name]: { attempts: Number.MAX_SAFE_INTEGER } })
      expect(refused({ [name]: { attempts: 0 } })).toBe(`rateLimit.${name}.attempts must be a whole number of attempts (at least 1); got 0.`)
      expect(refused({ [name]: { attempts: Number.MAX_SAFE_INTEGER + 1 } })).toMatch(new RegExp(`^rateLimit\\.${name}\\.attempts must`))
      expect(refused({ [name]: { windowSeconds: 0 } })).toBe(`rateLimit.${name}.windowSeconds must be a whole number of seconds (at least 1); got 0.`)
      expect(refused({ [name]: { windowSeconds: 2 ** 53 } })).toMatch(new RegExp(`^rateLimit\\.${name}\\.windowSeconds must`))
      expect(refused({ [name]: null })).toBe(`rateLimit.${name} must be { attempts, windowSeconds }, or false to turn this limit off; got null.`)
      expect(refused({ [name]: true })).toMatch(/got true\.$/)
    }
  })

  it('says what it got: a string quoted, null, a number, an array, an object', () => {
    expect(refused('on')).toBe('rateLimit must be an object of options, or false to turn the sign-in limits off; got "on".')
    expect(refused(null)).toMatch(/got null\.$/)
    expect(refused(5)).toMatch(/got 5\.$/)
    expect(refused({ store: ['memory'] })).toBe("rateLimit.store must be 'memory', { knex } or { redis }; got an array.")
    expect(refused({ store: {} })).toMatch(/got an object\.$/)
    expect(refused({ store: null })).toMatch(/got null\.$/)
  })

  it('names the SQL dialect of each Knex client it supports, and refuses the others', () => {
    const dialects = { pg: 'postgres', postgres: 'postgres', postgresql: 'postgres', mysql: 'mysql', mysql2: 'mysql', sqlite3: 'sqlite', 'better-sqlite3': 'sqlite' }
    for (const [client, dialect] of Object.entries(dialects)) {
      const knex = knexOf(client)
      expect(resolveRateLimit({ store: { knex } })).toMatchObject({ store: { type: 'knex', knex, dialect, tableName: 'portcullis_rate_limit', createTable: true } })
    }
    expect(refused({ store: { knex: knexOf('oracledb') } })).toBe(
      'rateLimit.store.knex uses the Knex client "oracledb"; the rate-limit table works with the clients named "pg", "mysql2" (MySQL, MariaDB), "better-sqlite3" and "sqlite3" (knex({ client: "pg" })). Use the memory or Redis store with other databases.',
    )
    expect(refused({ store: { knex: knexOf(undefined) } })).toMatch(/the Knex client undefined;/)
    // A Knex client given as a class (knex({ client: Dialect })): named as such, its source not printed.
    expect(refused({ store: { knex: knexOf(class PgLike {}) } })).toMatch(/^rateLimit\.store\.knex uses the Knex client given as a class; the rate-limit table works with the clients named "pg"/)
    expect(refused({ store: { knex: Object.assign(() => {}, { client: { config: { client: 'pg' } } }) } })).toMatch(/^rateLimit\.store\.knex must be a Knex instance/)
    expect(refused({ store: { knex: { raw: () => {}, client: { config: { client: 'pg' } } } } })).toMatch(/^rateLimit\.store\.knex must be a Knex instance/)
  })

  it('keeps a plain table name up to 63 characters and createTable: false, and refuses the rest', () => {
    const knex = knexOf('pg')
    expect(resolveRateLimit({ store: { knex, tableName: 'limits_2', createTable: false } })).toMatchObject({ store: { tableName: 'limits_2', createTable: false } })
    expect(resolveRateLimit({ store: { knex, tableName: `_${'t'.repeat(62)}` } })).toMatchObject({ store: { tableName: `_${'t'.repeat(62)}` } })
    for (const tableName of [`t${'t'.repeat(63)}`, '2fa_limits', 'limits-x', 'limits;', ' limits', 'limits ', '', 42]) {
      expect(refused({ store: { knex, tableName } })).toMatch(/^rateLimit\.store\.tableName must be a plain table name \(letters, digits, "_", at most 63 characters\); got /)
    }
    expect(refused({ store: { knex, createTable: 'yes' } })).toBe('rateLimit.store.createTable must be true or false; got "yes".')
  })

  it('keeps a Redis client that can run transactions, and refuses what cannot', () => {
    const client = { multi: () => ({}) }
    expect(resolveRateLimit({ store: { redis: client as never } })).toMatchObject({ store: { type: 'redis', client } })
    for (const redis of [null, 'redis://localhost', { get: () => {} }]) {
      expect(refused({ store: { redis } })).toBe('rateLimit.store.redis must be a connected Redis client, e.g. new Redis(process.env.REDIS_URL) from ioredis.')
    }
  })
})
