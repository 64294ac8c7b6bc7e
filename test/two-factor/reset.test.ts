/**
 * `resetTwoFactor(userId)`: an administrator's way back for a user locked out of their second
 * factor (issue 62, item 1): a lost phone, or a key sealed with a secret that is no longer listed.
 * On SQLite with a frozen clock (only `Date`).
 */
import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals'
import { TwoFactorError, UnknownActionError, type PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { closeAll } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { closeListeners, listen, sessionOf, type Listener } from '../support/oauth-app.js'
import { Browser, codeAt, enrol, freezeClock, giveCode, mountTwoFactorApp, signIn, T0 } from './two-factor-app.js'

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

await describeWithDatabase('sqlite', 'resetTwoFactor (SQLite)', (server) => {
  const db = migratedDatabase(server)
  const createUser = (email: string) => KnexAdapter(db.knex).createUser!({ email, emailVerified: null, name: null, image: null })

  /** The rig's app with its events and log lines recorded. */
  function mount(config: Partial<PortcullisConfig> = {}) {
    const events: unknown[] = []
    const logged: string[] = []
    const line = (level: string) => (code: string, ...message: unknown[]) => void logged.push(`${level} ${code}: ${message.join(' ')}`)
    const app = mountTwoFactorApp(listener, db.knex, {
      logger: { error: line('error'), warn: line('warn'), debug: () => {} },
      events: { twoFactorReset: (message) => void events.push({ name: 'twoFactorReset', message }) },
      ...config,
    })
    return { app, events, logged }
  }

  it('lets a user whose key no longer opens (its secret dropped) sign in with the password alone, and enrol again', async () => {
    freezeClock(T0)
    mount({ secret: 'the-secret-of-the-enrolment-0123456789abcdef' })
    const ada = await createUser('ada@example.com')
    const bob = await createUser('bob@example.com')
    for (const email of ['ada@example.com', 'bob@example.com']) {
      const browser = new Browser()
      await signIn(browser, listener.url, email)
      await enrol(browser, listener.url, T0)
    }

    // The enrolment's secret is dropped: Ada's codes are refused, and the log says why.
    const { app, events, logged } = mount({ secret: 'another-secret-entirely-0123456789abcdefgh' })
    freezeClock(T0 + 60_000)
    const locked = new Browser()
    await signIn(locked, listener.url, 'ada@example.com')
    const refused = await giveCode(locked, listener.url, '123456')
    expect(refused.status).toBe(400)
    expect(await refused.text()).toContain('That code is not right')
    expect(logged).toContainEqual(expect.stringMatching(new RegExp(`^error TwoFactorSecretUnreadable: The TOTP secret of user ${ada.id} opens with none`)))

    expect(await app.resetTwoFactor(ada.id)).toBe(true)
    expect(events).toEqual([{ name: 'twoFactorReset', message: { userId: ada.id } }])
    expect(logged).toContainEqual(`warn TwoFactorReset: The second factor of user ${ada.id} was reset (resetTwoFactor()): their password alone signs them in until they enrol again.`)
    expect(await db.knex('TwoFactor').where({ userId: ada.id }).select()).toEqual([])
    expect(await db.knex('RecoveryCode').where({ userId: ada.id }).select()).toEqual([])
    // Bob's enrolment is untouched.
    expect(await db.knex('TwoFactor').where({ userId: bob.id }).select()).toHaveLength(1)
    expect(await db.knex('RecoveryCode').where({ userId: bob.id }).select()).toHaveLength(10)

    const back = new Browser()
    expect((await signIn(back, listener.url, 'ada@example.com')).headers.get('location')).toBe(`${listener.url}/dashboard`)
    expect((await sessionOf(back, listener.url))?.user.id).toBe(ada.id)
    // Enrolled again, under the secret in use now: the second page asks, and the new key's code signs in.
    const { secret } = await enrol(back, listener.url, T0 + 60_000)
    freezeClock(T0 + 120_000)
    const next = new Browser()
    expect((await signIn(next, listener.url, 'ada@example.com')).headers.get('location')).toBe(`${listener.url}/api/auth/two-factor`)
    expect((await giveCode(next, listener.url, codeAt(secret, T0 + 120_000))).headers.get('location')).toBe(`${listener.url}/dashboard`)
  })

  it('removes a pending enrolment too; resolves false, with no event, for a user without one', async () => {
    const { app, events } = mount()
    const user = await createUser('ada@example.com')
    const browser = new Browser()
    await signIn(browser, listener.url, 'ada@example.com')
    expect((await browser.request(`${listener.url}/api/auth/two-factor/setup`)).status).toBe(200)
    expect(await db.knex('TwoFactor').whereNull('enabledAt').select()).toHaveLength(1)
    expect(await app.resetTwoFactor(user.id)).toBe(true)
    expect(await db.knex('TwoFactor').select()).toEqual([])
    expect(await app.resetTwoFactor(user.id)).toBe(false)
    expect(await app.resetTwoFactor('no-such-user')).toBe(false)
    expect(events).toEqual([{ name: 'twoFactorReset', message: { userId: user.id } }])
  })

  it('throws TypeError for a missing or empty user id, and UnknownActionError when twoFactor is off', async () => {
    const { app } = mount()
    for (const bad of [undefined, '', 42, { id: 'user-1' }]) {
      await expect(app.resetTwoFactor(bad as unknown as string)).rejects.toThrow(TypeError)
    }
    await expect(app.resetTwoFactor('')).rejects.toThrow(/resetTwoFactor\(userId\): userId must be the user's id/)
    const off = mount({ twoFactor: undefined })
    await expect(off.app.resetTwoFactor('user-1')).rejects.toThrow(UnknownActionError)
    await expect(off.app.resetTwoFactor('user-1')).rejects.not.toThrow(TwoFactorError)
  })
})
