/**
 * The deletion grace period (`account.deletionGracePeriod`) with real parts: SMTP for the notices,
 * SQLite, PostgreSQL and MariaDB for the rows, the background prune on its own timer. A deletion
 * marks the account and signs out every device; a sign-in within the period (a password, a mailed
 * link) restores the same user with every row; past it the prune deletes every row and tells the
 * app. The attacks: a stale cookie of the marked user (database and JWT sessions), its API key, a
 * new sign-up taking the marked address, and a restore racing the prune.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import knexFactory, { type Knex } from 'knex'
import type { AdapterUser } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Nodemailer from 'portcullis/providers/nodemailer'
import Password from 'portcullis/providers/password'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { listen, sessionOf } from '../support/oauth-app.js'
import { followLink, mailedLink, useEmailRig } from '../email/email-app.js'
import { FAST_HASHING, FROM, signUp } from '../password/password-app.js'
import { Browser, freezeClock, mountAccountApp, nextLink, post, rowsOf, verifiedUser } from './account-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 27, 12, 0, 0)
/** A day. */
const GRACE = 86_400

afterEach(() => {
  jest.useRealTimers()
})

const userIdOf = async (knex: Knex, email: string) => String((await knex('User').where({ email }).first()).id)
const markOf = async (knex: Knex, id: string) => (await knex('User').where({ id }).first())?.deletedAt ?? null

