/**
 * A user is found by e-mail address only when the stored address is the one signing in, letter case
 * aside (sign-in/users.ts). An adapter's lookup may match more loosely: a hand-written
 * `getUserByEmail` doing `where email = ?` on MariaDB/MySQL, whose default collations ignore case
 * and accents, finds `ada@example.com` for `ada@exàmple.com`, an address at another domain that
 * anyone can register. Neither an OAuth sign-in nor an e-mail link for that address may then land
 * in, or link to, Ada's account.
 *
 * On SQLite and PostgreSQL the loose lookup is written out (accents and case folded, as a collation
 * would); the look-alike then gets a user of its own. On MariaDB it is the server's own collation:
 * there the User table's unique e-mail index, under the same collation, also holds the look-alike
 * address taken, so the sign-in is refused (AdapterError) instead; either way Ada's account is
 * neither entered nor linked.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals'
import type { Adapter } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, signInWith, type Listener } from '../support/oauth-app.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { mountEmailApp, requestLink } from '../email/email-app.js'

const VICTIM = 'ada@example.com'
/** Another domain (`exàmple.com`), equal to the victim's address under MariaDB's default collation. */
const LOOK_ALIKE = 'ada@exàmple.com'

let idp: TestIdp
let smtp: TestSmtpServer
let app: Listener

beforeAll(async () => {
  app = await listen()
  smtp = await startSmtpServer()
  // The IdP's `mallory` has an address at the look-alike domain (upper case, as some providers send it).
  idp = await startIdp({
    clients: [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [app.callbackUrl('corp')] }],
    claims: (login) => (login === 'mallory' ? { email: LOOK_ALIKE.toUpperCase(), name: 'Mallory' } : {}),
  })
})
afterAll(async () => {
  await closeListeners()
  await smtp?.close()
  await idp?.close()
})

const LABELS: Record<DatabaseKind, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL', mariadb: 'MariaDB' }

/** Accents and letter case folded, as a case- and accent-insensitive collation compares. */
const fold = (address: string) => address.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `a getUserByEmail that matches loosely (${LABELS[kind]}${kind === 'mariadb' ? ', its collation' : ', folded by the adapter'})`, (server) => {
    const db = migratedDatabase(server)
    let victimId: string

    /** The Knex adapter with a lookup an app might write by hand. */
    function looseAdapter(): Adapter {
      const adapter = KnexAdapter(db.knex)
      return {
        ...adapter,
        async getUserByEmail(email) {
          // MariaDB: `where email = ?`, the collation deciding. Elsewhere: the same comparison, spelled out.
          const rows = (await (kind === 'mariadb' ? db.knex('User').select('id', 'email').where({ email }) : db.knex('User').select('id', 'email'))) as { id: string; email: string | null }[]
          const row = rows.find((candidate) => candidate.email !== null && fold(candidate.email) === fold(email))
          return row ? adapter.getUser!(row.id) : null
        },
      }
    }

    const corp = (allowDangerousEmailAccountLinking: boolean) =>
      OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true, allowDangerousEmailAccountLinking })

    beforeEach(async () => {
      victimId = crypto.randomUUID()
      await KnexAdapter(db.knex).createUser({ id: victimId, name: 'Ada Lovelace', email: VICTIM, emailVerified: null })
    })

    /** Ada's row is as before: same address, still unverified, no account linked to it, no session. */
    async function expectVictimUntouched() {
      const victim = await db.knex('User').where({ id: victimId }).first()
      expect({ email: victim.email, emailVerified: victim.emailVerified }).toEqual({ email: VICTIM, emailVerified: null })
      expect(await db.knex('Account').where({ userId: victimId })).toEqual([])
      expect(await db.knex('Session').where({ userId: victimId })).toEqual([])
    }

    /** The callback's outcome: a user of the look-alike's own, or (MariaDB) a refusal; never Ada. */
    async function expectOwnUserOrRefused(browser: Browser, callback: Response) {
      const session = await sessionOf(browser, app.url)
      if (kind === 'mariadb') {
        expect(redirectOf(callback)).toMatchObject({ error: 'AdapterError' })
        expect(session).toBeNull()
      } else {
        expect(redirectOf(callback)).toMatchObject({ error: null })
        expect(session?.user?.email).toBe(LOOK_ALIKE)
        expect(session?.user?.id).not.toBe(victimId)
      }
      await expectVictimUntouched()
      return session
    }

    it('the lookup does match the two addresses (the premise of the attack)', async () => {
      expect(await looseAdapter().getUserByEmail!(LOOK_ALIKE)).toMatchObject({ id: victimId, email: VICTIM })
    })

    it.each([
      ['with allowDangerousEmailAccountLinking', true],
      ['without it', false],
    ])('an OAuth sign-in with the look-alike address %s neither enters nor links Ada’s account', async (_label, dangerous) => {
      mountApp(app, { providers: [corp(dangerous)], adapter: looseAdapter() })
      const browser = new Browser()
      const session = await expectOwnUserOrRefused(browser, await signInWith(browser, app.url, 'corp', 'mallory'))
      if (session) {
        const account = await db.knex('Account').where({ provider: 'corp', providerAccountId: 'mallory' }).first()
        expect(account.userId).toBe(session.user?.id)
      }
    })

    it('an e-mail link for the look-alike address neither signs in as Ada nor marks her address verified', async () => {
      mountEmailApp(app, db.knex, smtp, { adapter: looseAdapter() })
      const asking = new Browser()
      await requestLink(asking, app.url, LOOK_ALIKE)
      const mail = await smtp.nextMessage()
      expect(mail.to).toEqual([LOOK_ALIKE])
      // Opened in the browser that asked for it: it signs in at once, as the look-alike's owner would.
      await expectOwnUserOrRefused(asking, await asking.request(linkOf(mail)))
    })
  })
}
