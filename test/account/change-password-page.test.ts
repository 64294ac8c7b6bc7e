/**
 * The built-in change-password page (GET/POST /api/auth/change-password), linked from the account
 * page: the current password and a new one; the other sessions end, this one stays; a wrong current
 * password, a weak new one, a missing CSRF token, a signed-out visitor and a stale session change
 * nothing. Real SMTP, SQLite, database and JWT sessions; the clock frozen, never slept.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import Password from 'portcullis/providers/password'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { listen, type Listener } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { FAST_HASHING, FROM } from '../password/password-app.js'
import { Browser, csrfOf, freezeClock, GOOD_PASSWORD, mountAccountApp, post, signIn, STALE_MS, verifiedUser } from './account-app.js'

const rig = useEmailRig()
const T0 = Date.UTC(2026, 11, 21, 12, 0, 0)
const NEW_PASSWORD = 'a brand new passphrase of mine'

afterEach(() => {
  jest.useRealTimers()
})

for (const strategy of ['database', 'jwt'] as const) {
  await describeWithDatabase('sqlite', `the change-password page, ${strategy} sessions`, (server) => {
    const db = migratedDatabase(server)
    let local: Listener
    const url = () => local.url
    const page = () => `${url()}/api/auth/change-password`

    const mount = async () => {
      local = await listen('127.0.0.1')
      mountAccountApp(local, db.knex, rig.smtp, {
        session: strategy === 'jwt' ? { strategy: 'jwt', store: 'memory' } : { strategy: 'database' },
        providers: [Password({ server: rig.smtp.url, from: FROM, hashing: FAST_HASHING })],
        rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
      })
    }
    afterEach(async () => {
      await local?.close()
    })
    const signedInAs = async (browser: Browser) => ((await (await browser.request(`${url()}/api/auth/session`)).json()) as { user?: { email: string } } | null)?.user?.email
    const signsIn = async (password: string) => {
      const answer = await signIn(new Browser(), url(), 'ada@example.com', password)
      return new URL(answer.headers.get('location')!).searchParams.get('error') === null
    }

    it('is linked from the account page, changes the password with the current one, ends the other sessions and keeps this one', async () => {
      freezeClock(T0)
      await mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const other = new Browser()
      await signIn(other, url(), 'ada@example.com', GOOD_PASSWORD)
      expect(await signedInAs(other)).toBe('ada@example.com')

      const account = await (await browser.request(`${url()}/api/auth/account`)).text()
      expect(account).toContain(`href="/api/auth/change-password"`)
      const form = await browser.request(page())
      expect(form.status).toBe(200)
      const html = await form.text()
      expect(html).toContain('name="currentPassword"')
      expect(html).toContain('autocomplete="new-password"')

      const changed = await post(browser, url(), 'change-password', { currentPassword: GOOD_PASSWORD, password: NEW_PASSWORD })
      expect(changed.status).toBe(302)
      expect(changed.headers.get('location')).toBe(`${page()}?changed=1`)
      expect(await (await browser.request(changed.headers.get('location')!)).text()).toContain('Your password was changed')
      expect(await signedInAs(browser)).toBe('ada@example.com')
      expect(await signedInAs(other)).toBeUndefined()
      expect(await signsIn(NEW_PASSWORD)).toBe(true)
      expect(await signsIn(GOOD_PASSWORD)).toBe(false)
    })

    it('refuses a wrong current password and a weak new one on the page, the password unchanged', async () => {
      freezeClock(T0)
      await mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const wrong = await post(browser, url(), 'change-password', { currentPassword: 'not my password at all', password: NEW_PASSWORD })
      expect(wrong.status).toBe(400)
      const wrongHtml = await wrong.text()
      expect(wrongHtml).toContain('The current password is wrong.')
      expect(wrongHtml).not.toContain('not my password at all')
      const weak = await post(browser, url(), 'change-password', { currentPassword: GOOD_PASSWORD, password: 'short' })
      expect(weak.status).toBe(400)
      expect(await signsIn(GOOD_PASSWORD)).toBe(true)
      expect(await signsIn('short')).toBe(false)
    })

    it('refuses a post without the CSRF token, a signed-out visitor and a stale session', async () => {
      freezeClock(T0)
      await mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      // No token, or a valid one from another site: a cross-site form cannot change the password.
      const fields = { currentPassword: GOOD_PASSWORD, password: NEW_PASSWORD }
      const forged = await browser.request(page(), { body: new URLSearchParams(fields) })
      expect(new URL(forged.headers.get('location')!).searchParams.get('error')).toBe('MissingCSRF')
      const token = await csrfOf(browser, url())
      const crossSite = await browser.request(page(), { body: new URLSearchParams({ ...fields, csrfToken: token }), headers: { 'sec-fetch-site': 'cross-site' } })
      expect(new URL(crossSite.headers.get('location')!).searchParams.get('error')).toBe('MissingCSRF')
      expect(await signsIn(NEW_PASSWORD)).toBe(false)

      const visitor = new Browser()
      const asked = await visitor.request(page())
      expect(asked.status).toBe(302)
      expect(asked.headers.get('location')).toContain('/api/auth/signin?callbackUrl=')
      const posted = await post(visitor, url(), 'change-password', { currentPassword: GOOD_PASSWORD, password: NEW_PASSWORD })
      expect(posted.status).toBe(302)
      expect(posted.headers.get('location')).toContain('/api/auth/signin?callbackUrl=')

      jest.setSystemTime(T0 + STALE_MS)
      const confirm = `${url()}/api/auth/account/confirm?${new URLSearchParams({ callbackUrl: page() })}`
      const stalePage = await browser.request(page())
      expect(stalePage.status).toBe(302)
      expect(stalePage.headers.get('location')).toBe(confirm)
      const stalePost = await post(browser, url(), 'change-password', { currentPassword: GOOD_PASSWORD, password: NEW_PASSWORD })
      expect(stalePost.status).toBe(302)
      expect(stalePost.headers.get('location')).toBe(confirm)
      expect(await signsIn(NEW_PASSWORD)).toBe(false)
      expect(await signsIn(GOOD_PASSWORD)).toBe(true)
    })

    it('offers a user without a password the mailed link that sets one', async () => {
      freezeClock(T0)
      await mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const user = (await db.knex('User').first('id')) as { id: string }
      await db.knex('Password').where({ userId: user.id }).delete()
      const html = await (await browser.request(page())).text()
      expect(html).toContain('You have no password yet')
      expect(html).toContain('href="http://')
      expect(html).not.toContain('name="currentPassword"')
    })
  })
}