/** Waits (real time) until `check` holds, at most `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = performance.now() + ms
  while (!(await check())) {
    if (performance.now() > end) throw new Error('not within the time allowed')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

function graceSuite(kind: DatabaseKind) {
  return (server: Parameters<Parameters<typeof describeWithDatabase>[2]>[0]) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    const events: { name: string; user: AdapterUser; deleteAt?: Date }[] = []
    const stops: AbortController[] = []
    afterEach(() => {
      for (const stop of stops.splice(0)) stop.abort()
    })
    const mount = (config: Parameters<typeof mountAccountApp>[3] = {}) => {
      events.length = 0
      const stop = new AbortController()
      stops.push(stop)
      return mountAccountApp(rig.app, db.knex, rig.smtp, {
        providers: [Password({ server: rig.smtp.url, from: FROM, hashing: FAST_HASHING }), Nodemailer({ server: rig.smtp.url, from: FROM })],
        account: { server: rig.smtp.url, from: FROM, deletionGracePeriod: GRACE },
        // Every 120 ms: the tests move the clock past the period and wait for it.
        prune: { everyMinutes: 0.002, signal: stop.signal },
        events: {
          userDeleted: ({ user }) => void events.push({ name: 'userDeleted', user }),
          userDeletionScheduled: ({ user, deleteAt }) => void events.push({ name: 'userDeletionScheduled', user, deleteAt }),
          userRestored: ({ user }) => void events.push({ name: 'userRestored', user }),
        },
        ...config,
      })
    }

    it('marks the account, signs out every device, keeps every row and mails the date; the prune leaves it within the period', async () => {
      freezeClock(T0)
      mount()
      const laptop = new Browser()
      const phone = new Browser()
      await verifiedUser(laptop, url(), rig.smtp, 'ada@example.com')
      await post(phone, url(), 'callback/password', { email: 'ada@example.com', password: 'correct horse battery staple' })
      const ada = await userIdOf(db.knex, 'ada@example.com')
      const stale = laptop.cookie(url(), 'authjs.session-token')!
      expect(await rowsOf(db.knex, ada)).toMatchObject({ User: 1, Session: 2, Password: 1 })

      const gone = await post(laptop, url(), 'account/delete', { confirm: 'yes' })
      expect(gone.status).toBe(302)
      expect(gone.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.session-token=;'))).toBe(true)
      expect(await sessionOf(laptop, url())).toBeNull()
      expect(await sessionOf(phone, url())).toBeNull()
      // A copy of the cookie taken before is refused: the session row is gone.
      const copy = new Browser()
      copy.setCookie(url(), 'authjs.session-token', stale)
      expect(await sessionOf(copy, url())).toBeNull()
      expect(await rowsOf(db.knex, ada)).toMatchObject({ User: 1, Session: 0, Password: 1 })
      expect(await markOf(db.knex, ada)).not.toBeNull()
      expect(events.map((event) => [event.name, event.user.id, event.deleteAt?.getTime()])).toEqual([['userDeletionScheduled', ada, T0 + GRACE * 1000]])
      const mail = await nextLink(rig.smtp, 'ada@example.com')
      expect(mail.subject).toBe(`Your account on ${new URL(url()).host} will be deleted on ${new Date(T0 + GRACE * 1000).toUTCString()}`)

      // The prune runs (several times in this half second) and leaves the account: its period runs.
      jest.setSystemTime(T0 + GRACE * 1000 - 1000)
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(await rowsOf(db.knex, ada)).toMatchObject({ User: 1, Password: 1 })
      expect(events.map((event) => event.name)).toEqual(['userDeletionScheduled'])
    })

    it('a sign-in within the period restores the same user with every row, says so, and the old cookies stay refused', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      await KnexAdapter(db.knex).linkAccount({ userId: ada, type: 'oauth', provider: 'github', providerAccountId: 'gh-ada' })
      const stale = browser.cookie(url(), 'authjs.session-token')!
      await post(browser, url(), 'account/delete', { confirm: 'yes' })
      await nextLink(rig.smtp, 'ada@example.com')

      jest.setSystemTime(T0 + 3600_000)
      const signedIn = await post(browser, url(), 'callback/password', { email: 'ada@example.com', password: 'correct horse battery staple', callbackUrl: `${url()}/dashboard` })
      expect(signedIn.status).toBe(302)
      const restored = new URL(signedIn.headers.get('location')!)
      expect(restored.pathname).toBe('/api/auth/account/restored')
      expect(restored.searchParams.get('callbackUrl')).toBe(`${url()}/dashboard`)
      const page = await browser.request(restored.href)
      const html = await page.text()
      expect(html).toContain('Your account was restored')
      expect(html).toContain(`href="${url()}/dashboard"`)

      expect((await sessionOf(browser, url()))?.user.id).toBe(ada)
      expect(await markOf(db.knex, ada)).toBeNull()
      expect(await rowsOf(db.knex, ada)).toMatchObject({ User: 1, Account: 1, Session: 1, Password: 1 })
      expect(events.map((event) => [event.name, event.user.id])).toEqual([['userDeletionScheduled', ada], ['userRestored', ada]])
      expect((await nextLink(rig.smtp, 'ada@example.com')).subject).toBe(`Your account on ${new URL(url()).host} was restored`)
      // The session from before the deletion does not come back with the account.
      const copy = new Browser()
      copy.setCookie(url(), 'authjs.session-token', stale)
      expect(await sessionOf(copy, url())).toBeNull()

      // Past the period the prune deletes nothing: the mark is gone.
      jest.setSystemTime(T0 + GRACE * 1000 + 60_000)
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(await rowsOf(db.knex, ada)).toMatchObject({ User: 1, Account: 1, Password: 1 })
    })

    it('a mailed sign-in link restores it too: every way in passes through the restore', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      await post(browser, url(), 'account/delete', { confirm: 'yes' })
      await nextLink(rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + 60_000)
      const link = await mailedLink(rig, browser, 'ada@example.com')
      const signedIn = await followLink(browser, link)
      expect(new URL(signedIn.headers.get('location')!).pathname).toBe('/api/auth/account/restored')
      expect(await markOf(db.knex, ada)).toBeNull()
      expect((await sessionOf(browser, url()))?.user.id).toBe(ada)
    })

    it('past the period the prune deletes every row of the user and tells the app; nobody else is touched', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      await verifiedUser(new Browser(), url(), rig.smtp, 'bob@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      const bob = await userIdOf(db.knex, 'bob@example.com')
      await KnexAdapter(db.knex).linkAccount({ userId: ada, type: 'oauth', provider: 'github', providerAccountId: 'gh-ada' })
      await post(browser, url(), 'account/delete', { confirm: 'yes' })

      jest.setSystemTime(T0 + GRACE * 1000 + 1000)
      await eventually(() => events.some((event) => event.name === 'userDeleted'))
      expect(await rowsOf(db.knex, ada)).toEqual({ User: 0, Account: 0, Session: 0, Password: 0, TwoFactor: 0, RecoveryCode: 0, Authenticator: 0 })
      expect(await rowsOf(db.knex, bob)).toMatchObject({ User: 1, Session: 1, Password: 1 })
      expect(events.filter((event) => event.name === 'userDeleted').map((event) => event.user.email)).toEqual(['ada@example.com'])
      // Too late to sign in: the password went with the account.
      const late = await post(new Browser(), url(), 'callback/password', { email: 'ada@example.com', password: 'correct horse battery staple' })
      expect(late.headers.get('location')).toContain('error=')
    })

    it('JWT sessions on a shared store: a marked user’s token is refused on every process, and a sign-in restores', async () => {
      freezeClock(T0)
      const session = { strategy: 'jwt' as const, store: { knex: db.knex }, revocationCacheSeconds: 1 }
      mount({ session })
      const other = await listen()
      mountAccountApp(other, db.knex, rig.smtp, { session, account: { server: rig.smtp.url, from: FROM, deletionGracePeriod: GRACE }, prune: { everyMinutes: 60, signal: stops[0]!.signal } })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      const cookie = browser.cookie(url(), 'authjs.session-token')!
      const elsewhere = new Browser()
      elsewhere.setCookie(other.url, 'authjs.session-token', cookie)
      expect((await sessionOf(elsewhere, other.url))?.user.email).toBe('ada@example.com')
      expect((await post(browser, url(), 'account/delete', { confirm: 'yes' })).status).toBe(302)
      jest.setSystemTime(T0 + 1_500)
      expect(await sessionOf(elsewhere, other.url)).toBeNull()
      const copy = new Browser()
      copy.setCookie(url(), 'authjs.session-token', cookie)
      expect(await sessionOf(copy, url())).toBeNull()

      jest.setSystemTime(T0 + 10_000)
      expect((await post(browser, url(), 'callback/password', { email: 'ada@example.com', password: 'correct horse battery staple' })).status).toBe(302)
      expect((await sessionOf(browser, url()))?.user.id).toBe(ada)
      expect(await markOf(db.knex, ada)).toBeNull()
      // The old token stays refused after the restore.
      expect(await sessionOf(copy, url())).toBeNull()
    })

    it('a sign-in that loses the race to the prune is refused and sends no session cookie', async () => {
      freezeClock(T0)
      const base = KnexAdapter(db.knex)
      // The prune's delete commits just before this sign-in's restore: the restore finds no row.
      const racing = { ...base, restoreDeletedUser: async (id: string) => (await base.deleteUser(id, { markedBefore: new Date(Date.now() + 1000) }), base.restoreDeletedUser(id)) }
      const session = { strategy: 'jwt' as const, store: { knex: db.knex } }
      mount({ session })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      await post(browser, url(), 'account/delete', { confirm: 'yes' })
      mount({ session, adapter: racing })
      jest.setSystemTime(T0 + 10_000)
      const late = await post(browser, url(), 'callback/password', { email: 'ada@example.com', password: 'correct horse battery staple' })
      expect(late.status).toBe(302)
      expect(late.headers.get('location')).toContain('error=')
      expect(late.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.session-token=') && !cookie.startsWith('authjs.session-token=;'))).toBe(false)
      expect(await sessionOf(browser, url())).toBeNull()
      expect(await rowsOf(db.knex, ada)).toEqual({ User: 0, Account: 0, Session: 0, Password: 0, TwoFactor: 0, RecoveryCode: 0, Authenticator: 0 })
      expect(events.map((event) => event.name)).not.toContain('userRestored')
    })

    it('a marked user’s API key is refused until a sign-in restores the account', async () => {
      freezeClock(T0)
      mount()
      const adapter = KnexAdapter(db.knex)
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      const hash = 'a'.repeat(64)
      const key = { id: 'key-1', keyHash: hash, display: 'pk_x', name: 'script', owner: { type: 'user' as const, id: ada }, createdBy: ada, scopes: [], metadata: null }
      await adapter.createApiKey({ ...key, createdAt: new Date(T0), expiresAt: null, revokedAt: null, lastUsedAt: null, rateLimit: null, quota: null })
      expect((await adapter.getApiKeyByHash(hash))?.user.id).toBe(ada)
      await post(browser, url(), 'account/delete', { confirm: 'yes' })
      expect(await adapter.getApiKeyByHash(hash)).toBeNull()
      jest.setSystemTime(T0 + 10_000)
      await post(browser, url(), 'callback/password', { email: 'ada@example.com', password: 'correct horse battery staple' })
      expect((await adapter.getApiKeyByHash(hash))?.user.id).toBe(ada)
    })

    it('a new sign-up cannot take a marked user’s address: it is still the user’s', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      await post(browser, url(), 'account/delete', { confirm: 'yes' })
      await nextLink(rig.smtp, 'ada@example.com')
      await signUp(new Browser(), url(), 'ada@example.com', 'another long passphrase here')
      // The address's owner is told, as for any taken address; no second user appears.
      expect((await nextLink(rig.smtp, 'ada@example.com')).subject).not.toContain('Confirm')
      expect((await db.knex('User').select('id')).map((row) => String(row.id))).toEqual([ada])
      expect(await markOf(db.knex, ada)).not.toBeNull()
    })
  }
}

/** A user with rows in several tables, marked deleted at `at`. */
async function markedUser(knex: Knex, email: string, at: Date): Promise<string> {
  const adapter = KnexAdapter(knex)
  const user = await adapter.createUser({ email, emailVerified: null, name: null, image: null })
  await adapter.setUserPassword(user.id, '$scrypt$fake')
  await adapter.linkAccount({ userId: user.id, type: 'oauth', provider: 'github', providerAccountId: `gh-${user.id}` })
  await adapter.createSession({ sessionToken: `s-${user.id}`, userId: user.id, expires: new Date(Date.now() + 3600_000) })
  await adapter.markUserDeleted(user.id, at)
  return user.id
}

