/**
 * getAccessToken with JWT sessions on several instances sharing a store (`session.store` on Redis
 * or a database): one refresh for concurrent calls on all of them, a used refresh token never sent
 * again by any instance, a refused one not retried elsewhere, and a store that fails stopping the
 * refresh instead of letting each instance spend the token. Each instance is its own Portcullis
 * with its own config (no memory shared in the process), as separate processes are; the scale-out
 * suite (test/scale) runs the same with real processes.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import type { PortcullisConfig } from 'portcullis'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { listen } from '../support/oauth-app.js'
import { describeWithRedis } from '../support/redis.js'
import { corpProvider, mountTokenApp, SESSION_COOKIE as COOKIE, useRefreshRig } from '../support/refresh-rig.js'

const rig = useRefreshRig()

type Store = NonNullable<NonNullable<PortcullisConfig['session']>['store']>

interface Instance {
  url: string
}

/** An instance of its own on a listener of its own, on `store`; `storeOutageSeconds` long enough for the outage test. */
async function instance(store: Store): Promise<Instance> {
  const listener = await listen()
  mountTokenApp(listener, { providers: [corpProvider(rig.idp)], session: { strategy: 'jwt', store, storeOutageSeconds: 600 } })
  return { url: listener.url }
}

async function tokenAt(target: Instance, cookie: string): Promise<{ status: number; token?: string; code?: string }> {
  const response = await fetch(`${target.url}/token`, { headers: { cookie } })
  const body = (await response.json().catch(() => ({}))) as { token?: string; code?: string }
  return { status: response.status, ...body }
}

/** Signs `login` in on the rig's own instance (on `store`) with an access token due for a refresh; answers the session cookie and the refresh token. */
async function signedIn(store: Store, login: string): Promise<{ cookie: string; refreshToken: string }> {
  let refreshToken = ''
  mountTokenApp(rig.app, {
    providers: [corpProvider(rig.idp)],
    session: { strategy: 'jwt', store },
    callbacks: {
      jwt: ({ token, account }) => {
        if (account?.refresh_token) refreshToken = account.refresh_token
        return token
      },
    },
  })
  const browser = new Browser()
  expect((await rig.signInWith(browser, login)).status).toBe(302)
  return { cookie: `${COOKIE}=${browser.cookie(rig.app.url, COOKIE)}`, refreshToken }
}

/** A store of its own (a client or pool, as a process has), and how to make it fail. */
interface StoreHandle {
  store: Store
  fail(): Promise<void>
}

