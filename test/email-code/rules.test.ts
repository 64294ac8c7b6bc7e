/**
 * Sign-in codes beside the rest of Portcullis: the second factor of an enrolled user (the code is a
 * first factor of kind 'email', so `requireForEmail` applies), the logs (no code in any line, a
 * failed mail's error included), and the checks made at init.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import { inspect } from 'node:util'
import Portcullis, { type Adapter } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import EmailCode from 'portcullis/providers/email-code'
import Nodemailer from 'portcullis/providers/nodemailer'
import Password from 'portcullis/providers/password'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { codeAt, enrol, freezeClock, giveCode, T0 } from '../two-factor/two-factor-app.js'
import { askForCode, Browser, codeForm, codeOf, mountCodeApp, otherCode, typeCode } from './email-code-app.js'

// The suite's SMTP server and app listener, as the e-mail link suites have them.
const rig = useEmailRig()
afterEach(() => {
  jest.useRealTimers()
})

await describeWithDatabase('sqlite', 'sign-in codes with the rest of Portcullis', (server) => {
  const db = migratedDatabase(server)

  /** Asks for a code in `browser` and types it: the callback's answer. */
  async function signInWithCode(browser: Browser, address: string, callbackUrl = '/dashboard'): Promise<Response> {
    const page = await askForCode(browser, rig.app.url, address, { callbackUrl })
    const form = await codeForm(browser, page, codeOf(await rig.smtp.nextMessage()))
    return browser.request(form.url, { body: form.body })
  }

  it('asks an enrolled user for the second factor after the code (requireForEmail), and signs in after it', async () => {
    freezeClock(T0)
    mountCodeApp(rig.app, db.knex, rig.smtp, { twoFactor: { issuer: 'Portcullis tests' } })
    const owner = new Browser()
    expect((await signInWithCode(owner, 'ada@example.com')).headers.get('location')).toBe(`${rig.app.url}/dashboard`)
    const { secret } = await enrol(owner, rig.app.url, T0)

    freezeClock(T0 + 60_000)
    const phone = new Browser()
    const afterCode = await signInWithCode(phone, 'ada@example.com')
    expect(afterCode.headers.get('location')).toBe(`${rig.app.url}/api/auth/two-factor`)
    expect(await sessionOf(phone, rig.app.url)).toBeNull()
    const second = await giveCode(phone, rig.app.url, codeAt(secret, T0 + 60_000))
    expect(second.headers.get('location')).toBe(`${rig.app.url}/dashboard`)
    expect((await sessionOf(phone, rig.app.url))?.user.email).toBe('ada@example.com')
  })

  it('signs an enrolled user in with the code alone under requireForEmail: false', async () => {
    freezeClock(T0)
    mountCodeApp(rig.app, db.knex, rig.smtp, { twoFactor: { issuer: 'Portcullis tests', requireForEmail: false } })
    const owner = new Browser()
    await signInWithCode(owner, 'ada@example.com')
    await enrol(owner, rig.app.url, T0)
    const phone = new Browser()
    expect((await signInWithCode(phone, 'ada@example.com')).headers.get('location')).toBe(`${rig.app.url}/dashboard`)
  })

  it('never logs a code: not with debug on through a whole sign-in with a wrong try, nor when sending fails with the code in its error', async () => {
    const logger = recordingLogger()
    mountCodeApp(rig.app, db.knex, rig.smtp, { debug: true, logger })
    const browser = new Browser()
    const page = await askForCode(browser, rig.app.url, 'ada@example.com')
    const code = codeOf(await rig.smtp.nextMessage())
    const form = await codeForm(browser, page, code)
    expect((await typeCode(browser, form, otherCode(code))).status).toBe(400)
    expect((await typeCode(browser, form, code)).status).toBe(302)

    let sent = ''
    mountCodeApp(rig.app, db.knex, rig.smtp, { debug: true, logger }, {
      sendCode: ({ code: mailed, identifier }) => {
        sent = mailed
        throw new Error(`SMTP 550: mailbox ${identifier} refused the message with ${mailed}`)
      },
    })
    const failed = await askForCode(new Browser(), rig.app.url, 'bob@example.com')
    expect(redirectOf(failed).error).toBe('EmailSignInError')
    expect(sent).toMatch(/^\d{6}$/)
    expect(logger.codes('error')).toContain('EmailSignInError')
    // The unsent code's rows are deleted with it.
    expect(await db.knex('VerificationToken').select()).toEqual([])
    const logged = inspect(logger.lines, { depth: 10 })
    expect(logged).toContain('EmailSignInError')
    expect(logged).not.toContain(code)
    expect(logged).not.toContain(sent)
    expect(logged).not.toContain('bob@example.com')
  })
})

it('refuses at init: no adapter, a maxAge out of range, no way to send the mail', () => {
  const methods = ['createVerificationToken', 'useVerificationToken', 'getUserByEmail', 'createUser', 'updateUser']
  const adapterWith = (names: string[]): Adapter => Object.fromEntries(names.map((name) => [name, async () => null]))
  const init = (provider: ReturnType<typeof EmailCode>, adapter: Adapter | null = adapterWith(methods)) => () =>
    Portcullis({ secret: SECRET, session: { strategy: 'jwt' }, providers: [provider], ...(adapter && { adapter }) })
  expect(init(EmailCode({ server: 'console' }), null)).toThrow(/E-mail code sign-in \(provider "email-code"\) needs an adapter with createVerificationToken, useVerificationToken, getUserByEmail/)
  expect(init(EmailCode({ server: 'console' }), adapterWith(methods.filter((name) => name !== 'useVerificationToken')))).toThrow(/needs an adapter with useVerificationToken: its codes/)
  expect(init(EmailCode({ server: 'console', maxAge: 0 }))).toThrow(/maxAge must be a number of seconds above 0 and at most 3600/)
  expect(init(EmailCode({ server: 'console', maxAge: 7200 }))).toThrow(/maxAge must be/)
  expect(init(EmailCode({ from: 'a@example.com' }))).toThrow(/has no way to send its mail: set AUTH_EMAIL_SERVER/)
  expect(init(EmailCode({ server: 'console', maxAge: 300 }))).not.toThrow()
  expect(init(EmailCode({ sendCode: () => {} }))).not.toThrow()
})

it("is no mail route of the password provider's: beside a Nodemailer provider, Password still sends through the Nodemailer's server", async () => {
  const knex = (await import('knex')).default({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  try {
    const providers = [EmailCode({ sendCode: () => {} }), Nodemailer({ server: 'console', from: 'Nodemailer <n@example.com>' }), Password()]
    expect(() => Portcullis({ secret: SECRET, adapter: KnexAdapter(knex), providers })).not.toThrow()
    // Its own SMTP route is kept apart too: Password alone beside it has no server to borrow.
    expect(() => Portcullis({ secret: SECRET, adapter: KnexAdapter(knex), providers: [EmailCode({ server: 'console' }), Password()] })).toThrow(/has nowhere to send them/)
  } finally {
    await knex.destroy()
  }
})
