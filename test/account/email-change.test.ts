/**
 * Changing the e-mail address with real parts: SMTP for the three mails (the new address's link,
 * the old address's notice and undo link, a taken address's notice), SQLite, PostgreSQL and MariaDB
 * for the users, whose unique address decides a race. The attacks: an address that belongs to
 * another user, the link opened by another browser, twice, late; the undo after its window.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import type { Knex } from 'knex'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { barrier } from '../support/barrier.js'
import { KnexAdapter } from 'portcullis/adapters/knex'
import type { PortcullisConfig } from 'portcullis'
import { Browser, freezeClock, mountAccountApp, nextLink, post, signIn, STALE_MS, verifiedUser } from './account-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 20, 12, 0, 0)

afterEach(() => {
  jest.useRealTimers()
})

const emailOf = async (knex: Knex, id: string) => (await knex('User').where({ id }).first())?.email as string | undefined
const idOf = async (knex: Knex, email: string) => String((await knex('User').where({ email }).first()).id)

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `changing the e-mail address on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    const changed: { email: string | null | undefined; previousEmail: string | null }[] = []
    const mount = (config: Partial<PortcullisConfig> = {}) => {
      changed.length = 0
      return mountAccountApp(rig.app, db.knex, rig.smtp, { events: { emailChanged: ({ user, previousEmail }) => void changed.push({ email: user.email, previousEmail }) }, ...config })
    }

    it('mails the new address a link that changes it in the same signed-in browser, tells the old one, ends the other sessions', async () => {
      freezeClock(T0)
      mount()
      const laptop = new Browser()
      await verifiedUser(laptop, url(), rig.smtp, 'ada@example.com')
      const phone = new Browser()
      await signIn(phone, url(), 'ada@example.com')
      const id = await idOf(db.knex, 'ada@example.com')
      const asked = await post(laptop, url(), 'account/email', { email: 'Ada@New.example' })
      expect(asked.status).toBe(200)
      expect(await asked.text()).toContain('Check the inbox of the new address')
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
      const mail = await nextLink(rig.smtp, 'ada@new.example')
      expect(mail.link.startsWith(`${url()}/api/auth/account/email/verify?`)).toBe(true)
      // The token is stored hashed: the link's is nowhere in the table.
      const token = new URL(mail.link).searchParams.get('token')!
      expect(JSON.stringify(await db.knex('VerificationToken').select())).not.toContain(token)
      const done = await laptop.request(mail.link)
      expect(done.status).toBe(200)
      expect(await emailOf(db.knex, id)).toBe('ada@new.example')
      expect((await db.knex('User').where({ id }).first()).emailVerified).not.toBeNull()
      expect(changed).toEqual([{ email: 'ada@new.example', previousEmail: 'ada@example.com' }])
      expect((await sessionOf(laptop, url()))?.user.email).toBe('ada@new.example')
      expect(await sessionOf(phone, url())).toBeNull()
      const notice = await nextLink(rig.smtp, 'ada@example.com')
      expect(notice.subject).toContain('was changed')
      expect(notice.link.startsWith(`${url()}/api/auth/account/email/undo?`)).toBe(true)
      // Used once: the same link again changes nothing and says why.
      const again = await laptop.request(mail.link)
      expect(again.status).toBe(400)
    })

    it('answers an address of another user as any other, mails its owner, and changes nothing', async () => {
      mount()
      await verifiedUser(new Browser(), url(), rig.smtp, 'bob@example.com')
      const mallory = new Browser()
      await verifiedUser(mallory, url(), rig.smtp, 'mallory@example.com')
      const asked = await post(mallory, url(), 'account/email', { email: 'BOB@example.com' })
      expect(asked.status).toBe(200)
      expect(await asked.text()).toContain('Check the inbox of the new address')
      const mail = await nextLink(rig.smtp, 'bob@example.com')
      expect(mail.subject).toContain('Someone tried to move an account')
      expect(mail.link).toBe(`${url()}/api/auth/signin`)
      expect((await db.knex('User').select('email').orderBy('email')).map((row) => row.email)).toEqual(['bob@example.com', 'mallory@example.com'])
    })

    it('refuses the link in another browser (signed in as someone else, or not at all) and late, without using it up', async () => {
      freezeClock(T0)
      mount()
      const ada = new Browser()
      await verifiedUser(ada, url(), rig.smtp, 'ada@example.com')
      const eve = new Browser()
      await verifiedUser(eve, url(), rig.smtp, 'eve@example.com')
      await post(ada, url(), 'account/email', { email: 'ada@new.example' })
      const { link } = await nextLink(rig.smtp, 'ada@new.example')
      const stranger = await new Browser().request(link)
      expect(stranger.status).toBe(302)
      expect(stranger.headers.get('location')).toContain('/api/auth/signin?callbackUrl=')
      const other = await eve.request(link)
      expect(other.status).toBe(400)
      expect(await emailOf(db.knex, await idOf(db.knex, 'eve@example.com'))).toBe('eve@example.com')
      // Late: an hour and a second after it was mailed.
      jest.setSystemTime(T0 + 3_601_000)
      const late = await ada.request(link)
      expect(late.status).toBe(400)
      expect(await db.knex('User').where({ email: 'ada@new.example' }).first()).toBeUndefined()
    })

    it('undoes the change from the old address within its window, signing every device out; not after it', async () => {
      freezeClock(T0)
      mount()
      const ada = new Browser()
      await verifiedUser(ada, url(), rig.smtp, 'ada@example.com')
      const id = await idOf(db.knex, 'ada@example.com')
      const change = async (email: string) => {
        jest.setSystemTime(Date.now() + STALE_MS)
        // Each change after a fresh sign-in.
        await signIn(ada, url(), (await emailOf(db.knex, id))!)
        await post(ada, url(), 'account/email', { email })
        await ada.request((await nextLink(rig.smtp, email)).link)
        return (await nextLink(rig.smtp)).link
      }
      const undo = await change('taken-over@example.com')
      const page = await new Browser().request(undo)
      expect(page.status).toBe(200)
      // A mail scanner's GET undoes nothing: the page has a button.
      expect(await emailOf(db.knex, id)).toBe('taken-over@example.com')
      const owner = new Browser()
      const done = await owner.submitForm(await owner.request(undo))
      expect(done.status).toBe(200)
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
      expect(await sessionOf(ada, url())).toBeNull()
      // Twice: refused.
      expect((await owner.submitForm(await owner.request(undo))).status).toBe(400)
      // After the seven days: refused.
      const later = await change('second@example.com')
      jest.setSystemTime(Date.now() + 7 * 24 * 3600_000 + 1000)
      expect((await owner.submitForm(await owner.request(later))).status).toBe(400)
      expect(await emailOf(db.knex, id)).toBe('second@example.com')
    })

    it('changeEmail() mails the link from the app’s own route, CSRF-checked, and refuses a stale session', async () => {
      freezeClock(T0)
      const auth = mount()
      auth.app.post('/settings/email', async (req, res) => {
        try {
          await auth.changeEmail(req, { newEmail: 'api@new.example', skipCsrfCheck: req.headers['x-test-skip-csrf'] === '1' })
          res.send('sent')
        } catch (error) {
          res.status(403).send((error as { type?: string }).type)
        }
      })
      const ada = new Browser()
      await verifiedUser(ada, url(), rig.smtp, 'ada@example.com')
      expect(await (await ada.request(`${url()}/settings/email`, { method: 'POST' })).text()).toBe('MissingCSRF')
      expect(await (await ada.request(`${url()}/settings/email`, { method: 'POST', headers: { 'x-test-skip-csrf': '1' } })).text()).toBe('sent')
      await ada.request((await nextLink(rig.smtp, 'api@new.example')).link)
      expect(await db.knex('User').where({ email: 'api@new.example' }).count({ n: '*' }).then((rows) => Number(rows[0]!.n))).toBe(1)
      jest.setSystemTime(T0 + STALE_MS)
      expect(await (await ada.request(`${url()}/settings/email`, { method: 'POST', headers: { 'x-test-skip-csrf': '1' } })).text()).toBe('RecentSignInRequired')
    })

    it('asks a stale session to confirm first', async () => {
      freezeClock(T0)
      mount()
      const ada = new Browser()
      await verifiedUser(ada, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const stale = await post(ada, url(), 'account/email', { email: 'ada@new.example' })
      expect(stale.status).toBe(302)
      expect(stale.headers.get('location')).toContain('/api/auth/account/confirm?')
    })

    it('lets one of two users claiming one address at once win; the other is told it is taken', async () => {
      // Both links' updates held until both are about to write, past the check for a holder: the
      // database's unique key decides, and the loser's failed write is answered as a taken address.
      const adapter = KnexAdapter(db.knex)
      let held: (() => Promise<void>) | undefined
      mount({ adapter: { ...adapter, updateUser: async (user) => {
        if (held && user.email === 'wanted@example.com') await held()
        return adapter.updateUser(user)
      } } })
      const [one, two] = [new Browser(), new Browser()]
      await verifiedUser(one, url(), rig.smtp, 'one@example.com')
      await verifiedUser(two, url(), rig.smtp, 'two@example.com')
      await post(one, url(), 'account/email', { email: 'wanted@example.com' })
      const first = (await nextLink(rig.smtp, 'wanted@example.com')).link
      await post(two, url(), 'account/email', { email: 'wanted@example.com' })
      const second = (await nextLink(rig.smtp, 'wanted@example.com')).link
      held = barrier(2)
      const answers = await Promise.all([one.request(first), two.request(second)])
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400])
      const loser = answers.find((answer) => answer.status === 400)!
      expect(await loser.text()).toContain('That address is used by another account now.')
      expect(await db.knex('User').where({ email: 'wanted@example.com' }).count({ n: '*' }).then((rows) => Number(rows[0]!.n))).toBe(1)
    })
  })
}
