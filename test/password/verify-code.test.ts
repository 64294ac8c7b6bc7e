/**
 * Verifying a password sign-up by a mailed code (`Password({ verifyBy })`), with real parts: SMTP for
 * the mails, SQLite, PostgreSQL and MariaDB for the rows. The code, typed on the page the sign-up
 * goes to, verifies the address and signs in as the link does. The attacks: five wrong codes then
 * the right one, the code typed in another browser, for another address, twice, late, a taken
 * address's sign-up (which gets no code), without the CSRF token.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import type { Knex } from 'knex'
import type { PasswordOptions } from 'portcullis/providers/password'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { freezeClock } from '../two-factor/two-factor-app.js'
import { Browser, mountPasswordApp, post, signUp, verifiedUser } from './password-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 27, 12, 0, 0)

afterEach(() => {
  jest.useRealTimers()
})

const verifiedOf = async (knex: Knex, email: string) => (await knex('User').where({ email }).first())?.emailVerified ?? null

/** The next mail to `to`: its subject, the code in it and its links. */
async function mailTo(to: string): Promise<{ subject: string; code: string | undefined; links: string[] }> {
  for (;;) {
    const mail = await rig.smtp.nextMessage()
    if (!mail.to.includes(to)) continue
    const text = mail.parsed.text ?? ''
    return { subject: mail.parsed.subject ?? '', code: /: (\d{6})\./.exec(text)?.[1], links: text.match(/https?:\/\/\S+/g) ?? [] }
  }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `verifying a sign-up by code on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    const mount = (verifyBy: PasswordOptions['verifyBy'] = 'both', config: Parameters<typeof mountPasswordApp>[3] = {}) =>
      mountPasswordApp(rig.app, db.knex, rig.smtp, config, { verifyBy, requireEmailVerification: true })
    const typeCode = (browser: Browser, email: string, code: string) => post(browser, url(), 'verify-email/code', { email, code, callbackUrl: `${url()}/dashboard` })

    /** Signs up `email` in `browser`: the code page it lands on, and the mail's code and links. */
    async function signedUp(browser: Browser, email = 'ada@example.com'): Promise<{ code: string; links: string[] }> {
      const answer = await signUp(browser, url(), email, undefined, { callbackUrl: `${url()}/dashboard` })
      expect(answer.status).toBe(302)
      const page = new URL(answer.headers.get('location')!)
      expect(page.pathname).toBe('/api/auth/verify-email/code')
      expect(await (await browser.request(page.href)).text()).toContain('name="code"')
      const mail = await mailTo(email)
      expect(mail.code).toMatch(/^\d{6}$/)
      expect(mail.subject).not.toContain(mail.code!)
      return { code: mail.code!, links: mail.links }
    }

    it('mails a code beside the link; typed in the browser that signed up, it verifies the address and signs in', async () => {
      freezeClock(T0)
      mount('both')
      const browser = new Browser()
      const { code, links } = await signedUp(browser)
      expect(links.some((link) => link.startsWith(`${url()}/api/auth/verify-email?`))).toBe(true)
      expect(JSON.stringify(await db.knex('VerificationToken').select())).not.toContain(code)
      expect(await verifiedOf(db.knex, 'ada@example.com')).toBeNull()
      const done = await typeCode(browser, 'ada@example.com', code)
      expect(done.status).toBe(302)
      expect(done.headers.get('location')).toBe(`${url()}/dashboard`)
      expect(await verifiedOf(db.knex, 'ada@example.com')).not.toBeNull()
      expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')
    })

    it("'code' alone: the mail's link only leads to the code's page", async () => {
      freezeClock(T0)
      mount('code')
      const browser = new Browser()
      const { code, links } = await signedUp(browser)
      expect(links.filter((link) => new URL(link).pathname === '/api/auth/verify-email')).toEqual([])
      expect((await typeCode(browser, 'ada@example.com', code)).status).toBe(302)
      expect(await verifiedOf(db.knex, 'ada@example.com')).not.toBeNull()
    })

    it('five wrong codes void it: then even the right one is refused', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { code } = await signedUp(browser)
      const wrong = code === '000000' ? '111111' : '000000'
      for (let left = 4; left >= 1; left--) {
        const response = await typeCode(browser, 'ada@example.com', wrong)
        expect(response.status).toBe(400)
        expect(await response.text()).toContain(`${left === 1 ? '1 try' : `${left} tries`} left`)
      }
      expect(redirectOf(await typeCode(browser, 'ada@example.com', wrong)).error).toBe('Verification')
      expect(redirectOf(await typeCode(browser, 'ada@example.com', code)).error).toBe('Verification')
      expect(await verifiedOf(db.knex, 'ada@example.com')).toBeNull()
      expect(await sessionOf(browser, url())).toBeNull()
    })

    it('refuses the code in another browser, and for another address', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { code } = await signedUp(browser)
      expect(redirectOf(await typeCode(new Browser(), 'ada@example.com', code)).error).toBe('Verification')
      // Bob's sign-up in his browser: Ada's code is not his address's.
      const bob = new Browser()
      await signedUp(bob, 'bob@example.com')
      const other = await typeCode(bob, 'bob@example.com', code)
      expect(other.status).toBe(400)
      // Typed in Ada's browser under Bob's address (her cookie, her code): not Bob's code either.
      expect((await typeCode(browser, 'bob@example.com', code)).status).not.toBe(302)
      expect(await verifiedOf(db.knex, 'bob@example.com')).toBeNull()
      expect(await verifiedOf(db.knex, 'ada@example.com')).toBeNull()
    })

    it('refuses the code a second time, and once its fifteen minutes are over', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { code } = await signedUp(browser)
      expect((await typeCode(browser, 'ada@example.com', code)).status).toBe(302)
      expect(redirectOf(await typeCode(browser, 'ada@example.com', code)).error).toBe('Verification')

      const late = new Browser()
      const second = await signedUp(late, 'bob@example.com')
      jest.setSystemTime(T0 + 15 * 60_000 + 1000)
      expect(redirectOf(await typeCode(late, 'bob@example.com', second.code)).error).toBe('Verification')
      expect(await verifiedOf(db.knex, 'bob@example.com')).toBeNull()
    })

    it('a taken address answers the same (the code page, a cookie) and stores no code a guess could use', async () => {
      freezeClock(T0)
      mount()
      await verifiedUser(new Browser(), url(), rig.smtp, 'ada@example.com')
      const rowsBefore = Number((await db.knex('VerificationToken').count({ n: '*' }))[0]!.n)
      const mallory = new Browser()
      const answer = await signUp(mallory, url(), 'ada@example.com', 'another long passphrase', { callbackUrl: `${url()}/dashboard` })
      expect(new URL(answer.headers.get('location')!).pathname).toBe('/api/auth/verify-email/code')
      expect(answer.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.sign-up-code=code.'))).toBe(true)
      // The owner's notice carries no code; only the reset link's token was stored.
      expect((await mailTo('ada@example.com')).code).toBeUndefined()
      expect(Number((await db.knex('VerificationToken').count({ n: '*' }))[0]!.n)).toBe(rowsBefore + 1)
      expect(redirectOf(await typeCode(mallory, 'ada@example.com', '123456')).error).toBe('Verification')
      expect(await sessionOf(mallory, url())).toBeNull()
    })

    it('is rate-limited per address: past the limit even a try left is refused with 429', async () => {
      freezeClock(T0)
      mount('both', { rateLimit: { identifier: { attempts: 3, windowSeconds: 600 }, ip: { attempts: 100, windowSeconds: 600 } } })
      const browser = new Browser()
      const { code } = await signedUp(browser)
      const wrong = code === '000000' ? '111111' : '000000'
      for (let n = 0; n < 3; n++) expect((await typeCode(browser, 'ada@example.com', wrong)).status).toBe(400)
      expect((await typeCode(browser, 'ada@example.com', code)).status).toBe(429)
      expect(await verifiedOf(db.knex, 'ada@example.com')).toBeNull()
    })

    it('refuses a post without the CSRF token', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      const { code } = await signedUp(browser)
      const forged = await browser.request(`${url()}/api/auth/verify-email/code`, { body: new URLSearchParams({ email: 'ada@example.com', code }) })
      expect(redirectOf(forged).error).toBe('MissingCSRF')
      expect(await verifiedOf(db.knex, 'ada@example.com')).toBeNull()
    })
  })
}
