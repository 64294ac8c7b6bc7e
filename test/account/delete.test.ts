/**
 * Deleting one's account (`deleteAccount()`, POST /account/delete) with real parts: SMTP for the
 * notice, SQLite, PostgreSQL and MariaDB for the rows. Every row of every wing goes in one
 * transaction, every session ends (on every device, and with JWT sessions on every process that
 * shares the store), the app hears `userDeleted`; and the attacks: deleting without a fresh
 * sign-in, without the confirmation box, without the CSRF token, or someone else's account.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import type { Knex } from 'knex'
import { KnexAdapter } from 'portcullis/adapters/knex'
import type { AdapterUser } from 'portcullis'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { listen, redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { codeAt, enrol, giveCode } from '../two-factor/two-factor-app.js'
import { Browser, freezeClock, mountAccountApp, nextLink, post, rowsOf, STALE_MS, verifiedUser } from './account-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 20, 12, 0, 0)

afterEach(() => {
  jest.useRealTimers()
})

/** Gives `userId` an OAuth account and a passkey's credential, besides the password and the second factor. */
async function moreWaysIn(knex: Knex, userId: string): Promise<void> {
  const adapter = KnexAdapter(knex)
  await adapter.linkAccount({ userId, type: 'oauth', provider: 'github', providerAccountId: `gh-${userId}` })
  await adapter.linkAccount({ userId, type: 'webauthn', provider: 'passkey', providerAccountId: `cred-${userId}` })
  await adapter.createAuthenticator({ credentialID: `cred-${userId}`, userId, providerAccountId: `cred-${userId}`, credentialPublicKey: 'AAAA', counter: 0, credentialDeviceType: 'singleDevice', credentialBackedUp: false, transports: null })
}

const usersIn = async (knex: Knex) => Number((await knex('User').count({ n: '*' }))[0]!.n)
const userIdOf = async (knex: Knex, email: string) => String((await knex('User').where({ email }).first()).id)

