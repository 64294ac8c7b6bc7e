/**
 * The built-in sensitive actions ask a fresh sign-in when the `account` option is on: changing the
 * password (`changePassword()`), the second factor (enrolling, new recovery codes, turning it off:
 * the routes and the server functions) and the passkeys (adding, removing). For each, a stale session
 * is refused and nothing changes, and the same session, confirmed on the confirmation page, passes.
 * Without the option they run as before. Real SMTP, SQLite, database and JWT sessions; the clock
 * frozen, never slept.
 */
import { afterEach, beforeAll, expect, it, jest } from '@jest/globals'
import express from 'express'
import { RecentSignInRequiredError } from 'portcullis'
import Passkey from 'portcullis/providers/passkey'
import Password from 'portcullis/providers/password'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { listen, type Listener } from '../support/oauth-app.js'
import { SoftwareAuthenticator } from '../support/software-authenticator.js'
import { useEmailRig } from '../email/email-app.js'
import { FAST_HASHING, FROM } from '../password/password-app.js'
import { codeAt, enrol } from '../two-factor/two-factor-app.js'
import type { AuthApp } from '../support/app-rig.js'
import { Browser, freezeClock, GOOD_PASSWORD, mountAccountApp, post, signIn, STALE_MS, verifiedUser } from './account-app.js'

const rig = useEmailRig()
// Passkeys need a secure context: http://localhost (the server on 127.0.0.1), not an IP address.
let local: Listener
beforeAll(async () => {
  local = await listen('127.0.0.1', 'localhost')
})
const T0 = Date.UTC(2026, 11, 21, 12, 0, 0)
const NEW_PASSWORD = 'a brand new passphrase of mine'

afterEach(() => {
  jest.useRealTimers()
})

