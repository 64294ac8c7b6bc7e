/**
 * Issue 62, item 1: in development without AUTH_SECRET, a restart locked out every user who had
 * turned on two-step verification (their TOTP key and recovery codes were sealed with a secret made
 * for that process alone). The development secret is kept in a file now (src/config/dev-secret.ts):
 * two `Portcullis()` calls are two runs of the app, each with what it reads from the disk.
 */
import { afterAll, afterEach, beforeAll, expect, it, jest } from '@jest/globals'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { closeAll } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { isolateEnv } from '../support/env.js'
import { closeListeners, listen, sessionOf, type Listener } from '../support/oauth-app.js'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { Browser, codeAt, enrol, freezeClock, giveCode, mountTwoFactorApp, signIn, T0 } from './two-factor-app.js'

isolateEnv(['NODE_ENV', 'AUTH_SECRET', 'LEGACYAUTH_SECRET', 'AUTH_SECRET_1', 'AUTH_SECRET_2', 'AUTH_SECRET_3'])

let listener: Listener
let appDirectory: string
const startedIn = process.cwd()
beforeAll(async () => {
  listener = await listen()
  appDirectory = mkdtempSync(join(tmpdir(), 'portcullis-restart-'))
  process.chdir(appDirectory)
})
afterAll(async () => {
  process.chdir(startedIn)
  rmSync(appDirectory, { recursive: true, force: true })
  await closeListeners()
  await closeAll()
})
afterEach(() => {
  jest.useRealTimers()
})

await describeWithDatabase('sqlite', 'a restart in development without AUTH_SECRET (SQLite)', (server) => {
  const db = migratedDatabase(server)

  it('keeps the TOTP keys and recovery codes of enrolled users working', async () => {
    freezeClock(T0)
    process.env.NODE_ENV = 'development'
    const warnings: string[] = []
    const logger = { error: () => {}, debug: () => {}, warn: (code: string, ...message: unknown[]) => void (code === 'MissingSecret' && warnings.push(`${code}: ${message.join(' ')}`)) }
    // The first run: no secret anywhere; the development secret is made.
    mountTwoFactorApp(listener, db.knex, { secret: undefined, logger })
    expect(warnings).toEqual([expect.stringMatching(/^MissingSecret: No AUTH_SECRET set: using the development secret made now in .*dev-secret \(git-ignored\)/)])
    const user = await KnexAdapter(db.knex).createUser!({ email: 'ada@example.com', emailVerified: null, name: null, image: null })
    const browser = new Browser()
    await signIn(browser, listener.url, 'ada@example.com')
    const { secret, recoveryCodes } = await enrol(browser, listener.url, T0)

    // The second run, on the same database and directory: it reads the secret of the first.
    mountTwoFactorApp(listener, db.knex, { secret: undefined, logger })
    expect(warnings[1]).toMatch(/using the development secret kept in .*dev-secret/)
    freezeClock(T0 + 60_000)
    const afterRestart = new Browser()
    expect((await signIn(afterRestart, listener.url, 'ada@example.com')).headers.get('location')).toBe(`${listener.url}/api/auth/two-factor`)
    expect((await giveCode(afterRestart, listener.url, codeAt(secret, T0 + 60_000))).headers.get('location')).toBe(`${listener.url}/dashboard`)
    expect((await sessionOf(afterRestart, listener.url))?.user.id).toBe(user.id)
    // The session of the first run is still good, and so is a recovery code.
    expect((await sessionOf(browser, listener.url))?.user.id).toBe(user.id)
    const withRecoveryCode = new Browser()
    await signIn(withRecoveryCode, listener.url, 'ada@example.com')
    expect((await giveCode(withRecoveryCode, listener.url, recoveryCodes[0]!)).headers.get('location')).toBe(`${listener.url}/dashboard`)
  })
})
