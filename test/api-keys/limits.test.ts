/**
 * Each key's rate limit on the `rateLimit` option's store (memory, and Redis shared by two app
 * processes' worth of instances), and its quota: concurrent requests at the limit's edge get
 * exactly the limit through, the rest a 429 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { describeWithRedis } from '../support/redis.js'
import { createKey, signedInBrowser, startKeysApp, withKey, type KeysApp } from './api-keys-app.js'

const sqlite = await findDatabaseServer('sqlite')

async function burst(app: KeysApp, key: string, count: number): Promise<Response[]> {
  return Promise.all(Array.from({ length: count }, () => withKey(`${app.url}/reports`, key)))
}

describe('API key limits (memory store)', () => {
  const db = migratedDatabase(sqlite)
  afterAll(closeAll)
  let app: KeysApp
  beforeAll(async () => {
    app = await startKeysApp(db.knex, { apiKeys: { scopes: ['reports:read'], rateLimit: { max: 10, windowSeconds: 3600 } } })
  })

  it('lets exactly the limit of concurrent requests through, and answers the rest 429 with Retry-After', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const { key } = await createKey(browser, app)
    const responses = await burst(app, key, 25)
    expect(responses.filter((response) => response.status === 200)).toHaveLength(10)
    const refused = responses.filter((response) => response.status === 429)
    expect(refused).toHaveLength(15)
    expect(Number(refused[0]!.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another key of the same user has its own window.
    const second = await createKey(browser, app)
    expect((await withKey(`${app.url}/reports`, second.key)).status).toBe(200)
  })

  it('uses a key’s own limit instead of the default', async () => {
    const browser = await signedInBrowser(app, 'ada@example.com')
    const { key, id } = await createKey(browser, app)
    // As createApiKey(req, { rateLimit }) stores it (before the key's first use, so not cached).
    await db.knex('ApiKey').where({ id }).update({ rateLimitMax: 3, rateLimitWindow: 3600 })
    expect((await burst(app, key, 12)).filter((response) => response.status === 200)).toHaveLength(3)
  })

  it('refuses a key whose quota is used up with 429', async () => {
    const browser = await signedInBrowser(app, 'bob@example.com')
    const { id, key } = await createKey(browser, app)
    await db.knex('ApiKey').where({ id }).update({ remaining: 3 })
    const other = await startKeysApp(db.knex, { apiKeys: { scopes: ['reports:read'], rateLimit: false } })
    const statuses = (await burst(other, key, 6)).map((response) => response.status).sort()
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
  })
})

await describeWithRedis('API key limits (Redis store)', (redis) => {
  const db = migratedDatabase(sqlite)
  afterAll(async () => {
    await closeAll()
    await redis.cleanUp()
  })

  it('counts one window across instances sharing the store: exactly the limit passes', async () => {
    const keyPrefix = redis.uniqueKeyPrefix()
    const config = { rateLimit: { store: { redis: redis.connect() }, keyPrefix }, apiKeys: { scopes: ['reports:read'], rateLimit: { max: 8, windowSeconds: 3600 } } }
    const first = await startKeysApp(db.knex, config)
    const second = await startKeysApp(db.knex, { ...config, rateLimit: { store: { redis: redis.connect() }, keyPrefix } })
    const browser = await signedInBrowser(first, 'ada@example.com')
    const { key } = await createKey(browser, first)
    const responses = (await Promise.all([burst(first, key, 10), burst(second, key, 10)])).flat()
    expect(responses.filter((response) => response.status === 200)).toHaveLength(8)
    expect(responses.filter((response) => response.status === 429)).toHaveLength(12)
    expect((await redis.connect().keys(`${keyPrefix}:api-key:*`)).length).toBeGreaterThan(0)
  })
})