for (const strategy of ['database', 'jwt'] as const) {
  await describeWithDatabase('sqlite', `the built-in sensitive actions, ${strategy} sessions`, (server) => {
    const db = migratedDatabase(server)
    const url = () => local.url
    const confirmPage = (back: string) => `${url()}/api/auth/account/confirm?${new URLSearchParams({ callbackUrl: back })}`
    let auth: AuthApp

    /** The app: the password and passkey providers, the second factor, `account` on (unless `account: false`), and routes calling the server functions. */
    const mount = (options: { account?: false } = {}) => {
      auth = mountAccountApp(local, db.knex, rig.smtp, {
        session: strategy === 'jwt' ? { strategy: 'jwt', store: 'memory' } : { strategy: 'database' },
        providers: [Password({ server: rig.smtp.url, from: FROM, hashing: FAST_HASHING }), Passkey({ relayingParty: { origin: url(), name: 'Portcullis tests' } })],
        twoFactor: { issuer: 'Portcullis tests' },
        rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
        ...(options.account === false && { account: false }),
      })
      const call = (run: (req: express.Request, res: express.Response) => Promise<unknown>) => async (req: express.Request, res: express.Response) => {
        try {
          res.json({ done: (await run(req, res)) ?? true })
        } catch (error) {
          if (!(error instanceof RecentSignInRequiredError)) return void res.status(500).json({ error: String(error) })
          res.status(403).json({ stale: error.maxAge, url: error.url })
        }
      }
      auth.app.use(express.urlencoded({ extended: false }))
      auth.app.post('/settings/password', call((req, res) => auth.changePassword({ req, res }, { currentPassword: req.body.current, newPassword: req.body.next, skipCsrfCheck: true })))
      auth.app.post('/settings/two-factor/enrol', call((req) => auth.enrollTotp(req)))
      auth.app.post('/settings/two-factor/disable', call((req) => auth.disableTotp(req, { code: req.body.code, skipCsrfCheck: true })))
      auth.app.post('/settings/two-factor/codes', call((req) => auth.regenerateRecoveryCodes(req, { code: req.body.code, skipCsrfCheck: true })))
      auth.app.post('/settings/passkeys/remove', call((req) => auth.removePasskey(req, req.body.id, { skipCsrfCheck: true })))
      return auth
    }
    const userId = async () => ((await db.knex('User').first('id')) as { id: string }).id
    const confirmByPassword = async (browser: Browser, back: string) => {
      const confirmed = await post(browser, url(), 'account/confirm', { method: 'password', password: GOOD_PASSWORD, callbackUrl: back })
      expect(confirmed.status).toBe(302)
      expect(confirmed.headers.get('location')).toBe(back.startsWith('/') ? `${url()}${back}` : back)
    }
    const signsIn = async (email: string, password: string) => {
      const other = new Browser()
      const answer = await signIn(other, url(), email, password)
      return new URL(answer.headers.get('location')!).searchParams.get('error') === null
    }

    it('changePassword() refuses a stale session, the password unchanged, and changes it once the session is confirmed', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const fields = new URLSearchParams({ current: GOOD_PASSWORD, next: NEW_PASSWORD })
      const stale = await browser.request(`${url()}/settings/password`, { body: fields, headers: { referer: `${url()}/settings?tab=security` } })
      expect(stale.status).toBe(403)
      // The error's url: the confirmation page, back to the page the form was on.
      expect(await stale.json()).toEqual({ stale: 600, url: confirmPage('/settings?tab=security') })
      expect(await signsIn('ada@example.com', GOOD_PASSWORD)).toBe(true)
      expect(await signsIn('ada@example.com', NEW_PASSWORD)).toBe(false)

      await confirmByPassword(browser, '/settings?tab=security')
      const changed = await browser.request(`${url()}/settings/password`, { body: fields })
      expect(changed.status).toBe(200)
      expect(await signsIn('ada@example.com', NEW_PASSWORD)).toBe(true)
    })

    it('the second factor: a stale session gets no new recovery codes and cannot turn it off (routes and functions), and passes once confirmed', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const { secret } = await enrol(browser, url(), T0)
      const codesBefore = await db.knex('RecoveryCode').select('*').orderBy('codeHash')
      let now = T0 + STALE_MS
      jest.setSystemTime(now)
      const setup = `${url()}/api/auth/two-factor/setup`

      for (const path of ['two-factor/recovery-codes', 'two-factor/disable']) {
        const refused = await post(browser, url(), path, { code: codeAt(secret, now) })
        expect(refused.status).toBe(302)
        expect(refused.headers.get('location')).toBe(confirmPage(setup))
        // A JSON client: the 403 with the confirmation page.
        const json = await browser.request(`${url()}/api/auth/${path}`, { body: new URLSearchParams({ csrfToken: await csrfFor(browser), code: codeAt(secret, now) }), headers: { accept: 'application/json' } })
        expect(json.status).toBe(403)
        expect(await json.json()).toMatchObject({ error: 'RecentSignInRequired', url: confirmPage(setup) })
      }
      for (const path of ['/settings/two-factor/codes', '/settings/two-factor/disable']) {
        const refused = await browser.request(`${url()}${path}`, { body: new URLSearchParams({ code: codeAt(secret, now) }) })
        expect(refused.status).toBe(403)
        expect((await refused.json()) as { stale: number }).toMatchObject({ stale: 600 })
      }
      expect(await db.knex('TwoFactor').whereNotNull('enabledAt').count({ n: '*' })).toEqual([{ n: 1 }])
      expect(await db.knex('RecoveryCode').select('*').orderBy('codeHash')).toEqual(codesBefore)

      await confirmByPassword(browser, setup)
      const codes = await browser.request(`${url()}/settings/two-factor/codes`, { body: new URLSearchParams({ code: codeAt(secret, now) }) })
      expect(codes.status).toBe(200)
      now += 30_000
      jest.setSystemTime(now)
      const off = await post(browser, url(), 'two-factor/disable', { code: codeAt(secret, now) })
      expect(off.status).toBe(302)
      expect(await db.knex('TwoFactor').count({ n: '*' })).toEqual([{ n: 0 }])
    })

    it('enrolling: a stale session is sent to confirm before a secret is made (the page and enrollTotp()), and enrols once confirmed', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      jest.setSystemTime(T0 + STALE_MS)
      const setup = `${url()}/api/auth/two-factor/setup`
      const page = await browser.request(setup)
      expect(page.status).toBe(302)
      expect(page.headers.get('location')).toBe(confirmPage(setup))
      expect((await browser.request(`${url()}/settings/two-factor/enrol`, { method: 'POST' })).status).toBe(403)
      expect(await db.knex('TwoFactor').count({ n: '*' })).toEqual([{ n: 0 }])

      await confirmByPassword(browser, setup)
      const { recoveryCodes } = await enrol(browser, url(), T0 + STALE_MS)
      expect(recoveryCodes).toHaveLength(10)
      expect(await db.knex('TwoFactor').whereNotNull('enabledAt').count({ n: '*' })).toEqual([{ n: 1 }])
    })

    it('enrolling: a secret shown to a recent session cannot be confirmed once the session is stale', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const page = await (await browser.request(`${url()}/api/auth/two-factor/setup`)).text()
      const secret = /<code class="secret">([^<]+)<\/code>/.exec(page)![1]!.replace(/\s/g, '')
      const later = T0 + STALE_MS
      jest.setSystemTime(later)
      const refused = await post(browser, url(), 'two-factor/setup', { code: codeAt(secret, later) })
      expect(refused.status).toBe(302)
      expect(refused.headers.get('location')).toBe(confirmPage(`${url()}/api/auth/two-factor/setup`))
      expect(await db.knex('TwoFactor').whereNotNull('enabledAt').count({ n: '*' })).toEqual([{ n: 0 }])
    })

    it('verifyTotp() confirms no enrolment for a stale session, and checks a code as before once enrolled', async () => {
      freezeClock(T0)
      mount()
      auth.app.post('/settings/two-factor/verify', async (req, res) => {
        try {
          res.json(await auth.verifyTotp(req, { code: req.body.code, skipCsrfCheck: true }))
        } catch (error) {
          res.status(error instanceof RecentSignInRequiredError ? 403 : 400).json({ error: String(error) })
        }
      })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const enrolment = (await (await browser.request(`${url()}/settings/two-factor/enrol`, { method: 'POST' })).json()) as { done: { secret: string } }
      let now = T0 + STALE_MS
      jest.setSystemTime(now)
      const verify = (code: string) => browser.request(`${url()}/settings/two-factor/verify`, { body: new URLSearchParams({ code }) })
      expect((await verify(codeAt(enrolment.done.secret, now))).status).toBe(403)
      expect(await db.knex('TwoFactor').whereNotNull('enabledAt').count({ n: '*' })).toEqual([{ n: 0 }])
      await confirmByPassword(browser, '/')
      expect((await verify(codeAt(enrolment.done.secret, now))).status).toBe(200)
      expect(await db.knex('TwoFactor').whereNotNull('enabledAt').count({ n: '*' })).toEqual([{ n: 1 }])
      // Enrolled: a code is checked for a stale session too (it changes nothing).
      now += STALE_MS
      jest.setSystemTime(now)
      expect(await (await verify(codeAt(enrolment.done.secret, now))).json()).toEqual({ method: 'totp' })
    })

    it('passkeys: a stale session adds none (the options and the callback) and removes none (the route and removePasskey()), and does both once confirmed', async () => {
      freezeClock(T0)
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const authenticator = new SoftwareAuthenticator(url())
      const register = async () => {
        const options = await browser.request(`${url()}/api/auth/webauthn-options/passkey?action=register`, { headers: { accept: 'application/json' } })
        expect(options.status).toBe(200)
        return JSON.stringify(authenticator.register(((await options.json()) as { options: Parameters<SoftwareAuthenticator['register']>[0] }).options))
      }
      const first = await post(browser, url(), 'callback/passkey', { action: 'register', data: await register() })
      expect(first.headers.get('location')).toBe(`${url()}/api/auth/passkeys`)
      // Options fetched while the session was recent, posted once it is stale.
      const data = await register()
      jest.setSystemTime(T0 + STALE_MS)
      const passkeys = `${url()}/api/auth/passkeys`
      const options = await browser.request(`${url()}/api/auth/webauthn-options/passkey?action=register`)
      expect(options.status).toBe(403)
      expect(await options.json()).toMatchObject({ error: 'RecentSignInRequired', url: confirmPage(passkeys) })
      const late = await post(browser, url(), 'callback/passkey', { action: 'register', data })
      expect(late.status).toBe(302)
      expect(late.headers.get('location')).toBe(confirmPage(passkeys))
      expect(await db.knex('Authenticator').count({ n: '*' })).toEqual([{ n: 1 }])

      const [stored] = (await db.knex('Authenticator').select('credentialID')) as { credentialID: string }[]
      const removal = await post(browser, url(), 'passkeys/remove', { id: stored!.credentialID })
      expect(removal.headers.get('location')).toBe(confirmPage(passkeys))
      const fn = await browser.request(`${url()}/settings/passkeys/remove`, { body: new URLSearchParams({ id: stored!.credentialID }) })
      expect(fn.status).toBe(403)
      expect(await db.knex('Authenticator').count({ n: '*' })).toEqual([{ n: 1 }])

      await confirmByPassword(browser, passkeys)
      const added = await post(browser, url(), 'callback/passkey', { action: 'register', data: await register() })
      expect(added.headers.get('location')).toBe(passkeys)
      const removed = await browser.request(`${url()}/settings/passkeys/remove`, { body: new URLSearchParams({ id: stored!.credentialID }) })
      expect(removed.status).toBe(200)
      expect(await db.knex('Authenticator').where({ userId: await userId() }).count({ n: '*' })).toEqual([{ n: 1 }])
    })

    it('without the account option a stale session changes the password and the second factor as before', async () => {
      freezeClock(T0)
      mount({ account: false })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const { secret } = await enrol(browser, url(), T0)
      // Twenty days on: long stale, the session still open (its lifetime is thirty days).
      const later = T0 + 20 * 24 * 3600 * 1000
      jest.setSystemTime(later)
      expect((await browser.request(`${url()}/settings/two-factor/codes`, { body: new URLSearchParams({ code: codeAt(secret, later) }) })).status).toBe(200)
      const changed = await browser.request(`${url()}/settings/password`, { body: new URLSearchParams({ current: GOOD_PASSWORD, next: NEW_PASSWORD }) })
      expect(changed.status).toBe(200)
    })
  })
}

async function csrfFor(browser: Browser): Promise<string> {
  return ((await (await browser.request(`${local.url}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
}
