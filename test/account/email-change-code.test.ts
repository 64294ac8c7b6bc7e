/**
 * Changing the e-mail address by a mailed code (`account.emailChangeBy`), with real parts: SMTP
 * for the mails, SQLite, PostgreSQL and MariaDB for the rows. The code, typed on the account page in
 * the browser that asked, changes the address as the link does. The attacks: five wrong codes then
 * the right one, the code typed in another browser (the same user's or another user's with the
 * cookie copied), for another address, twice, late, without the CSRF token.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import type { Knex } from 'knex'
import type { PortcullisConfig } from 'portcullis'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, freezeClock, mountAccountApp, post, signIn, verifiedUser } from './account-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 27, 12, 0, 0)

afterEach(() => {
  jest.useRealTimers()
})

const emailOf = async (knex: Knex, id: string) => (await knex('User').where({ id }).first())?.email as string | undefined
const idOf = async (knex: Knex, email: string) => String((await knex('User').where({ email }).first()).id)

/** The next mail to `to`: its subject, its text, the code in it and its links. */
async function mailTo(to: string): Promise<{ subject: string; text: string; code: string | undefined; links: string[] }> {
  for (;;) {
    const mail = await rig.smtp.nextMessage()
    if (!mail.to.includes(to)) continue
    const text = mail.parsed.text ?? ''
    return { subject: mail.parsed.subject ?? '', text, code: /: (\d{6})\./.exec(text)?.[1], links: text.match(/https?:\/\/\S+/g) ?? [] }
  }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `changing the e-mail address by code on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    const mount = (emailChangeBy: 'code' | 'both' = 'both', config: Partial<PortcullisConfig> = {}) =>
      mountAccountApp(rig.app, db.knex, rig.smtp, { account: { server: rig.smtp.url, from: 'Portcullis tests <auth@example.test>', emailChangeBy }, ...config })
    const typeCode = (browser: Browser, email: string, code: string) => post(browser, url(), 'account/email/code', { email, code })

    /** Ada signed in in `browser`, who asked to move to `to`: her id and the mail's code. */
    async function asked(browser: Browser, to = 'ada@new.example'): Promise<{ id: string; code: string; links: string[] }> {
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const page = await post(browser, url(), 'account/email', { email: to })
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('name="code"')
      const mail = await mailTo(to.toLowerCase())
      expect(mail.code).toMatch(/^\d{6}$/)
      // Lock screens show subjects: the code is not in it.
      expect(mail.subject).not.toContain(mail.code!)
      return { id: await idOf(db.knex, 'ada@example.com'), code: mail.code!, links: mail.links }
    }

    it('mails a code beside the link; typed in the browser that asked, it changes the address, stored only as a hash', async () => {
      freezeClock(T0)
      mount('both')
      const browser = new Browser()
      const { id, code, links } = await asked(browser)
      expect(links.some((link) => link.startsWith(`${url()}/api/auth/account/email/verify?`))).toBe(true)
      expect(JSON.stringify(await db.knex('VerificationToken').select())).not.toContain(code)
      const done = await typeCode(browser, 'ada@new.example', code)
      expect(done.status).toBe(200)
      expect(await done.text()).toContain('Your address is ada@new.example now.')
      expect(done.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.email-change-code=;'))).toBe(true)
      expect(await emailOf(db.knex, id)).toBe('ada@new.example')
      expect((await db.knex('User').where({ id }).first()).emailVerified).not.toBeNull()
      expect((await sessionOf(browser, url()))?.user.email).toBe('ada@new.example')
      // The old address is told, as after a link.
      expect((await mailTo('ada@example.com')).subject).toContain('was changed')
    })

    it("'code' alone: the mail has no link that changes anything, the code does", async () => {
      freezeClock(T0)
      mount('code')
      const browser = new Browser()
      const { id, code, links } = await asked(browser)
      expect(links.filter((link) => link.includes('/account/email/verify'))).toEqual([])
      expect((await typeCode(browser, 'ada@new.example', code)).status).toBe(200)
      expect(await emailOf(db.knex, id)).toBe('ada@new.example')
    })

    it('five wrong codes void it: then even the right one is refused', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { id, code } = await asked(browser)
      const wrong = code === '000000' ? '111111' : '000000'
      for (let left = 4; left >= 1; left--) {
        const response = await typeCode(browser, 'ada@new.example', wrong)
        expect(response.status).toBe(400)
        expect(await response.text()).toContain(`${left === 1 ? '1 try' : `${left} tries`} left`)
      }
      expect(await (await typeCode(browser, 'ada@new.example', wrong)).text()).toContain('This code was used already')
      const right = await typeCode(browser, 'ada@new.example', code)
      expect(right.status).toBe(400)
      expect(await right.text()).toContain('This code was used already')
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
    })

    it('refuses the code typed in another browser, the same user’s or another user’s holding a copy of the cookie', async () => {
      freezeClock(T0)
      mount()
      const laptop = new Browser()
      const { id, code } = await asked(laptop)
      // Ada's phone, signed in too, never asked: it holds no code cookie.
      const phone = new Browser()
      await signIn(phone, url(), 'ada@example.com')
      expect((await typeCode(phone, 'ada@new.example', code)).status).toBe(400)
      // Mallory, signed in, with Ada's code and a copy of her code cookie: the code is Ada's.
      const mallory = new Browser()
      await verifiedUser(mallory, url(), rig.smtp, 'mallory@example.com')
      mallory.setCookie(url(), 'authjs.email-change-code', laptop.cookie(url(), 'authjs.email-change-code')!)
      expect((await typeCode(mallory, 'ada@new.example', code)).status).toBe(400)
      expect(await emailOf(db.knex, await idOf(db.knex, 'mallory@example.com'))).toBe('mallory@example.com')
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
      // Mallory's try counted as a wrong one of the five: the right code still works for Ada, once.
      expect((await typeCode(laptop, 'ada@new.example', code)).status).toBe(200)
      expect(await emailOf(db.knex, id)).toBe('ada@new.example')
    })

    it('refuses the code for another address than the one it was mailed to', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { id, code } = await asked(browser, 'ada@new.example')
      expect((await typeCode(browser, 'mallory@evil.example', code)).status).toBe(400)
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
      expect(await db.knex('User').where({ email: 'mallory@evil.example' }).first()).toBeUndefined()
    })

    it('refuses the code a second time, and once its fifteen minutes are over', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { id, code } = await asked(browser)
      expect((await typeCode(browser, 'ada@new.example', code)).status).toBe(200)
      // The address back by hand; the used code does not move it again.
      await db.knex('User').where({ id }).update({ email: 'ada@example.com' })
      expect((await typeCode(browser, 'ada@new.example', code)).status).toBe(400)
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')

      const late = new Browser()
      const second = await (async () => {
        await signIn(late, url(), 'ada@example.com')
        expect((await post(late, url(), 'account/email', { email: 'ada@later.example' })).status).toBe(200)
        return (await mailTo('ada@later.example')).code!
      })()
      jest.setSystemTime(T0 + 15 * 60_000 + 1000)
      // Past the recent sign-in's ten minutes too: the code route asks for none, the code's own time refuses.
      const refused = await typeCode(late, 'ada@later.example', second)
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain('has expired')
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
    })

    it('is rate-limited per address: past the limit even a try left is refused with 429', async () => {
      freezeClock(T0)
      mount('both', { rateLimit: { identifier: { attempts: 3, windowSeconds: 600 }, ip: { attempts: 100, windowSeconds: 600 } } })
      const browser = new Browser()
      const { id, code } = await asked(browser)
      const wrong = code === '000000' ? '111111' : '000000'
      for (let n = 0; n < 3; n++) expect((await typeCode(browser, 'ada@new.example', wrong)).status).toBe(400)
      expect((await typeCode(browser, 'ada@new.example', code)).status).toBe(429)
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
    })

    it('refuses a post without the CSRF token, and a signed-out one', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { id, code } = await asked(browser)
      const forged = await browser.request(`${url()}/api/auth/account/email/code`, { body: new URLSearchParams({ email: 'ada@new.example', code }) })
      expect(redirectOf(forged).error).toBe('MissingCSRF')
      const stranger = new Browser()
      stranger.setCookie(url(), 'authjs.email-change-code', browser.cookie(url(), 'authjs.email-change-code')!)
      const signedOut = await post(stranger, url(), 'account/email/code', { email: 'ada@new.example', code })
      expect(signedOut.status).toBe(302)
      expect(signedOut.headers.get('location')).toContain('/api/auth/signin')
      expect(await emailOf(db.knex, id)).toBe('ada@example.com')
    })
  })
}
