/**
 * The second factor's server-side functions (`enrollTotp`, `verifyTotp`, `disableTotp`,
 * `regenerateRecoveryCodes`) called from an app's own routes, as docs/two-factor.md shows them, on
 * SQLite with a frozen clock (only `Date`): what they return, the CSRF rule, who must be signed in,
 * codes good once, the events. Then what `Portcullis()` refuses at init, the routes when `twoFactor`
 * is off, and HEAD on the settings page.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals'
import express from 'express'
import { URI } from 'otpauth'
import Portcullis, { InvalidConfigurationError, MissingCSRFError, RateLimitedError, TwoFactorError, UnknownActionError, type PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { closeAll, listenApp } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { closeListeners, listen, sessionOf, type Listener } from '../support/oauth-app.js'
import { rawRequest } from '../support/raw-http.js'
import { Browser, codeAt, csrfOf, freezeClock, mountTwoFactorApp, signIn, T0 } from './two-factor-app.js'

let listener: Listener
beforeAll(async () => {
  listener = await listen()
})
afterAll(async () => {
  await closeListeners()
  await closeAll()
})
afterEach(() => {
  jest.useRealTimers()
})

const url = () => listener.url
const SESSION = 'authjs.session-token'

/** What an app route answered: the function's result, or the error it threw (kept whole, to check its class). */
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * The rig's app with four account routes calling the server-side functions, as an app would: each
 * POST takes `code` and `csrfToken` from its form. Each answer is the outcome of the call.
 */
function mountApiApp(db: { knex: Parameters<typeof mountTwoFactorApp>[1] }, config: Partial<PortcullisConfig> = {}) {
  const events: { name: string; message: unknown }[] = []
  const on = (name: string) => (message: unknown) => void events.push({ name, message })
  const app = mountTwoFactorApp(listener, db.knex, {
    events: { twoFactorEnabled: on('twoFactorEnabled'), twoFactorDisabled: on('twoFactorDisabled'), recoveryCodesRegenerated: on('recoveryCodesRegenerated'), recoveryCodeUsed: on('recoveryCodeUsed') },
    ...config,
  })
  let last: Outcome | undefined
  const form = express.urlencoded({ extended: false })
  const route = (path: string, call: (req: express.Request) => Promise<unknown>) =>
    app.app.post(path, form, async (req, res) => {
      try {
        last = { ok: true, value: await call(req) }
        res.json({ ok: true })
      } catch (error) {
        last = { ok: false, error }
        res.status(400).json({ ok: false })
      }
    })
  const fields = (req: express.Request) => ({ code: String(req.body.code ?? ''), csrfToken: req.body.csrfToken as string | undefined })
  route('/account/totp/enroll', (req) => app.enrollTotp(req))
  route('/account/totp/verify', (req) => app.verifyTotp(req, fields(req)))
  route('/account/totp/disable', (req) => app.disableTotp(req, fields(req)))
  route('/account/totp/recovery-codes', (req) => app.regenerateRecoveryCodes(req, fields(req)))

  /** POSTs to an account route (with `browser`'s CSRF token unless `csrfToken` is given, even empty) and resolves with the call's outcome. */
  async function call(browser: Browser, action: 'enroll' | 'verify' | 'disable' | 'recovery-codes', values: { code?: string; csrfToken?: string } = {}, headers: Record<string, string> = {}): Promise<Outcome> {
    const body = new URLSearchParams({ csrfToken: values.csrfToken ?? (await csrfOf(browser, url())), ...(values.code === undefined ? {} : { code: values.code }) })
    if (values.csrfToken === '') body.delete('csrfToken')
    last = undefined
    await browser.request(`${url()}/account/totp/${action}`, { body, headers })
    if (!last) throw new Error(`/account/totp/${action} did not run`)
    return last
  }
  /** The value of a call that must succeed. */
  async function value<T>(browser: Browser, action: Parameters<typeof call>[1], values: Parameters<typeof call>[2] = {}): Promise<T> {
    const outcome = await call(browser, action, values)
    if (!outcome.ok) throw outcome.error
    return outcome.value as T
  }
  return { app, events, call, value }
}

type Enrollment = { secret: string; uri: string; qrCode: string }
type Verification = { method: string; recoveryCodes?: string[] }

/** The error a call threw. */
function errorOf(outcome: Outcome): unknown {
  if (outcome.ok) throw new Error(`the call succeeded with ${JSON.stringify(outcome.value)}`)
  return outcome.error
}

const twoFactorError = (code: string) => expect.objectContaining({ type: 'TwoFactor', code })

