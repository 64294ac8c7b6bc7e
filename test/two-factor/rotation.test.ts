/**
 * Rotating the secret with two-step users (issue 62, item 2), by the recipe of docs/deployment.md
 * ("Rotating the secret"), through the environment as it says: the new secret in AUTH_SECRET_1 beside
 * the old AUTH_SECRET; each TOTP key (and the recovery codes keyed from it) sealed again with the new
 * one at its user's next good code; then the new secret moved to AUTH_SECRET and the old one dropped.
 * Twice, on SQLite with a frozen clock (only `Date`); each `mount` is a deploy.
 */
import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { recoveryCodeHashes } from '../../src/features/two-factor/recovery.js'
import { openTotpSecret } from '../../src/features/two-factor/totp.js'
import { closeAll } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { isolateEnv } from '../support/env.js'
import { recordingLogger } from '../support/logger.js'
import { closeListeners, listen, sessionOf, type Listener } from '../support/oauth-app.js'
import { Browser, codeAt, enrol, freezeClock, giveCode, mountTwoFactorApp, post, recoveryCodesOf, signIn, T0 } from './two-factor-app.js'

isolateEnv(['NODE_ENV', 'AUTH_SECRET', 'LEGACYAUTH_SECRET', 'AUTH_SECRET_1', 'AUTH_SECRET_2', 'AUTH_SECRET_3'])

const S0 = 'the-first-secret-of-the-site-0123456789abcdef'
const S1 = 'the-second-secret-of-the-site-0123456789abcde'
const S2 = 'the-third-secret-of-the-site-0123456789abcdef'

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