function sharedStoreSuite(label: string, connect: () => StoreHandle) {
  const shared = () => connect().store

  it(`${label}: 20 concurrent calls across three instances with one expiring cookie cause one refresh; a fourth instance given the old cookie later gets the new token without one`, async () => {
    const { cookie } = await signedIn(shared(), 'alice')
    const three = [await instance(shared()), await instance(shared()), await instance(shared())]
    const before = rig.refreshes()

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => tokenAt(three[i % 3]!, cookie)))
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    expect(new Set(answers.map((answer) => answer.token)).size).toBe(1)
    expect(rig.refreshes() - before).toBe(1)
    expect(await rig.accepts(answers[0]!.token!)).toBe(true)

    // A new instance (no memory at all) with the cookie from before the refresh, a while later: sending
    // its rotated refresh token would make the IdP revoke the grant; the store gives it the new tokens.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const late = await tokenAt(await instance(shared()), cookie)
    expect(late).toEqual({ status: 200, token: answers[0]!.token })
    expect(rig.refreshes() - before).toBe(1)
    expect(await rig.accepts(late.token!)).toBe(true)
  })

  it(`${label}: a cookie two rotations behind, on an instance that saw neither, follows the stored answers instead of replaying a used refresh token`, async () => {
    const { cookie } = await signedIn(shared(), 'fay')
    const one = await instance(shared())
    const first = await fetch(`${one.url}/token`, { headers: { cookie } })
    const resealed = first.headers.getSetCookie().find((line) => line.startsWith(`${COOKIE}=`))!.split(';')[0]!
    // skew above the new token's lifetime: due again, so a second rotation.
    expect((await fetch(`${one.url}/token?skew=7200`, { headers: { cookie: resealed } })).status).toBe(200)
    const before = rig.refreshes()
    const late = (await (await fetch(`${(await instance(shared())).url}/token?skew=7200`, { headers: { cookie } })).json()) as { token?: string }
    expect(late.token).toEqual(expect.any(String))
    expect(rig.refreshes() - before).toBe(1)
    expect(await rig.accepts(late.token!)).toBe(true)
  })

  it(`${label}: a refresh token the provider refused on one instance is not sent again by another`, async () => {
    const { cookie, refreshToken } = await signedIn(shared(), 'bob')
    await rig.revoke(refreshToken)
    const before = rig.refreshes()
    expect(await tokenAt(await instance(shared()), cookie)).toMatchObject({ status: 401, code: 'invalid_grant' })
    expect(rig.refreshes() - before).toBe(1)
    expect(await tokenAt(await instance(shared()), cookie)).toMatchObject({ status: 401, code: 'invalid_grant' })
    expect(rig.refreshes() - before).toBe(1)
  })

  it(`${label}: a provider outage on one instance leaves nothing behind: another refreshes at once and gets a token`, async () => {
    const { cookie } = await signedIn(shared(), 'erin')
    rig.beforeTokenRequest(async (ctx) => {
      ctx.status = 503
      ctx.body = 'down for maintenance'
      return true
    })
    try {
      expect(await tokenAt(await instance(shared()), cookie)).toMatchObject({ status: 401, code: 'provider_error' })
    } finally {
      rig.beforeTokenRequest(undefined)
    }
    const before = rig.refreshes()
    // Were its lease left behind, this call would wait it out (a minute: past the test's time limit).
    const answer = await tokenAt(await instance(shared()), cookie)
    expect(answer.status).toBe(200)
    expect(rig.refreshes() - before).toBe(1)
    expect(await rig.accepts(answer.token!)).toBe(true)
  })

  it(`${label}: when the store fails, the call fails and the instance does not refresh on its own`, async () => {
    const { cookie } = await signedIn(shared(), 'carol')
    const handle = connect()
    const target = await instance(handle.store)
    // The session is read while the store works; the outage grace then lets it in, but the refresh needs the store.
    expect((await fetch(`${target.url}/me`, { headers: { cookie } })).status).toBe(200)
    await handle.fail()
    const before = rig.refreshes()
    // The store is down: AdapterError, which answers 503 (try again later) through Express's default handler.
    expect((await tokenAt(target, cookie)).status).toBe(503)
    expect(rig.refreshes() - before).toBe(0)
  })
}

await describeWithRedis('getAccessToken across instances sharing a Redis store', (server) => {
  afterAll(() => server.cleanUp())
  const keyPrefix = server.uniqueKeyPrefix()
  sharedStoreSuite('Redis', () => {
    const client = server.connect()
    return { store: { redis: client, keyPrefix }, fail: async () => client.disconnect() }
  })
})

for (const kind of ['sqlite', 'postgres'] as const) {
  await describeWithDatabase(kind, `getAccessToken across instances sharing a Knex store (${kind})`, (server) => {
    let db: TestDatabase | undefined
    const pools: Knex[] = []
    beforeAll(async () => {
      db = await server.createDatabase()
    })
    afterAll(async () => {
      await Promise.all(pools.splice(0).map((pool) => pool.destroy().catch(() => {})))
      await db?.destroy()
    })
    // Each store gets a pool of its own, as a process has.
    sharedStoreSuite(kind, () => {
      const pool = knex(db!.config)
      pools.push(pool)
      return { store: { knex: pool }, fail: () => pool.destroy() }
    })
  })
}