await describeWithDatabase('sqlite', 'the second factor\'s server-side functions (SQLite)', (server) => {
  const db = migratedDatabase(server)
  const createUser = (email: string) => KnexAdapter(db.knex).createUser!({ email, emailVerified: null, name: null, image: null })

  /** A signed-in browser of a new user `email`. */
  async function signedIn(email = 'ada@example.com'): Promise<{ browser: Browser; userId: string }> {
    const user = await createUser(email)
    const browser = new Browser()
    expect((await signIn(browser, url(), email)).status).toBe(302)
    return { browser, userId: user.id }
  }

  it('enrollTotp starts an enrolment (a base32 key, its otpauth URI with the issuer, an SVG QR code); verifyTotp confirms it, then checks each code once', async () => {
    freezeClock(T0)
    const { events, value, call } = mountApiApp(db)
    const { browser, userId } = await signedIn()

    const replaced = await value<Enrollment>(browser, 'enroll')
    const enrollment = await value<Enrollment>(browser, 'enroll')
    const { secret, uri, qrCode } = enrollment
    // 160 bits, base32: what apps take when typed in.
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(secret).not.toBe(replaced.secret)
    expect(uri.startsWith('otpauth://totp/Portcullis%20tests:ada%40example.com?')).toBe(true)
    const parsed = URI.parse(uri)
    expect(parsed).toMatchObject({ issuer: 'Portcullis tests', label: 'ada@example.com', algorithm: 'SHA1', digits: 6 })
    expect((parsed as { period?: number }).period).toBe(30)
    expect(parsed.secret.base32).toBe(secret)
    expect(new URL(uri).searchParams.get('issuer')).toBe('Portcullis tests')
    expect(qrCode.startsWith('<svg')).toBe(true)
    expect(qrCode).not.toMatch(/<script|href=/i)
    // Pending: the password alone still signs in.
    expect((await signIn(new Browser(), url(), 'ada@example.com')).headers.get('location')).toBe(`${url()}/dashboard`)
    expect(events).toEqual([])

    // The replaced key's code confirms nothing; a wrong code neither.
    expect(errorOf(await call(browser, 'verify', { code: codeAt(replaced.secret, T0) }))).toEqual(twoFactorError('invalid_code'))
    expect(errorOf(await call(browser, 'verify', { code: '12345' }))).toEqual(twoFactorError('invalid_code'))
    const confirmed = await value<Verification>(browser, 'verify', { code: codeAt(secret, T0) })
    expect(confirmed.method).toBe('totp')
    expect(confirmed.recoveryCodes).toHaveLength(10)
    expect(new Set(confirmed.recoveryCodes).size).toBe(10)
    for (const code of confirmed.recoveryCodes!) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/)
    expect(events).toEqual([{ name: 'twoFactorEnabled', message: { userId } }])
    expect(await db.knex('TwoFactor').whereNotNull('enabledAt').select()).toHaveLength(1)
    expect((await signIn(new Browser(), url(), 'ada@example.com')).headers.get('location')).toBe(`${url()}/api/auth/two-factor`)

    // The confirming code was the first use of its step.
    const replay = errorOf(await call(browser, 'verify', { code: codeAt(secret, T0) }))
    expect(replay).toBeInstanceOf(TwoFactorError)
    expect(replay).toMatchObject({ code: 'invalid_code' })

    freezeClock(T0 + 60_000)
    const next = codeAt(secret, T0 + 60_000)
    expect(await value<Verification>(browser, 'verify', { code: next })).toEqual({ method: 'totp' })
    expect(errorOf(await call(browser, 'verify', { code: next }))).toEqual(twoFactorError('invalid_code'))
    expect(await value<Verification>(browser, 'verify', { code: confirmed.recoveryCodes![0]! })).toEqual({ method: 'recovery-code' })
    expect(events.at(-1)).toEqual({ name: 'recoveryCodeUsed', message: { userId, remaining: 9 } })

    const again = errorOf(await call(browser, 'enroll'))
    expect(again).toBeInstanceOf(TwoFactorError)
    expect(again).toMatchObject({ code: 'already_enrolled' })
    // Refusing did not replace the confirmed key: its codes still work.
    freezeClock(T0 + 90_000)
    expect(await value<Verification>(browser, 'verify', { code: codeAt(secret, T0 + 90_000) })).toEqual({ method: 'totp' })
  })

  it('refuses a call without a valid CSRF token (before the code is looked at) and one without a signed-in user', async () => {
    freezeClock(T0)
    const { call, value } = mountApiApp(db)
    const { browser } = await signedIn()
    const { secret } = await value<Enrollment>(browser, 'enroll')
    const code = codeAt(secret, T0)
    for (const action of ['verify', 'disable', 'recovery-codes'] as const) {
      expect(errorOf(await call(browser, action, { code, csrfToken: '' }))).toBeInstanceOf(MissingCSRFError)
      expect(errorOf(await call(browser, action, { code, csrfToken: 'not-the-token' }))).toBeInstanceOf(MissingCSRFError)
      // The right token from another site's page.
      expect(errorOf(await call(browser, action, { code }, { 'sec-fetch-site': 'cross-site' }))).toBeInstanceOf(MissingCSRFError)
    }
    expect(await db.knex('TwoFactor').whereNotNull('enabledAt').select()).toEqual([])
    // None of that spent the code.
    expect((await value<Verification>(browser, 'verify', { code })).recoveryCodes).toHaveLength(10)

    const stranger = new Browser()
    expect(await sessionOf(stranger, url())).toBeNull()
    for (const action of ['enroll', 'verify', 'disable', 'recovery-codes'] as const) {
      const refused = errorOf(await call(stranger, action, { code: codeAt(secret, T0 + 30_000) }))
      expect(refused).toBeInstanceOf(TwoFactorError)
      expect(refused).toMatchObject({ code: 'not_signed_in' })
    }
    // A signed-in user who never enrolled: nothing to check a code against.
    const { browser: other } = await signedIn('bob@example.com')
    expect(errorOf(await call(other, 'verify', { code: '123456' }))).toEqual(twoFactorError('not_enrolled'))
    expect(errorOf(await call(other, 'disable', { code: '123456' }))).toEqual(twoFactorError('not_enrolled'))
  })

  it('disableTotp and regenerateRecoveryCodes refuse a wrong code and work with a right one', async () => {
    freezeClock(T0)
    const { call, value, events } = mountApiApp(db)
    const { browser, userId } = await signedIn()
    const { secret } = await value<Enrollment>(browser, 'enroll')
    const { recoveryCodes: first } = await value<Verification>(browser, 'verify', { code: codeAt(secret, T0) })
    const hashes = async () => (await db.knex('RecoveryCode').select('codeHash')).map((row: { codeHash: string }) => row.codeHash).sort()
    const before = await hashes()

    freezeClock(T0 + 60_000)
    expect(errorOf(await call(browser, 'recovery-codes', { code: '000000' }))).toEqual(twoFactorError('invalid_code'))
    expect(await hashes()).toEqual(before)
    const renewed = await value<string[]>(browser, 'recovery-codes', { code: codeAt(secret, T0 + 60_000) })
    expect(renewed).toHaveLength(10)
    expect(renewed.some((code) => first!.includes(code))).toBe(false)
    expect(await hashes()).toHaveLength(10)
    expect(events.map((event) => event.name)).toEqual(['twoFactorEnabled', 'recoveryCodesRegenerated'])
    expect(events[1]!.message).toEqual({ userId })
    // The old codes are gone, the new ones work.
    expect(errorOf(await call(browser, 'verify', { code: first![0]! }))).toEqual(twoFactorError('invalid_code'))
    expect(await value<Verification>(browser, 'verify', { code: renewed[0]! })).toEqual({ method: 'recovery-code' })

    freezeClock(T0 + 120_000)
    expect(errorOf(await call(browser, 'disable', { code: renewed[0]! }))).toEqual(twoFactorError('invalid_code'))
    expect(errorOf(await call(browser, 'disable', { code: codeAt(secret, T0 + 60_000) }))).toEqual(twoFactorError('invalid_code'))
    expect(await db.knex('TwoFactor').select()).toHaveLength(1)
    expect(events.map((event) => event.name)).not.toContain('twoFactorDisabled')
    expect(await value(browser, 'disable', { code: codeAt(secret, T0 + 120_000) })).toBeUndefined()
    expect(events.at(-1)).toEqual({ name: 'twoFactorDisabled', message: { userId } })
    expect(await db.knex('TwoFactor').select()).toEqual([])
    expect(await db.knex('RecoveryCode').select()).toEqual([])
    expect(errorOf(await call(browser, 'verify', { code: codeAt(secret, T0 + 150_000) }))).toEqual(twoFactorError('not_enrolled'))
    // Off: the password alone signs in again.
    expect((await signIn(new Browser(), url(), 'ada@example.com')).headers.get('location')).toBe(`${url()}/dashboard`)
  })

  it('counts wrong codes given to verifyTotp against the user: then even the right one is refused', async () => {
    freezeClock(T0)
    const { call, value } = mountApiApp(db, { rateLimit: { identifier: { attempts: 3, windowSeconds: 900 } } })
    const { browser } = await signedIn()
    const { secret } = await value<Enrollment>(browser, 'enroll')
    await value(browser, 'verify', { code: codeAt(secret, T0) })
    freezeClock(T0 + 60_000)
    for (let i = 0; i < 3; i++) expect(errorOf(await call(browser, 'verify', { code: '000000' }))).toEqual(twoFactorError('invalid_code'))
    expect(errorOf(await call(browser, 'verify', { code: codeAt(secret, T0 + 60_000) }))).toBeInstanceOf(RateLimitedError)
  })

  describe('at init, Portcullis() refuses twoFactor that cannot work, saying what to change', () => {
    const base = (): PortcullisConfig => ({
      secret: SECRET,
      providers: [Credentials({ authorize: async () => null })],
      adapter: KnexAdapter(db.knex),
      twoFactor: { issuer: 'Example' },
    })
    const refusal = (config: PortcullisConfig): Error => {
      try {
        Portcullis(config)
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidConfigurationError)
        return error as Error
      }
      throw new Error('Portcullis() accepted the configuration')
    }

    it('accepts the base configuration', () => {
      expect(() => Portcullis(base())).not.toThrow()
    })

    it('without an adapter', () => {
      const { adapter: _adapter, ...config } = base()
      expect(refusal(config).message).toMatch(/twoFactor .*needs an adapter.*KnexAdapter/)
    })

    it('with rateLimit: false, or no identifier window', () => {
      expect(refusal({ ...base(), rateLimit: false }).message).toMatch(/rateLimit\.identifier.*Remove `rateLimit: false`/)
      expect(refusal({ ...base(), rateLimit: { identifier: false } }).message).toMatch(/rateLimit\.identifier/)
    })

    it('with an adapter lacking getTwoFactor', () => {
      const adapter = { ...KnexAdapter(db.knex), getTwoFactor: undefined }
      expect(refusal({ ...base(), adapter }).message).toMatch(/the adapter has no getTwoFactor\b.*implement/)
    })

    it('with an issuer containing ":"', () => {
      expect(refusal({ ...base(), twoFactor: { issuer: 'Example: Staging' } }).message).toMatch(/twoFactor\.issuer .*without ":".*"Example: Staging"/)
    })
  })

  it('answers UnknownAction (400 JSON) on the second factor\'s routes, and its functions throw it, when twoFactor is off', async () => {
    const { call } = mountApiApp(db, { twoFactor: undefined })
    const { browser } = await signedIn()
    for (const [method, path] of [['GET', 'two-factor/setup'], ['POST', 'two-factor/setup'], ['GET', 'two-factor'], ['POST', 'two-factor']] as const) {
      const response = method === 'GET' ? await browser.request(`${url()}/api/auth/${path}`) : await browser.request(`${url()}/api/auth/${path}`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, url()), code: '123456' }) })
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await response.json()).toMatchObject({ error: 'UnknownAction' })
    }
    expect(errorOf(await call(browser, 'enroll'))).toBeInstanceOf(UnknownActionError)
    expect(errorOf(await call(browser, 'verify', { code: '123456' }))).toBeInstanceOf(UnknownActionError)
  })

  it('HEAD /api/auth/two-factor/setup by a signed-in user stores no pending enrolment (GET does)', async () => {
    const { app } = mountApiApp(db)
    const { server, origin } = await listenApp(app.app)
    await createUser('ada@example.com')
    const browser = new Browser()
    expect((await signIn(browser, origin, 'ada@example.com')).status).toBe(302)
    const cookie = `${SESSION}=${browser.cookie(origin, SESSION)!}`
    const head = await rawRequest(server, '/api/auth/two-factor/setup', { method: 'HEAD', headers: { cookie } })
    expect(head.status).toBe(200)
    expect(head.body).toBe('')
    expect(await db.knex('TwoFactor').select()).toEqual([])
    // The same request as a GET does store one: the HEAD was not turned away for want of a session.
    const get = await rawRequest(server, '/api/auth/two-factor/setup', { headers: { cookie } })
    expect(get.status).toBe(200)
    expect(get.body).toContain('<code class="secret">')
    // As every router response: a page with a secret is the router's to keep out of caches.
    expect(get.headers['cache-control']).toBe('private, no-cache, no-store, max-age=0')
    expect(get.headers['referrer-policy']).toBe('no-referrer')
    expect(await db.knex('TwoFactor').select()).toHaveLength(1)
  })
})
