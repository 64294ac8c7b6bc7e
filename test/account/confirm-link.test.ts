/**
 * Confirming by a mailed link, for users who sign in by e-mail and have nothing to type: the
 * confirmation page's "Send me a link" (CSRF-checked, three per fifteen minutes per user), whose link
 * renews the confirmation only in the browser that asked, with the same user signed in, once, within
 * fifteen minutes; anywhere else it uses nothing up. Real SMTP, SQLite (database and JWT sessions),
 * PostgreSQL and MariaDB;
 * the clock frozen, never slept.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import Nodemailer from 'portcullis/providers/nodemailer'
import Password from 'portcullis/providers/password'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { redirectOf } from '../support/oauth-app.js'
import { linkOf } from '../support/smtp.js'
import { followLink, mailedLink, useEmailRig } from '../email/email-app.js'
import type { AuthApp } from '../support/app-rig.js'
import { Browser, freezeClock, mountAccountApp, post, STALE_MS, verifiedUser } from './account-app.js'
import { FAST_HASHING, FROM } from '../password/password-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 22, 12, 0, 0)
const LINK = 'authjs.email-link'

afterEach(() => {
  jest.useRealTimers()
})

// SQLite with both strategies; PostgreSQL and MariaDB, whose token rows and dates the link relies on, with database sessions.
const RUNS = [['sqlite', 'database'], ['sqlite', 'jwt'], ['postgres', 'database'], ['mariadb', 'database']] as const

for (const [kind, strategy] of RUNS) {
  await describeWithDatabase(kind, `confirming by a mailed link, ${kind}, ${strategy} sessions`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    let auth: AuthApp
    const mount = (options: { password?: true } = {}) => {
      auth = mountAccountApp(rig.app, db.knex, rig.smtp, {
        session: strategy === 'jwt' ? { strategy: 'jwt', store: 'memory' } : { strategy: 'database' },
        providers: [options.password ? Password({ server: rig.smtp.url, from: FROM, hashing: FAST_HASHING }) : Nodemailer({ server: rig.smtp.url, from: FROM })],
      })
      auth.app.get('/payout', async (req, res) => void res.json(await auth.requireRecentSignIn(req, { returnTo: '/payout' })))
      return auth
    }
    const check = async (browser: Browser) => (await (await browser.request(`${url()}/payout`)).json()) as { recent: boolean; confirmedWith?: string }
    const payout = async (browser: Browser) => (await check(browser)).recent
    /** A browser signed in by e-mail link as `email`, its session stale. */
    const staleUser = async (email: string) => {
      const browser = new Browser()
      expect((await followLink(browser, await mailedLink(rig, browser, email))).status).toBe(302)
      return browser
    }
    /** Asks for a confirmation link in `browser`; the link mailed. */
    const askLink = async (browser: Browser) => {
      const sent = await post(browser, url(), 'account/confirm/email', { callbackUrl: '/payout' })
      expect(sent.status).toBe(200)
      expect(await sent.text()).toContain('Check your inbox')
      return linkOf(await rig.smtp.nextMessage())
    }
    const confirmTokens = async () => Number((await db.knex('VerificationToken').where('identifier', 'like', 'portcullis-confirm:%').count({ n: '*' }))[0]!.n)

    it('offers a user of e-mail sign-in a link, which confirms the browser that asked and goes back', async () => {
      freezeClock(T0)
      mount()
      const browser = await staleUser('ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      expect(await payout(browser)).toBe(false)
      const page = await (await browser.request(`${url()}/api/auth/account/confirm?callbackUrl=%2Fpayout`)).text()
      expect(page).toContain('Send me a link')
      expect(page).not.toContain('no way to confirm here')
      const link = await askLink(browser)
      expect(new URL(link).pathname).toBe('/api/auth/account/confirm/email')
      // Asking confirms nothing; nor does a HEAD of the link (it uses nothing up).
      expect(await payout(browser)).toBe(false)
      expect((await browser.request(link, { method: 'HEAD' })).headers.get('location')).toBeNull()
      expect(await confirmTokens()).toBe(1)
      const opened = await browser.request(link)
      expect(opened.status).toBe(302)
      expect(opened.headers.get('location')).toBe(`${url()}/payout`)
      expect(await check(browser)).toMatchObject({ recent: true, confirmedWith: 'email' })
      // Twice: refused (the token is used).
      jest.setSystemTime(T0 + 2 * STALE_MS)
      const again = await browser.request(link)
      expect(again.status).toBe(400)
      expect(await payout(browser)).toBe(false)
    })

    it('refuses the link in another browser of the same user and in another user\'s (nothing used up), and late', async () => {
      freezeClock(T0)
      mount()
      const browser = await staleUser('ada@example.com')
      const otherDevice = await staleUser('ada@example.com')
      const bob = await staleUser('bob@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const link = await askLink(browser)
      // The same user's other browser: it lacks the binding.
      expect((await otherDevice.request(link)).status).toBe(400)
      expect(await payout(otherDevice)).toBe(false)
      // Another user's browser, even holding the binding cookie: the token is the first user's.
      bob.setCookie(url(), LINK, browser.cookie(url(), LINK)!)
      expect((await bob.request(link)).status).toBe(400)
      expect(await payout(bob)).toBe(false)
      expect(await confirmTokens()).toBe(1)
      // The browser that asked: still good.
      expect((await browser.request(link)).status).toBe(302)
      expect(await payout(browser)).toBe(true)

      // Late: a link opened after fifteen minutes.
      jest.setSystemTime(T0 + 3 * STALE_MS)
      const late = await askLink(browser)
      jest.setSystemTime(T0 + 3 * STALE_MS + 15 * 60_000 + 1_000)
      expect((await browser.request(late)).status).toBe(400)
      expect(await payout(browser)).toBe(false)
    })

    it('sends a signed-out browser to sign in first, and back to the link', async () => {
      freezeClock(T0)
      mount()
      const browser = await staleUser('ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const link = await askLink(browser)
      const stranger = new Browser()
      stranger.setCookie(url(), LINK, browser.cookie(url(), LINK)!)
      const answer = await stranger.request(link)
      expect(answer.status).toBe(302)
      const signIn = new URL(answer.headers.get('location')!)
      expect(signIn.pathname).toBe('/api/auth/signin')
      expect(signIn.searchParams.get('callbackUrl')).toContain('/api/auth/account/confirm/email?token=')
      expect(await confirmTokens()).toBe(1)
    })

    it('refuses a request for a link without the CSRF token, and sends at most three in fifteen minutes', async () => {
      freezeClock(T0)
      mount()
      const browser = await staleUser('ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const forged = await browser.request(`${url()}/api/auth/account/confirm/email`, { body: new URLSearchParams({ callbackUrl: '/payout' }) })
      expect(redirectOf(forged).error).toBe('MissingCSRF')
      expect(await confirmTokens()).toBe(0)
      for (let i = 0; i < 3; i++) await askLink(browser)
      const fourth = await post(browser, url(), 'account/confirm/email', { callbackUrl: '/payout' })
      expect(fourth.status).toBe(429)
      expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(await confirmTokens()).toBe(3)
    })

    it('offers no link without e-mail sign-in (a password user types the password)', async () => {
      freezeClock(T0)
      mount({ password: true })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const page = await (await browser.request(`${url()}/api/auth/account/confirm`)).text()
      expect(page).toContain('name="password"')
      expect(page).not.toContain('Send me a link')
      const refused = await post(browser, url(), 'account/confirm/email', {})
      expect(refused.status).toBe(400)
      expect(await confirmTokens()).toBe(0)
    })
  })
}
