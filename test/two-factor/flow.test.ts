/**
 * The second factor end to end over HTTP, with a frozen clock (only `Date`): real databases, the
 * codes an authenticator app would show (otpauth), cookie-jar browsers. Enrolment through the
 * settings page; the second page after the first factor; the window's edges, replays, the rate
 * limit, recovery codes, and the ways around the second page that must not work.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { listen, closeListeners, redirectOf, sessionOf, type Listener } from '../support/oauth-app.js'
import type { AuthApp } from '../support/app-rig.js'
import { afterAll, beforeAll } from '@jest/globals'
import { recordingLogger } from '../support/logger.js'
import { SECRET } from '../support/flow.js'
import { Browser, codeAt, enrol, freezeClock, giveCode, mountTwoFactorApp, post, recoveryCodesOf, signIn, T0 } from './two-factor-app.js'

let listener: Listener
beforeAll(async () => {
  listener = await listen()
})
afterAll(() => closeListeners())
afterEach(() => {
  jest.useRealTimers()
})

const PENDING = 'authjs.two-factor'

function suite(kind: DatabaseKind) {
  return (server: Parameters<Parameters<typeof describeWithDatabase>[2]>[0]) => {
    const db = migratedDatabase(server)
    const url = () => listener.url
    let calls: { twoFactor?: unknown }[]
    let events: string[]
    const mount = (config: Parameters<typeof mountTwoFactorApp>[2] = {}): AuthApp => {
      calls = []
      events = []
      const on = (name: string) => () => void events.push(name)
      return mountTwoFactorApp(listener, db.knex, {
        callbacks: { signIn: (params) => (calls.push({ twoFactor: params.twoFactor }), true) },
        events: { twoFactorEnabled: on('twoFactorEnabled'), twoFactorDisabled: on('twoFactorDisabled'), recoveryCodeUsed: on('recoveryCodeUsed'), recoveryCodesRegenerated: on('recoveryCodesRegenerated') },
        ...config,
      })
    }
    const createUser = (email: string) => KnexAdapter(db.knex).createUser!({ email, emailVerified: null, name: null, image: null })

    /** A user enrolled at T0 (through the pages), signed out again. */
    async function enrolled(email = 'ada@example.com'): Promise<{ secret: string; recoveryCodes: string[] }> {
      await createUser(email)
      const browser = new Browser()
      expect((await signIn(browser, url(), email)).status).toBe(302)
      return enrol(browser, url(), T0)
    }

    it('enrols from the settings page, then asks for a code after the password before any session starts', async () => {
      freezeClock(T0)
      mount()
      const { secret, recoveryCodes } = await enrolled()
      expect(recoveryCodes).toHaveLength(10)
      expect(new Set(recoveryCodes).size).toBe(10)
      for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/)
      expect(events).toEqual(['twoFactorEnabled'])
      // Stored sealed and hashed: neither the key nor a recovery code is in the database.
      const dump = JSON.stringify([await db.knex('TwoFactor').select(), await db.knex('RecoveryCode').select()])
      expect(dump).not.toContain(secret)
      for (const code of recoveryCodes) expect(dump).not.toContain(code.replace('-', ''))

      freezeClock(T0 + 60_000)
      const laptop = new Browser()
      const first = await signIn(laptop, url(), 'ada@example.com')
      expect(first.status).toBe(302)
      expect(first.headers.get('location')).toBe(`${url()}/api/auth/two-factor`)
      expect(await sessionOf(laptop, url())).toBeNull()
      expect(calls).toHaveLength(1) // the enrolling sign-in's; not yet this one's
      const page = await laptop.request(`${url()}/api/auth/two-factor`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('autocomplete="one-time-code"')
      expect(page.headers.get('cache-control')).toBe('private, no-cache, no-store, max-age=0')

      const second = await giveCode(laptop, url(), codeAt(secret, T0 + 60_000))
      expect(second.status).toBe(302)
      expect(second.headers.get('location')).toBe(`${url()}/dashboard`)
      expect((await sessionOf(laptop, url()))?.user.email).toBe('ada@example.com')
      expect(calls.at(-1)).toEqual({ twoFactor: { method: 'totp' } })
      expect(laptop.cookie(url(), PENDING)).toBeUndefined()
    })

    if (kind !== 'sqlite') return

    it("sends the first factor and the built-in page's address to the app's own page (pages.twoFactor), and a wrong code back there with its error", async () => {
      freezeClock(T0)
      mount({ pages: { twoFactor: '/login/code' } })
      const { secret } = await enrolled()
      freezeClock(T0 + 60_000)
      const browser = new Browser()
      expect((await signIn(browser, url(), 'ada@example.com')).headers.get('location')).toBe(`${url()}/login/code`)
      expect((await browser.request(`${url()}/api/auth/two-factor`)).headers.get('location')).toBe(`${url()}/login/code`)
      const right = codeAt(secret, T0 + 60_000)
      const wrong = await giveCode(browser, url(), right === '000000' ? '111111' : '000000')
      expect({ status: wrong.status, location: wrong.headers.get('location') }).toEqual({ status: 302, location: `${url()}/login/code?error=TwoFactor&code=invalid_code` })
      expect(await sessionOf(browser, url())).toBeNull()
      expect((await giveCode(browser, url(), right)).headers.get('location')).toBe(`${url()}/dashboard`)
      expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')
    })

    it('accepts the codes of one step either side of the current one, and no further', async () => {
      freezeClock(T0)
      mount()
      const { secret } = await enrolled()
      const now = T0 + 10 * 60_000
      freezeClock(now)
      const attempt = async (offsetSteps: number) => {
        const browser = new Browser()
        await signIn(browser, url(), 'ada@example.com')
        return (await giveCode(browser, url(), codeAt(secret, now + offsetSteps * 30_000))).status
      }
      expect(await attempt(-2)).toBe(400)
      expect(await attempt(2)).toBe(400)
      // In increasing order: each accepted step must be later than the last one.
      expect(await attempt(-1)).toBe(302)
      expect(await attempt(0)).toBe(302)
      expect(await attempt(1)).toBe(302)
      // At the last second of the next step, the step after it is one ahead: accepted (and two ahead is not).
      freezeClock(now + 30_000 + 29_999)
      expect(await attempt(3)).toBe(400)
      expect(await attempt(2)).toBe(302)
    })

    it('refuses a code used once already: again in the same 30 seconds, and in two racing browsers', async () => {
      freezeClock(T0)
      mount()
      const { secret } = await enrolled()
      freezeClock(T0 + 5 * 60_000)
      const code = codeAt(secret, T0 + 5 * 60_000)
      const one = new Browser()
      await signIn(one, url(), 'ada@example.com')
      expect((await giveCode(one, url(), code)).status).toBe(302)
      const replay = new Browser()
      await signIn(replay, url(), 'ada@example.com')
      const refused = await giveCode(replay, url(), code)
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain('That code is not right, or was used already.')
      expect(await sessionOf(replay, url())).toBeNull()

      freezeClock(T0 + 6 * 60_000)
      const next = codeAt(secret, T0 + 6 * 60_000)
      const racers = [new Browser(), new Browser(), new Browser()]
      for (const browser of racers) await signIn(browser, url(), 'ada@example.com')
      const statuses = await Promise.all(racers.map((browser) => giveCode(browser, url(), next).then((response) => response.status)))
      expect(statuses.sort()).toEqual([302, 400, 400])
    })

    it('limits wrong codes per user, whatever the browser: then even the right code waits', async () => {
      freezeClock(T0)
      mount({ rateLimit: { identifier: { attempts: 3, windowSeconds: 900 } } })
      const { secret } = await enrolled()
      freezeClock(T0 + 60_000)
      for (let i = 0; i < 3; i++) {
        const browser = new Browser()
        await signIn(browser, url(), 'ada@example.com')
        expect((await giveCode(browser, url(), '000000')).status).toBe(400)
      }
      const browser = new Browser()
      await signIn(browser, url(), 'ada@example.com')
      const limited = await giveCode(browser, url(), codeAt(secret, T0 + 60_000))
      expect(limited.status).toBe(429)
      expect(await sessionOf(browser, url())).toBeNull()
    })

    it('takes each recovery code once in place of a code', async () => {
      freezeClock(T0)
      mount()
      const { recoveryCodes } = await enrolled()
      const [code] = recoveryCodes
      const browser = new Browser()
      await signIn(browser, url(), 'ada@example.com')
      // As typed from paper: upper case, spaces.
      expect((await giveCode(browser, url(), ` ${code!.toUpperCase().replace('-', ' ')} `)).status).toBe(302)
      expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')
      expect(calls.at(-1)).toEqual({ twoFactor: { method: 'recovery-code' } })
      expect(events).toContain('recoveryCodeUsed')
      const again = new Browser()
      await signIn(again, url(), 'ada@example.com')
      expect((await giveCode(again, url(), code!)).status).toBe(400)
      expect(await db.knex('RecoveryCode').count({ n: '*' })).toEqual([{ n: 9 }])
    })

    it('refuses the pending sign-in in another browser, after 5 minutes (not before), and without the first factor', async () => {
      freezeClock(T0)
      mount()
      const { secret } = await enrolled()
      freezeClock(T0 + 60_000)
      const victim = new Browser()
      await signIn(victim, url(), 'ada@example.com')
      const pending = victim.cookie(url(), PENDING)!
      expect(pending).toBeDefined()

      // Copied into another browser (which has its own CSRF cookie): refused before the code is looked at.
      const thief = new Browser()
      thief.setCookie(url(), PENDING, pending)
      const stolen = await giveCode(thief, url(), codeAt(secret, T0 + 60_000))
      expect(redirectOf(stolen)).toMatchObject({ error: 'TwoFactor', code: 'pending_invalid' })
      expect(await sessionOf(thief, url())).toBeNull()
      // The code was not spent by the refusal: its owner signs in with it.
      expect((await giveCode(victim, url(), codeAt(secret, T0 + 60_000))).status).toBe(302)

      // Skipping the first factor: no pending sign-in, no session, whatever the code.
      const skipper = new Browser()
      expect(redirectOf(await giveCode(skipper, url(), codeAt(secret, T0 + 90_000)))).toMatchObject({ error: 'TwoFactor', code: 'pending_invalid' })
      expect(redirectOf(await skipper.request(`${url()}/api/auth/two-factor`))).toMatchObject({ error: 'TwoFactor', code: 'pending_invalid' })
      expect(await sessionOf(skipper, url())).toBeNull()

      // After 5 minutes (and the 15 s of tolerance), the pending sign-in is gone.
      const slow = new Browser()
      await signIn(slow, url(), 'ada@example.com')
      const sealed = slow.cookie(url(), PENDING)!
      const gone = T0 + 60_000 + 5 * 60_000 + 16_000
      freezeClock(gone)
      slow.setCookie(url(), PENDING, sealed)
      expect(redirectOf(await giveCode(slow, url(), codeAt(secret, gone)))).toMatchObject({ error: 'TwoFactor', code: 'pending_invalid' })
      expect(await sessionOf(slow, url())).toBeNull()

      // Ten seconds before its 5 minutes are up, it still holds (its first factor given at `gone`).
      const patient = new Browser()
      await signIn(patient, url(), 'ada@example.com')
      const late = gone + 5 * 60_000 - 10_000
      freezeClock(late)
      await giveCode(patient, url(), codeAt(secret, late))
      expect((await sessionOf(patient, url()))?.user.email).toBe('ada@example.com')
    })

    it('turns off and issues new recovery codes only with a current code, from the settings page', async () => {
      freezeClock(T0)
      mount()
      await createUser('ada@example.com')
      const browser = new Browser()
      await signIn(browser, url(), 'ada@example.com')
      const { secret, recoveryCodes } = await enrol(browser, url(), T0)
      freezeClock(T0 + 60_000)
      const settings = await (await browser.request(`${url()}/api/auth/two-factor/setup`)).text()
      expect(settings).toContain('You have 10 recovery codes left.')
      expect((await post(browser, url(), 'two-factor/recovery-codes', { code: '123456' })).status).toBe(400)
      const renewed = await post(browser, url(), 'two-factor/recovery-codes', { code: codeAt(secret, T0 + 60_000) })
      expect(renewed.status).toBe(200)
      const fresh = recoveryCodesOf(await renewed.text())
      expect(fresh).toHaveLength(10)
      expect(fresh.some((code) => recoveryCodes.includes(code))).toBe(false)
      expect(events).toContain('recoveryCodesRegenerated')

      freezeClock(T0 + 2 * 60_000)
      expect((await post(browser, url(), 'two-factor/disable', { code: recoveryCodes[0]! })).status).toBe(400)
      const off = await post(browser, url(), 'two-factor/disable', { code: fresh[0]!, callbackUrl: '/account' })
      expect(off.headers.get('location')).toBe(`${url()}/account`)
      expect(events).toContain('twoFactorDisabled')
      expect(await db.knex('TwoFactor').select()).toEqual([])
      // Off: the password alone signs in again.
      const laptop = new Browser()
      expect((await signIn(laptop, url(), 'ada@example.com')).headers.get('location')).toBe(`${url()}/dashboard`)
      expect((await sessionOf(laptop, url()))?.user.email).toBe('ada@example.com')
    })

    it('stores the RFC 6238 counter of the code last used (what a later version reads back) and when the enrolment was confirmed', async () => {
      freezeClock(T0)
      mount()
      const { secret } = await enrolled()
      const row = async () => (await db.knex('TwoFactor').select('lastUsedStep', 'enabledAt'))[0] as { lastUsedStep: number | string; enabledAt: Date | string | number }
      // T = floor(unix time / 30): the step of T0, whose code confirmed the enrolment.
      expect(Number((await row()).lastUsedStep)).toBe(T0 / 1000 / 30)
      expect(new Date((await row()).enabledAt).getTime()).toBe(T0)
      const later = T0 + 10 * 60_000 + 7_000
      freezeClock(later)
      const laptop = new Browser()
      await signIn(laptop, url(), 'ada@example.com')
      expect((await giveCode(laptop, url(), codeAt(secret, later))).status).toBe(302)
      expect(Number((await row()).lastUsedStep)).toBe(Math.floor(later / 1000 / 30))
    })

    it('asks for the code after the password with requireForEmail off (the e-mail option governs e-mail links only)', async () => {
      freezeClock(T0)
      mount({ twoFactor: { issuer: 'Portcullis tests', requireForEmail: false } })
      await enrolled()
      const laptop = new Browser()
      const first = await signIn(laptop, url(), 'ada@example.com')
      expect(first.headers.get('location')).toBe(`${url()}/api/auth/two-factor`)
      expect(await sessionOf(laptop, url())).toBeNull()
    })

    it('refuses every code, and logs why, when no configured secret opens the stored key (AUTH_SECRET rotated without the old one)', async () => {
      freezeClock(T0)
      mount()
      const { secret } = await enrolled()
      const logger = recordingLogger()
      mount({ secret: 'another-secret-of-at-least-32-characters!', logger })
      freezeClock(T0 + 60_000)
      const laptop = new Browser()
      expect((await signIn(laptop, url(), 'ada@example.com')).headers.get('location')).toBe(`${url()}/api/auth/two-factor`)
      expect((await giveCode(laptop, url(), codeAt(secret, T0 + 60_000))).status).toBe(400)
      expect(await sessionOf(laptop, url())).toBeNull()
      const line = logger.lines.find((entry) => entry.code === 'TwoFactorSecretUnreadable')
      expect(line?.level).toBe('error')
      expect(String(line?.message[0])).toMatch(/^The TOTP secret of user \S+ opens with none of the configured secrets/)
      // The old secret listed again (rotation): the same code's step is accepted.
      mount({ secret: ['another-secret-of-at-least-32-characters!', SECRET] })
      const again = new Browser()
      await signIn(again, url(), 'ada@example.com')
      expect((await giveCode(again, url(), codeAt(secret, T0 + 60_000))).status).toBe(302)
    })

    it('shows the key as a QR code: an inline <svg> with an accessible name, without the XML declaration', async () => {
      freezeClock(T0)
      mount()
      await createUser('ada@example.com')
      const browser = new Browser()
      await signIn(browser, url(), 'ada@example.com')
      const page = await (await browser.request(`${url()}/api/auth/two-factor/setup`)).text()
      expect(page).not.toContain('<?xml')
      expect(page).toMatch(/>\s*<svg role="img" aria-label="QR code of the authenticator app secret" xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)
    })
  }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) await describeWithDatabase(kind, `second factor over HTTP (${kind})`, suite(kind))
