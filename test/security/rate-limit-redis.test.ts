/**
 * The sign-in limits counted in a real Redis (127.0.0.1:6379, `REDIS_URL`): per address and per
 * identifier, clients behind a trusted proxy apart, two app instances (as two processes would)
 * sharing one count, and what happens when Redis cannot be reached.
 */
import { once } from 'node:events'
import { closedPort } from '../support/ports.js'
import { afterAll, describe, expect, it, jest } from '@jest/globals'
import { Redis } from 'ioredis'
import type { RateLimitOptions } from 'portcullis'
import { STORE_RETRY_MS } from '../../src/security/rate-limit-limiter.js'
import { describeWithRedis } from '../support/redis.js'
import { browser, browserAt, outcome, rateLimitedApp, right, wrong } from './rate-limit-app.js'

await describeWithRedis('rate limits in Redis', (redis) => {
  afterAll(() => redis.cleanUp())

  /** A store of its own for each test: a fresh key prefix on a new client. */
  const redisLimits = (options: Omit<RateLimitOptions, 'store' | 'keyPrefix'>, keyPrefix = redis.uniqueKeyPrefix(), store: RateLimitOptions['store'] = { redis: redis.connect() }): RateLimitOptions => ({
    ...options,
    keyPrefix,
    store,
  })

  // The clients apps pass: ioredis (6, RESP3), ioredis 5 (RESP2) and node-redis (no defineCommand: scripts sent another way).
  it.each([
    ['ioredis', async () => redis.connect()],
    ['ioredis 5', async () => redis.connectIoredis5()],
    ['node-redis', () => redis.connectNodeRedis()],
  ])('refuses the (N+1)th attempt from one address, with Retry-After from the key in Redis (%s)', async (_, connect) => {
    const keyPrefix = redis.uniqueKeyPrefix()
    const { app, authorizeCalls } = rateLimitedApp({ rateLimit: redisLimits({ ip: { attempts: 3, windowSeconds: 120 }, identifier: false }, keyPrefix, { redis: await connect() }) })
    const client = browser(app)
    for (const name of ['a', 'b', 'c']) expect(outcome(await client.signIn(wrong(name)))).toBe('wrong password')
    const refused = await client.signIn(right)
    expect(outcome(refused)).toBe('refused')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(110)
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(120)
    expect(authorizeCalls()).toBe(3)
    // The count is Redis's, under the prefix, expiring with the window.
    const admin = redis.connect()
    const keys = await admin.keys(`${keyPrefix}:ip:*`)
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatch(new RegExp(`^${keyPrefix}:ip:(::ffff:)?127\\.0\\.0\\.1$`))
    expect(Number(await admin.get(keys[0]!))).toBe(4)
    expect(await admin.ttl(keys[0]!)).toBeGreaterThan(110)
  })

  it('refuses the (N+1)th failed attempt on one identifier from any address, and stores no identifier in clear', async () => {
    const keyPrefix = redis.uniqueKeyPrefix()
    const { app, authorizeCalls } = rateLimitedApp({ rateLimit: redisLimits({ identifier: { attempts: 2 } }, keyPrefix) }, 'loopback')
    expect(outcome(await browserAt(app, '192.0.2.1').signIn(wrong('ada@example.com')))).toBe('wrong password')
    expect(outcome(await browserAt(app, '192.0.2.2').signIn(wrong('ada@example.com')))).toBe('wrong password')
    expect(outcome(await browserAt(app, '192.0.2.3').signIn(wrong('Ada@Example.com')))).toBe('refused')
    expect(authorizeCalls()).toBe(2)
    expect(outcome(await browserAt(app, '192.0.2.3').signIn(wrong('grace@example.com')))).toBe('wrong password')
    const keys = await redis.connect().keys(`${keyPrefix}:id:*`)
    expect(keys).toHaveLength(2)
    for (const key of keys) expect(key).toMatch(new RegExp(`^${keyPrefix}:id:[0-9a-f]{64}$`))
  })

  it('clears the identifier count in Redis on a successful sign-in', async () => {
    const { app } = rateLimitedApp({ rateLimit: redisLimits({ identifier: { attempts: 2 } }) })
    const client = browser(app)
    const outcomes = []
    for (const fields of [wrong(), right, wrong(), wrong(), right]) outcomes.push(outcome(await client.signIn(fields)))
    expect(outcomes).toEqual(['wrong password', 'signed in', 'wrong password', 'wrong password', 'refused'])
  })

  it('counts clients behind a trusted proxy apart', async () => {
    const { app } = rateLimitedApp({ rateLimit: redisLimits({ ip: { attempts: 2 }, identifier: false }) }, 1)
    const first = browserAt(app, '203.0.113.10')
    const second = browserAt(app, '203.0.113.11')
    expect(outcome(await first.signIn(wrong('a')))).toBe('wrong password')
    expect(outcome(await first.signIn(wrong('b')))).toBe('wrong password')
    expect(outcome(await first.signIn(wrong('c')))).toBe('refused')
    expect(outcome(await second.signIn(wrong('d')))).toBe('wrong password')
    expect(outcome(await second.signIn(right))).toBe('signed in')
  })

  it('shares one count between two app instances on the same Redis and prefix', async () => {
    const keyPrefix = redis.uniqueKeyPrefix()
    const limits = () => redisLimits({ ip: { attempts: 4 }, identifier: { attempts: 3 } }, keyPrefix)
    const one = rateLimitedApp({ rateLimit: limits() }, 'loopback')
    const two = rateLimitedApp({ rateLimit: limits() }, 'loopback')
    // Per identifier, from different addresses, alternating instances.
    expect(outcome(await browserAt(one.app, '192.0.2.1').signIn(wrong('ada')))).toBe('wrong password')
    expect(outcome(await browserAt(two.app, '192.0.2.2').signIn(wrong('ada')))).toBe('wrong password')
    expect(outcome(await browserAt(one.app, '192.0.2.3').signIn(wrong('ada')))).toBe('wrong password')
    expect(outcome(await browserAt(two.app, '192.0.2.4').signIn(right))).toBe('refused')
    // Per address, different identifiers.
    for (const [app, name] of [[one.app, 'b'], [two.app, 'c'], [one.app, 'd'], [two.app, 'e']] as const) {
      expect(outcome(await browserAt(app, '198.51.100.7').signIn(wrong(name)))).toBe('wrong password')
    }
    expect(outcome(await browserAt(one.app, '198.51.100.7').signIn(wrong('f')))).toBe('refused')
    expect(one.authorizeCalls() + two.authorizeCalls()).toBe(7)
  })

  it('counts in memory while Redis is down, tries it again after a while, and logs its return', async () => {
    const keyPrefix = redis.uniqueKeyPrefix()
    // Without the offline queue a command fails at once while disconnected.
    const client = redis.connect({ enableOfflineQueue: false })
    // Connected before the first attempt: without the offline queue, a command sent while the client is
    // still connecting fails at once, and that attempt would be counted in memory (seen once on Node 24).
    if (client.status !== 'ready') await once(client, 'ready')
    const admin = redis.connect()
    const { app, log } = rateLimitedApp({ rateLimit: { store: { redis: client }, keyPrefix, ip: { attempts: 10 }, identifier: false } })
    const counted = async () => Number(await admin.get((await admin.keys(`${keyPrefix}:ip:*`))[0] ?? 'none'))
    const visitor = browser(app)
    expect(outcome(await visitor.signIn(wrong('a')))).toBe('wrong password')
    expect(await counted()).toBe(1)

    client.disconnect()
    jest.useFakeTimers({ doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] })
    try {
      expect(outcome(await visitor.signIn(wrong('b')))).toBe('wrong password')
      expect(outcome(await visitor.signIn(wrong('c')))).toBe('wrong password')
      expect(log.error.filter((line) => line.startsWith('RateLimitStoreError'))).toHaveLength(1)
      expect(await counted()).toBe(1)

      await client.connect()
      // Within the retry delay the limiter does not ask the store yet.
      expect(outcome(await visitor.signIn(wrong('d')))).toBe('wrong password')
      expect(await counted()).toBe(1)
      jest.setSystemTime(Date.now() + STORE_RETRY_MS + 1)
      expect(outcome(await visitor.signIn(wrong('e')))).toBe('wrong password')
      expect(await counted()).toBe(2)
      expect(log.warn.filter((line) => line.startsWith('RateLimitStoreRecovered'))).toEqual([
        'RateLimitStoreRecovered The rate-limit store (Redis) answers again; sign-in attempts are counted there again.',
      ])
    } finally {
      jest.useRealTimers()
    }
  })
})

