/**
 * A fresh sign-in before sensitive actions: the session records when and how it was last confirmed
 * (database sessions in the row, JWT sessions in the token), `requireRecentSignIn` and its
 * middleware judge it, and the confirmation page renews it by password or second-factor code. Real
 * SMTP, SQLite (database sessions) and JWT sessions with a store; the clock frozen, never slept.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import { RecentSignInRequiredError } from 'portcullis'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { codeAt, enrol } from '../two-factor/two-factor-app.js'
import type { AuthApp } from '../support/app-rig.js'
import { Browser, freezeClock, mountAccountApp, post, STALE_MS, verifiedUser, GOOD_PASSWORD } from './account-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 20, 12, 0, 0)

afterEach(() => {
  jest.useRealTimers()
})

for (const strategy of ['database', 'jwt'] as const) {
  await describeWithDatabase('sqlite', `a fresh sign-in, ${strategy} sessions`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    let auth: AuthApp
    const mount = (config: Parameters<typeof mountAccountApp>[3] = {}) => {
      auth = mountAccountApp(rig.app, db.knex, rig.smtp, { session: strategy === 'jwt' ? { strategy: 'jwt', store: 'memory' } : { strategy: 'database' }, ...config })
      // The app's own sensitive routes: the function, and the middleware.
      auth.app.get('/payout', async (req, res) => void res.json(await auth.requireRecentSignIn(req, { returnTo: '/payout' })))
      auth.app.get('/billing', auth.requireRecentSignIn({ maxAge: 60 }), (_req, res) => void res.send('billing'))
      return auth
    }
    const payout = async (browser: Browser) => (await browser.request(`${url()}/payout`)).json() as Promise<{ recent: boolean; url?: string; confirmedWith?: string; userId?: string }>

    it('records the sign-in as the first confirmation, and lets a recent one through', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      if (strategy === 'database') {
        const [row] = await db.knex('Session').select('confirmedAt', 'confirmedWith')
        expect(new Date(Number(row.confirmedAt)).getTime()).toBe(T0)
        // The verification link is an e-mail proof of the password provider's.
        expect(row.confirmedWith).toBe('password')
      }
      expect(await payout(browser)).toMatchObject({ recent: true, confirmedWith: 'password' })
      expect((await browser.request(`${url()}/billing`)).status).toBe(200)
    })

    it('sends a stale session to confirm (browsers a redirect, JSON clients a 403), and a signed-out one to sign in', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const answer = await payout(browser)
      expect(answer).toEqual({ recent: false, signedIn: true, url: `${url()}/api/auth/account/confirm?callbackUrl=%2Fpayout` })
      const billing = await browser.request(`${url()}/billing`)
      expect(billing.status).toBe(302)
      expect(billing.headers.get('location')).toBe(`${url()}/api/auth/account/confirm?callbackUrl=%2Fbilling`)
      const json = await browser.request(`${url()}/billing`, { headers: { accept: 'application/json' } })
      expect(json.status).toBe(403)
      expect(await json.json()).toMatchObject({ error: 'RecentSignInRequired' })
      // Still signed in: staleness asks for a confirmation, it does not sign anyone out.
      expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')
      const nobody = await new Browser().request(`${url()}/billing`, { headers: { accept: 'application/json' } })
      expect(nobody.status).toBe(401)
    })

    it('confirms by password on the confirmation page and goes back; a wrong password confirms nothing', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const page = await browser.request(`${url()}/api/auth/account/confirm?callbackUrl=%2Fpayout`)
      expect(page.status).toBe(200)
      const text = await page.text()
      expect(text).toContain('name="password"')
      expect(text).not.toContain('name="code"')
      const wrong = await post(browser, url(), 'account/confirm', { method: 'password', password: 'not my password at all', callbackUrl: '/payout' })
      expect(wrong.status).toBe(400)
      expect(await wrong.text()).toContain('That password is not right.')
      expect((await payout(browser)).recent).toBe(false)
      const right = await post(browser, url(), 'account/confirm', { method: 'password', password: GOOD_PASSWORD, callbackUrl: '/payout' })
      expect(right.status).toBe(302)
      expect(right.headers.get('location')).toBe(`${url()}/payout`)
      expect(await payout(browser)).toMatchObject({ recent: true, confirmedWith: 'password' })
      // Good for maxAge from the confirmation, then stale again.
      jest.setSystemTime(T0 + 2 * STALE_MS)
      expect((await payout(browser)).recent).toBe(false)
    })

    it('refuses a confirmation without the CSRF token, one for a method the account lacks, and a callbackUrl off the site', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const forged = await browser.request(`${url()}/api/auth/account/confirm`, { body: new URLSearchParams({ method: 'password', password: GOOD_PASSWORD }) })
      expect(redirectOf(forged).error).toBe('MissingCSRF')
      expect((await payout(browser)).recent).toBe(false)
      const noFactor = await post(browser, url(), 'account/confirm', { method: 'two-factor', code: '123456' })
      expect(noFactor.status).toBe(400)
      expect((await payout(browser)).recent).toBe(false)
      const away = await post(browser, url(), 'account/confirm', { method: 'password', password: GOOD_PASSWORD, callbackUrl: 'https://evil.example/steal' })
      expect(away.headers.get('location')).toBe(`${url()}/`)
    })

    it('confirms by a second-factor code when the user has one, each code once', async () => {
      freezeClock(T0)
      mount({ twoFactor: { issuer: 'Portcullis tests' } })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const { secret } = await enrol(browser, url(), T0)
      const later = T0 + STALE_MS
      jest.setSystemTime(later)
      const text = await (await browser.request(`${url()}/api/auth/account/confirm`)).text()
      expect(text).toContain('name="code"')
      const code = codeAt(secret, later)
      const confirmed = await post(browser, url(), 'account/confirm', { method: 'two-factor', code, callbackUrl: '/payout' })
      expect(confirmed.status).toBe(302)
      expect(await payout(browser)).toMatchObject({ recent: true, confirmedWith: 'two-factor' })
      // The same code again, later, from a stale session: refused (used), still stale.
      jest.setSystemTime(later + STALE_MS)
      const again = await post(browser, url(), 'account/confirm', { method: 'two-factor', code, callbackUrl: '/payout' })
      expect(again.status).toBe(400)
      expect((await payout(browser)).recent).toBe(false)
    })

    it('keeps the session read as it was: no confirmation is asked of the adapter on a read', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const spy = jest.spyOn(db.knex.client, 'query')
      try {
        expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')
        const sql = spy.mock.calls.map((call) => JSON.stringify(call[1]))
        // Database sessions: the one read query (the spy sees it), which selects nothing of the record.
        // JWT sessions (memory store): no query at all.
        expect(sql.length).toBe(strategy === 'database' ? 1 : 0)
        expect(sql.filter((text) => text.includes('confirmed'))).toEqual([])
      } finally {
        spy.mockRestore()
      }
    })

    it('deleteAccount() refuses a stale session with RecentSignInRequiredError', async () => {
      freezeClock(T0)
      mount()
      auth.app.post('/delete', async (req, res) => {
        try {
          await auth.deleteAccount({ req, res }, { skipCsrfCheck: true })
          res.send('deleted')
        } catch (error) {
          res.status(403).send(error instanceof RecentSignInRequiredError ? `stale ${error.maxAge}` : String(error))
        }
      })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const refused = await browser.request(`${url()}/delete`, { method: 'POST' })
      expect(refused.status).toBe(403)
      expect(await refused.text()).toBe('stale 600')
      expect(Number((await db.knex('User').count({ n: '*' }))[0]!.n)).toBe(1)
    })
  })
}