await describeWithDatabase('sqlite', 'rotating the secret with two-step users (SQLite)', (server) => {
  const db = migratedDatabase(server)
  const url = () => listener.url

  /** Deploys with these secrets in the environment (`AUTH_SECRET_1` unset when not given). */
  function deploy(env: { AUTH_SECRET: string; AUTH_SECRET_1?: string }) {
    process.env.AUTH_SECRET = env.AUTH_SECRET
    if (env.AUTH_SECRET_1 === undefined) delete process.env.AUTH_SECRET_1
    else process.env.AUTH_SECRET_1 = env.AUTH_SECRET_1
    const logger = recordingLogger()
    const app = mountTwoFactorApp(listener, db.knex, { secret: undefined, logger })
    return { app, logger }
  }
  const sealedKeyOf = async (userId: string): Promise<string> => String((await db.knex('TwoFactor').where({ userId }).first()).secret)
  /** Which of the site's secrets opens the user's stored key. */
  const sealedWith = async (userId: string) => {
    const sealed = await sealedKeyOf(userId)
    return [S0, S1, S2].filter((secret) => openTotpSecret([secret], sealed) !== null)
  }
  /** Signs in with the password and `code`; where the second page sent the browser. */
  async function signInWith(email: string, code: string): Promise<string | null> {
    const browser = new Browser()
    expect((await signIn(browser, url(), email)).headers.get('location')).toBe(`${url()}/api/auth/two-factor`)
    return (await giveCode(browser, url(), code)).headers.get('location')
  }
  const dashboard = () => `${url()}/dashboard`

  it('seals each key again at its user\'s next code, so the oldest secret can be dropped; twice', async () => {
    freezeClock(T0)
    deploy({ AUTH_SECRET: S0 })
    const adapter = KnexAdapter(db.knex)
    const enrolled: Record<string, { id: string; secret: string; recoveryCodes: string[] }> = {}
    for (const name of ['ada', 'bob', 'cy']) {
      const email = `${name}@example.com`
      const user = await adapter.createUser!({ email, emailVerified: null, name, image: null })
      const browser = new Browser()
      await signIn(browser, url(), email)
      enrolled[name] = { id: user.id, ...(await enrol(browser, url(), T0)) }
    }
    const { ada, bob, cy } = enrolled as Record<'ada' | 'bob' | 'cy', { id: string; secret: string; recoveryCodes: string[] }>
    for (const user of [ada, bob, cy]) expect(await sealedWith(user.id)).toEqual([S0])

    // Step 1: the new secret in AUTH_SECRET_1, the old one kept in AUTH_SECRET.
    let { logger } = deploy({ AUTH_SECRET_1: S1, AUTH_SECRET: S0 })
    freezeClock(T0 + 60_000)
    expect(await signInWith('ada@example.com', codeAt(ada.secret, T0 + 60_000))).toBe(dashboard())
    expect(await sealedWith(ada.id)).toEqual([S1])
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: 'debug', code: 'TwoFactorSecretResealed' }))
    expect(await signInWith('bob@example.com', bob.recoveryCodes[0]!)).toBe(dashboard())
    expect(await sealedWith(bob.id)).toEqual([S1])
    // Cy does not sign in in the meantime: still under the old secret.
    expect(await sealedWith(cy.id)).toEqual([S0])

    // Step 3: the new secret moved to AUTH_SECRET, the old one dropped.
    ;({ logger } = deploy({ AUTH_SECRET: S1 }))
    freezeClock(T0 + 90_000)
    expect(await signInWith('ada@example.com', codeAt(ada.secret, T0 + 90_000))).toBe(dashboard())
    expect(await signInWith('bob@example.com', codeAt(bob.secret, T0 + 90_000))).toBe(dashboard())
    // The rest of Bob's recovery codes were keyed from his key, not with the dropped secret.
    expect(await signInWith('bob@example.com', bob.recoveryCodes[1]!)).toBe(dashboard())
    expect(await signInWith('ada@example.com', ada.recoveryCodes[0]!)).toBe(dashboard())
    // Cy's key opens no more: refused, logged, and an administrator's reset lets the password in.
    expect(await signInWith('cy@example.com', codeAt(cy.secret, T0 + 90_000))).toBeNull()
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: 'error', code: 'TwoFactorSecretUnreadable' }))
    let { app } = deploy({ AUTH_SECRET: S1 })
    expect(await app.resetTwoFactor(cy.id)).toBe(true)
    expect((await signIn(new Browser(), url(), 'cy@example.com')).headers.get('location')).toBe(dashboard())

    // The second rotation, by the same steps.
    ;({ logger } = deploy({ AUTH_SECRET_1: S2, AUTH_SECRET: S1 }))
    freezeClock(T0 + 120_000)
    expect(await signInWith('ada@example.com', ada.recoveryCodes[1]!)).toBe(dashboard())
    expect(await sealedWith(ada.id)).toEqual([S2])
    expect(await sealedWith(bob.id)).toEqual([S1])
    ;({ app, logger } = deploy({ AUTH_SECRET: S2 }))
    freezeClock(T0 + 150_000)
    expect(await signInWith('ada@example.com', codeAt(ada.secret, T0 + 150_000))).toBe(dashboard())
    expect(await signInWith('ada@example.com', ada.recoveryCodes[2]!)).toBe(dashboard())
    expect(await signInWith('bob@example.com', codeAt(bob.secret, T0 + 150_000))).toBeNull()
    expect(await signInWith('bob@example.com', bob.recoveryCodes[2]!)).toBeNull()
    expect(logger.lines.filter((line) => line.code === 'TwoFactorSecretUnreadable')).toHaveLength(2)
  })

  it('with an adapter that has no resealTwoFactor, still signs in under the older secret and warns that it must stay listed', async () => {
    freezeClock(T0)
    deploy({ AUTH_SECRET: S0 })
    const user = await KnexAdapter(db.knex).createUser!({ email: 'eve@example.com', emailVerified: null, name: 'eve', image: null })
    const browser = new Browser()
    await signIn(browser, url(), 'eve@example.com')
    const { secret } = await enrol(browser, url(), T0)
    process.env.AUTH_SECRET_1 = S1
    const logger = recordingLogger()
    mountTwoFactorApp(listener, db.knex, { secret: undefined, logger, adapter: { ...KnexAdapter(db.knex), resealTwoFactor: undefined } })
    freezeClock(T0 + 60_000)
    expect(await signInWith('eve@example.com', codeAt(secret, T0 + 60_000))).toBe(dashboard())
    expect(await sealedWith(user.id)).toEqual([S0])
    const warning = logger.lines.find((line) => line.code === 'TwoFactorSecretNotResealed')
    expect(warning?.level).toBe('warn')
    expect(String(warning?.message[0])).toMatch(new RegExp(`^The TOTP secret of user ${user.id} is sealed with an older secret and the adapter has no resealTwoFactor\\(\\)`))
  })

  it('keeps a recovery-code set keyed with the secret itself (issued before 2026-12) good while that secret is listed, and moves it to the key when new codes are asked for', async () => {
    freezeClock(T0)
    deploy({ AUTH_SECRET: S0 })
    const adapter = KnexAdapter(db.knex)
    const user = await adapter.createUser!({ email: 'dan@example.com', emailVerified: null, name: 'dan', image: null })
    const browser = new Browser()
    await signIn(browser, url(), 'dan@example.com')
    const { secret } = await enrol(browser, url(), T0)
    // The set as Portcullis stored it before: keyed with AUTH_SECRET.
    const legacy = ['abcde-23456', 'fghjk-78923', 'mnpqr-45678']
    await adapter.setRecoveryCodes(user.id, recoveryCodeHashes(S0, user.id, legacy))

    deploy({ AUTH_SECRET_1: S1, AUTH_SECRET: S0 })
    freezeClock(T0 + 60_000)
    expect(await signInWith('dan@example.com', legacy[0]!)).toBe(dashboard())
    // New codes, asked for with a code from the app: keyed from the key now sealed with S1.
    const signedIn = new Browser()
    await signIn(signedIn, url(), 'dan@example.com')
    await giveCode(signedIn, url(), legacy[1]!)
    expect((await sessionOf(signedIn, url()))?.user.id).toBe(user.id)
    const renewed = await post(signedIn, url(), 'two-factor/recovery-codes', { code: codeAt(secret, T0 + 60_000) })
    expect(renewed.status).toBe(200)
    const codes = recoveryCodesOf(await renewed.text())
    expect(codes).toHaveLength(10)

    deploy({ AUTH_SECRET: S1 })
    freezeClock(T0 + 90_000)
    expect(await signInWith('dan@example.com', codes[0]!)).toBe(dashboard())
    expect(await signInWith('dan@example.com', legacy[2]!)).toBeNull()
    expect(await signInWith('dan@example.com', codeAt(secret, T0 + 90_000))).toBe(dashboard())
  })
})