describe('a Redis store that cannot be reached', () => {
  it('counts in memory instead, with the same limits, and logs the outage once', async () => {
    const port = await closedPort()
    // Default retries: commands wait in ioredis's offline queue, as in an app whose Redis went away.
    // (disconnectTimeout: its 2 s default outlives the test after a refused connection.)
    const client = new Redis({ host: '127.0.0.1', port, disconnectTimeout: 50 })
    // The app's own client: its errors are the app's to log; ours is the line below.
    client.on('error', () => {})
    try {
      const { app, log, authorizeCalls } = rateLimitedApp({ rateLimit: { store: { redis: client }, ip: { attempts: 3 }, identifier: false } })
      const browserClient = browser(app)
      // Nobody is locked out: the first attempts are checked as usual.
      expect(outcome(await browserClient.signIn(wrong('a')))).toBe('wrong password')
      // That attempt waited for the store (its timeout); the four after it count in memory at once,
      // without asking the store: no command reaches the client until the retry is due, a time the
      // frozen clock never gets to (an elapsed-time bound stood here, which slow answers on a loaded
      // machine could exceed).
      const commands = jest.spyOn(client, 'sendCommand')
      const now = Date.now()
      const clock = jest.spyOn(Date, 'now').mockReturnValue(now)
      expect(outcome(await browserClient.signIn(right))).toBe('signed in')
      expect(outcome(await browserClient.signIn(wrong('b')))).toBe('wrong password')
      expect(outcome(await browserClient.signIn(wrong('c')))).toBe('wrong password')
      // Nor let through: the limit still holds, counted in this process.
      expect(outcome(await browserClient.signIn(right))).toBe('refused')
      expect(authorizeCalls()).toBe(4)
      clock.mockRestore()
      // Had each of them waited for the store, each would have sent it a command.
      expect(commands).not.toHaveBeenCalled()
      const outage = log.error.filter((line) => line.startsWith('RateLimitStoreError'))
      expect(outage).toHaveLength(1)
      expect(outage[0]).toContain('The rate-limit store (Redis) failed')
      expect(outage[0]).toContain("counted in this process's memory")
    } finally {
      jest.restoreAllMocks()
      client.disconnect()
    }
  })
})