function deleteSuite(kind: DatabaseKind) {
  return (server: Parameters<Parameters<typeof describeWithDatabase>[2]>[0]) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    const deleted: AdapterUser[] = []
    const mount = (config: Parameters<typeof mountAccountApp>[3] = {}) => {
      deleted.length = 0
      return mountAccountApp(rig.app, db.knex, rig.smtp, { twoFactor: { issuer: 'Portcullis tests' }, events: { userDeleted: ({ user }) => void deleted.push(user) }, ...config })
    }

    it('deletes every row of the user in every table, signs out every device, tells the app and mails the address', async () => {
      freezeClock(T0)
      mount()
      const phone = new Browser()
      const laptop = new Browser()
      await verifiedUser(laptop, url(), rig.smtp, 'ada@example.com')
      await verifiedUser(new Browser(), url(), rig.smtp, 'bob@example.com')
      const ada = await userIdOf(db.knex, 'ada@example.com')
      const bob = await userIdOf(db.knex, 'bob@example.com')
      const { secret } = await enrol(laptop, url(), T0)
      await moreWaysIn(db.knex, ada)
      await moreWaysIn(db.knex, bob)
      // A second device of Ada's: the password, then the second factor (the next code).
      jest.setSystemTime(T0 + 30_000)
      await post(phone, url(), 'callback/password', { email: 'ada@example.com', password: 'correct horse battery staple' })
      expect((await giveCode(phone, url(), codeAt(secret, T0 + 30_000))).status).toBe(302)
      expect(await rowsOf(db.knex, ada)).toEqual({ User: 1, Account: 2, Session: 2, Password: 1, TwoFactor: 1, RecoveryCode: 10, Authenticator: 1 })

      const page = await laptop.request(`${url()}/api/auth/account`)
      expect(page.status).toBe(200)
      const gone = await post(laptop, url(), 'account/delete', { confirm: 'yes' })
      expect(gone.status).toBe(302)
      expect(gone.headers.get('location')).toBe(`${url()}/`)
      expect(gone.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.session-token=;'))).toBe(true)

      expect(await rowsOf(db.knex, ada)).toEqual({ User: 0, Account: 0, Session: 0, Password: 0, TwoFactor: 0, RecoveryCode: 0, Authenticator: 0 })
      // Bob's rows are all there.
      expect(await rowsOf(db.knex, bob)).toEqual({ User: 1, Account: 2, Session: 1, Password: 1, TwoFactor: 0, RecoveryCode: 0, Authenticator: 1 })
      expect(await sessionOf(laptop, url())).toBeNull()
      expect(await sessionOf(phone, url())).toBeNull()
      expect(deleted.map((user) => user.email)).toEqual(['ada@example.com'])
      const mail = await nextLink(rig.smtp, 'ada@example.com')
      expect(mail.subject).toBe(`Your account on ${new URL(url()).host} was deleted`)
      expect(mail.link).toBe(`${url()}/`)
    })

    it('sends a stale session to confirm first, and deletes nothing until it has', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const stale = await post(browser, url(), 'account/delete', { confirm: 'yes' })
      expect(stale.status).toBe(302)
      expect(stale.headers.get('location')).toBe(`${url()}/api/auth/account/confirm?callbackUrl=${encodeURIComponent(`${url()}/api/auth/account`)}`)
      expect(await usersIn(db.knex)).toBe(1)
      const confirmed = await post(browser, url(), 'account/confirm', { method: 'password', password: 'correct horse battery staple', callbackUrl: `${url()}/api/auth/account` })
      expect(confirmed.headers.get('location')).toBe(`${url()}/api/auth/account`)
      expect((await post(browser, url(), 'account/delete', { confirm: 'yes' })).status).toBe(302)
      expect(await usersIn(db.knex)).toBe(0)
    })

    it('refuses without the box ticked, and without the CSRF token', async () => {
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const unticked = await post(browser, url(), 'account/delete', {})
      expect(unticked.status).toBe(400)
      expect(await unticked.text()).toContain('Tick the box')
      const forged = await browser.request(`${url()}/api/auth/account/delete`, { body: new URLSearchParams({ confirm: 'yes' }) })
      expect(redirectOf(forged).error).toBe('MissingCSRF')
      expect(await usersIn(db.knex)).toBe(1)
      expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')
    })

    it('deletes only the signed-in user, whatever other user the form names', async () => {
      mount()
      const attacker = new Browser()
      await verifiedUser(attacker, url(), rig.smtp, 'mallory@example.com')
      await verifiedUser(new Browser(), url(), rig.smtp, 'victim@example.com')
      const victim = await userIdOf(db.knex, 'victim@example.com')
      await post(attacker, url(), 'account/delete', { confirm: 'yes', userId: victim, id: victim, email: 'victim@example.com' })
      expect((await db.knex('User').select('email')).map((row) => row.email)).toEqual(['victim@example.com'])
      // Signed out, the attacker deletes no one.
      const again = await post(attacker, url(), 'account/delete', { confirm: 'yes', userId: victim })
      expect(again.status).toBe(302)
      expect(again.headers.get('location')).toContain('/api/auth/signin')
      expect(await rowsOf(db.knex, victim)).toMatchObject({ User: 1, Session: 1, Password: 1 })
    })

    it('JWT sessions on a shared store: a deleted user is signed out on every process', async () => {
      freezeClock(T0)
      const session = { strategy: 'jwt' as const, store: { knex: db.knex }, revocationCacheSeconds: 1 }
      mount({ session })
      // A second process of the same app: its own instance and listener on the same database and store.
      const other = await listen()
      mountAccountApp(other, db.knex, rig.smtp, { session })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const cookie = browser.cookie(url(), 'authjs.session-token')!
      const elsewhere = new Browser()
      elsewhere.setCookie(other.url, 'authjs.session-token', cookie)
      expect((await sessionOf(elsewhere, other.url))?.user.email).toBe('ada@example.com')
      expect((await post(browser, url(), 'account/delete', { confirm: 'yes' })).status).toBe(302)
      // The other process learns of it at its next poll of the store.
      jest.setSystemTime(T0 + 1_500)
      expect(await sessionOf(elsewhere, other.url)).toBeNull()
      // And a copy of the cookie is refused where it was deleted too.
      const copy = new Browser()
      copy.setCookie(url(), 'authjs.session-token', cookie)
      expect(await sessionOf(copy, url())).toBeNull()
    })
  }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `deleting an account on ${kind}`, deleteSuite(kind))
}
