/**
 * getAccessToken with database sessions on SQLite, PostgreSQL and MariaDB, against a real OpenID
 * Provider that rotates refresh tokens and revokes the whole grant when a used one comes back:
 * concurrent calls in one instance and across two instances on one database (as two processes)
 * cause one refresh, a refresh under way elsewhere is waited for rather than replayed, the rotated
 * tokens are stored, and a revoked refresh token gives the typed error.
 */
import { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import Portcullis, { RefreshAccessTokenError, type Adapter, type AdapterAccount, type PortcullisResult, type Session } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, type DatabaseKind, type TestDatabase } from '../support/databases.js'
import { SECRET, silentLogger } from '../support/oauth-app.js'
import { corpProvider, mountTokenApp, SESSION_COOKIE as COOKIE, SHORT_TTL, useRefreshRig } from '../support/refresh-rig.js'

const rig = useRefreshRig()

/** A request carrying `cookie`, for `getAccessToken({ req }, …)` (database sessions need no response). */
function requestWith(cookie: string): IncomingMessage {
  const req = new IncomingMessage(new Socket())
  req.method = 'GET'
  req.headers = { host: '127.0.0.1', cookie }
  return req
}

/** `getAccessToken` of `instance` for the browser's session: the token, or the error's code. */
async function accessToken(instance: PortcullisResult, cookie: string, options?: { skewSeconds?: number }): Promise<string> {
  try {
    return await instance.getAccessToken({ req: requestWith(cookie) }, 'corp', options)
  } catch (error) {
    if (error instanceof RefreshAccessTokenError) return `error:${error.code}`
    throw error
  }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `getAccessToken with database sessions on ${kind}`, (server) => {
    let db: TestDatabase
    let otherPool: Knex
    let first: PortcullisResult
    let second: PortcullisResult

    beforeAll(async () => {
      db = await server.createDatabase()
      await db.knex.migrate.latest({ migrationSource: migrationSource() })
      // A second, independent pool: the second instance is another app server on the same database.
      otherPool = knex(db.config)
    })
    afterAll(async () => {
      await otherPool?.destroy()
      await db?.destroy()
    })
    beforeEach(() => {
      first = mountTokenApp(rig.app, { providers: [corpProvider(rig.idp)], adapter: KnexAdapter(db.knex) })
      second = Portcullis({ secret: SECRET, logger: silentLogger, providers: [corpProvider(rig.idp)], adapter: KnexAdapter(otherPool) })
    })

    /** Signs `login` in (access tokens living `ttl` seconds; refreshed ones an hour); the session cookie. */
    async function signedIn(login: string, ttl = SHORT_TTL, browser = new Browser()): Promise<{ browser: Browser; cookie: string }> {
      expect((await rig.signInWith(browser, login, { ttl })).status).toBe(302)
      return { browser, cookie: `${COOKIE}=${browser.cookie(rig.app.url, COOKIE)}` }
    }

    async function storedAccount(login: string): Promise<AdapterAccount> {
      const user = await KnexAdapter(db.knex).getUserByAccount({ provider: 'corp', providerAccountId: login })
      return (await KnexAdapter(db.knex).getAccountsByUserId(user!.id)).find((account) => account.provider === 'corp')!
    }

    it('returns the stored token while it is fresh, without asking the provider', async () => {
      const { cookie } = await signedIn('alice', 3600)
      const before = rig.refreshes()
      expect(await accessToken(first, cookie)).toBe((await storedAccount('alice')).access_token)
      expect(rig.refreshes()).toBe(before)
    })

    it('50 concurrent calls cause one refresh, and the rotated token set is stored', async () => {
      const { cookie } = await signedIn('bob')
      const signedInWith = await storedAccount('bob')
      const before = rig.refreshes()
      const tokens = await Promise.all(Array.from({ length: 50 }, () => accessToken(first, cookie)))
      expect(rig.refreshes() - before).toBe(1)
      expect(new Set(tokens).size).toBe(1)
      const stored = await storedAccount('bob')
      expect(stored.access_token).toBe(tokens[0])
      expect(stored.refresh_token).not.toBe(signedInWith.refresh_token)
      expect(stored.expires_at).toBeGreaterThan(Date.now() / 1000 + 3000)
      expect(await rig.accepts(tokens[0]!)).toBe(true)
      // Fresh now: no further refresh.
      expect(await accessToken(first, cookie)).toBe(tokens[0])
      expect(rig.refreshes() - before).toBe(1)
    })

    it('two instances on one database racing: one refresh, and the user keeps a working token', async () => {
      const { cookie } = await signedIn('carol')
      const before = rig.refreshes()
      const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => accessToken(i % 2 ? second : first, cookie)))
      expect(rig.refreshes() - before).toBe(1)
      expect(new Set(tokens).size).toBe(1)
      expect(tokens[0]).not.toMatch(/^error:/)
      expect(await rig.accepts(tokens[0]!)).toBe(true)
      expect((await storedAccount('carol')).access_token).toBe(tokens[0])
    })

    it('an instance that finds a refresh under way in another waits for it instead of replaying the refresh token', async () => {
      const { cookie } = await signedIn('dave')
      const before = rig.refreshes()
      // The IdP has rotated the refresh token, but its answer to the first instance is held back.
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      let answered!: () => void
      const refreshed = new Promise<void>((resolve) => (answered = resolve))
      rig.afterRefresh(async () => {
        answered()
        await held
      })
      const firstCall = accessToken(first, cookie)
      await refreshed
      // Sending the used refresh token now would make the IdP revoke the grant, new tokens included.
      const secondCall = accessToken(second, cookie)
      await new Promise((resolve) => setTimeout(resolve, 150))
      release()
      const [a, b] = await Promise.all([firstCall, secondCall])
      expect(rig.refreshes() - before).toBe(1)
      expect(b).toBe(a)
      expect(await rig.accepts(a)).toBe(true)
    })

    it('takes over the lease of a refresh that never finished (a crashed process) once it has run out', async () => {
      const { cookie } = await signedIn('erin')
      const account = await storedAccount('erin')
      const adapter = KnexAdapter(db.knex)
      await adapter.updateAccount({ provider: 'corp', providerAccountId: 'erin', expires_at: -(Math.floor(Date.now() / 1000) - 5) })
      const before = rig.refreshes()
      const token = await accessToken(first, cookie)
      expect(rig.refreshes() - before).toBe(1)
      expect(await rig.accepts(token)).toBe(true)
      expect((await storedAccount('erin')).refresh_token).not.toBe(account.refresh_token)
    })

    it('a revoked refresh token gives invalid_grant, leaves the row as it was, and marks the request’s session', async () => {
      const { browser } = await signedIn('frank')
      const account = await storedAccount('frank')
      await rig.revoke(account.refresh_token!)
      const response = await browser.request(`${rig.app.url}/token`)
      expect(response.status).toBe(401)
      expect((await response.json()) as { code: string; auth: Session }).toMatchObject({ code: 'invalid_grant', auth: { error: 'RefreshAccessTokenError' } })
      expect(await storedAccount('frank')).toEqual(account)

      // Signing in again stores the new token set in the linked account: the user gets tokens again.
      await signedIn('frank', SHORT_TTL, browser)
      const renewed = await storedAccount('frank')
      expect(renewed.refresh_token).not.toBe(account.refresh_token)
      const token = await accessToken(first, `${COOKIE}=${browser.cookie(rig.app.url, COOKIE)}`)
      expect(await rig.accepts(token)).toBe(true)
    })

    it('answers unsupported_adapter without updateAccount, ambiguous for two accounts at the provider, not_signed_in without a session', async () => {
      const { cookie } = await signedIn('gina')
      const { updateAccount: _missing, ...withoutUpdate } = KnexAdapter(db.knex) as Adapter
      const limited = Portcullis({ secret: SECRET, logger: silentLogger, providers: [corpProvider(rig.idp)], adapter: withoutUpdate })
      expect(await accessToken(limited, cookie)).toBe('error:unsupported_adapter')

      const user = await KnexAdapter(db.knex).getUserByAccount({ provider: 'corp', providerAccountId: 'gina' })
      await KnexAdapter(db.knex).linkAccount({ userId: user!.id, type: 'oidc', provider: 'corp', providerAccountId: 'gina-work', access_token: 'work' })
      expect(await accessToken(first, cookie)).toBe('error:ambiguous')
      expect(await first.getAccessToken({ req: requestWith(cookie) }, 'corp', { providerAccountId: 'gina-work' })).toBe('work')

      expect(await accessToken(first, `${COOKIE}=unknown`)).toBe('error:not_signed_in')
    })
  })
}