function raceSuite(kind: DatabaseKind) {
  return (server: Parameters<Parameters<typeof describeWithDatabase>[2]>[0]) => {
    it('a restore racing the prune’s delete: one wins, and the user is either whole or wholly gone', async () => {
      const db = await server.createDatabase()
      // A second pool: another app server, whose statements interleave with the first's. SQLite's
      // one connection per file takes the statements in turn (a second pool would only meet SQLITE_BUSY).
      const otherKnex = kind === 'sqlite' ? db.knex : knexFactory(db.config)
      try {
        await db.knex.migrate.latest({ migrationSource: migrationSource() })
        const first = KnexAdapter(db.knex)
        const second = KnexAdapter(otherKnex)
        const markedAt = new Date(Date.now() - 10_000)
        const ids: string[] = []
        for (let n = 0; n < 12; n++) ids.push(await markedUser(db.knex, `user${n}@example.com`, markedAt))
        const outcomes = await Promise.all(
          ids.map(async (id, n) => {
            const restore = () => (n % 2 ? first : second).restoreDeletedUser(id)
            const prune = () => (n % 2 ? second : first).deleteUser(id, { markedBefore: new Date() })
            const [restored, deleted] = n % 3 ? await Promise.all([restore(), prune()]) : (await Promise.all([prune(), restore()])).reverse()
            return { id, restored: restored as boolean, deleted: deleted !== null }
          }),
        )
        for (const { id, restored, deleted } of outcomes) {
          // Exactly one of the two did something.
          expect([id, restored !== deleted]).toEqual([id, true])
          const rows = await rowsOf(db.knex, id)
          if (restored) {
            expect(rows).toMatchObject({ User: 1, Account: 1, Session: 1, Password: 1 })
            expect(await markOf(db.knex, id)).toBeNull()
          } else {
            expect(rows).toEqual({ User: 0, Account: 0, Session: 0, Password: 0, TwoFactor: 0, RecoveryCode: 0, Authenticator: 0 })
          }
        }
      } finally {
        if (otherKnex !== db.knex) await otherKnex.destroy()
        await db.destroy()
      }
    })

    if (kind !== 'sqlite') {
      it('a restore arriving while the prune’s delete is under way waits for it, and finds nothing to restore', async () => {
        const db = await server.createDatabase()
        const pools = [knexFactory(db.config), knexFactory(db.config)]
        try {
          await db.knex.migrate.latest({ migrationSource: migrationSource() })
          const id = await markedUser(db.knex, 'ada@example.com', new Date(Date.now() - 10_000))
          // A third connection holds the user's password row: the prune's transaction, past its
          // check of the mark, stops at that row's delete until the lock is let go.
          const holder = await db.knex.transaction()
          await holder('Password').where({ userId: id }).forUpdate()
          const pruning = KnexAdapter(pools[0]!).deleteUser(id, { markedBefore: new Date() })
          await new Promise((resolve) => setTimeout(resolve, 300))
          const restoring = KnexAdapter(pools[1]!).restoreDeletedUser(id)
          await new Promise((resolve) => setTimeout(resolve, 300))
          await holder.commit()
          expect([(await pruning)?.id, await restoring]).toEqual([id, false])
          expect(await rowsOf(db.knex, id)).toEqual({ User: 0, Account: 0, Session: 0, Password: 0, TwoFactor: 0, RecoveryCode: 0, Authenticator: 0 })
        } finally {
          for (const pool of pools) await pool.destroy()
          await db.destroy()
        }
      })
    }

    it('the prune’s delete leaves a user not marked, or marked after its cutoff', async () => {
      const db = await server.createDatabase()
      try {
        await db.knex.migrate.latest({ migrationSource: migrationSource() })
        const adapter = KnexAdapter(db.knex)
        const cutoff = new Date(Date.now() - 60_000)
        const fresh = await markedUser(db.knex, 'fresh@example.com', new Date(cutoff.getTime() + 1))
        const plain = await adapter.createUser({ email: 'plain@example.com', emailVerified: null, name: null, image: null })
        expect(await adapter.deleteUser(fresh, { markedBefore: cutoff })).toBeNull()
        expect(await adapter.deleteUser(plain.id, { markedBefore: cutoff })).toBeNull()
        expect(await adapter.listUsersMarkedDeleted(cutoff, 10)).toEqual([])
        expect(await adapter.listUsersMarkedDeleted(new Date(), 10)).toEqual([fresh])
        expect((await rowsOf(db.knex, fresh)).User).toBe(1)
        expect(await adapter.getUser(fresh)).not.toHaveProperty('deletedAt')
      } finally {
        await db.destroy()
      }
    })
  }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `the deletion grace period on ${kind}`, graceSuite(kind))
  await describeWithDatabase(kind, `restore and prune racing on ${kind}`, raceSuite(kind))
}
