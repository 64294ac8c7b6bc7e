/**
 * Passkeys for users with the second factor on, without a browser (the software authenticator of
 * test/support): adding a passkey needs a current code or an unused recovery code, checked as turning
 * the second factor off checks it (a code good once, the same per-user count), and a passkey whose
 * authenticator did not verify the user (`userVerification: 'preferred'`, UV flag 0) leads to the
 * second page like a password does. Users without the second factor, and assertions that verified
 * the user, go on as before. Clock frozen (only `Date`) where codes are made.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals'
import type { Knex } from 'knex'
import type { CallbacksOptions } from 'portcullis'
import request from 'supertest'
import { fetchCsrfToken } from '../support/flow.js'
import { SoftwareAuthenticator } from '../support/software-authenticator.js'
import { passkeyApp, passkeyDatabase, type PasskeyApp } from '../passkey/passkey-app.js'
import { codeAt, freezeClock, recoveryCodesOf, T0 } from './two-factor-app.js'

type SignInParams = Parameters<NonNullable<CallbacksOptions['signIn']>>[0]

const ORIGIN = 'https://app.example.com'
const PENDING = 'authjs.two-factor'
let db: Knex
let app: PasskeyApp
let limited: PasskeyApp
const signIns: SignInParams[] = []
const added: string[] = []
let users = 0

beforeAll(async () => {
  db = await passkeyDatabase()
  const config = {
    twoFactor: { issuer: 'Portcullis tests' },
    // Every request comes from one address here.
    rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
    callbacks: { signIn: (params: SignInParams) => (signIns.push(params), true) },
    events: { passkeyAdded: ({ userId }: { userId: string }) => void added.push(userId) },
  }
  // 'preferred': the authenticator may answer with or without verifying the user.
  app = passkeyApp(db, ORIGIN, { passkey: { userVerification: 'preferred' }, config })
  limited = passkeyApp(db, ORIGIN, { passkey: { userVerification: 'preferred' }, config: { ...config, rateLimit: { ...config.rateLimit, identifier: { attempts: 3, windowSeconds: 900 } } } })
})
afterAll(() => db?.destroy())
afterEach(() => {
  jest.useRealTimers()
})

// The CSRF token is fetched before the POST is made: an agent's request takes the cookies it has when made.
async function post(agent: request.Agent, path: string, fields: Record<string, unknown>) {
  const csrfToken = await fetchCsrfToken(agent)
  return agent.post(`/api/auth/${path}`).type('form').send({ csrfToken, ...fields })
}

const location = (response: { headers: Record<string, string> }) => new URL(response.headers.location!)
const query = (response: { headers: Record<string, string> }) => Object.fromEntries(location(response).searchParams)
const cookieSet = (response: { headers: Record<string, unknown> }, name: string) => ((response.headers['set-cookie'] as string[] | undefined) ?? []).some((cookie) => cookie.startsWith(`${name}=`) && !cookie.startsWith(`${name}=;`))
const passkeysOf = async (userId: string) => ({
  authenticators: (await db('Authenticator').where({ userId })).length,
  accounts: (await db('Account').where({ userId, type: 'webauthn' })).length,
})

/** A stored user, and an agent signed in as that user (the credentials provider). */
async function signedInUser(on = app): Promise<{ agent: request.Agent; userId: string }> {
  const email = `two-factor-passkey${++users}@example.com`
  const user = await on.adapter.createUser({ email, name: null, emailVerified: null })
  const agent = request.agent(on.app)
  expect((await post(agent, 'callback/credentials', { email })).status).toBe(302)
  return { agent, userId: user.id }
}

/** A signed-in user who enrolled at T0 through the settings page (the clock left at T0): the key and the recovery codes. */
async function enrolledUser(on = app): Promise<{ agent: request.Agent; userId: string; secret: string; recoveryCodes: string[] }> {
  freezeClock(T0)
  const { agent, userId } = await signedInUser(on)
  const page = (await agent.get('/api/auth/two-factor/setup').expect(200)).text
  const secret = /<code class="secret">([^<]+)<\/code>/.exec(page)![1]!.replace(/\s/g, '')
  const confirmed = await post(agent, 'two-factor/setup', { code: codeAt(secret, T0) })
  expect(confirmed.status).toBe(200)
  return { agent, userId, secret, recoveryCodes: recoveryCodesOf(confirmed.text) }
}

/** `authenticator`'s answer to `agent`'s registration options, posted with `fields` (the code). */
async function postRegistration(agent: request.Agent, authenticator: SoftwareAuthenticator, fields: Record<string, unknown> = {}) {
  const { options } = (await agent.get('/api/auth/webauthn-options/passkey?action=register').expect(200)).body
  return post(agent, 'callback/passkey', { action: 'register', ...fields, data: JSON.stringify(authenticator.register(options)) })
}

/** A new browser signing in with `authenticator`'s passkey, headed for /dashboard. */
async function passkeySignIn(authenticator: SoftwareAuthenticator): Promise<{ browser: request.Agent; response: request.Response }> {
  const browser = request.agent(app.app)
  const { options } = (await browser.get('/api/auth/webauthn-options/passkey').expect(200)).body
  const response = await post(browser, 'callback/passkey', { callbackUrl: '/dashboard', data: JSON.stringify(authenticator.authenticate(options)) })
  return { browser, response }
}

describe('adding a passkey with the second factor on', () => {
  it('refuses a registration without a code (TwoFactor, code_required): nothing stored, no passkeyAdded, the challenge spent', async () => {
    const { agent, userId, secret } = await enrolledUser()
    freezeClock(T0 + 30_000)
    added.length = 0
    for (const fields of [{}, { code: '' }, { code: '   ' }]) {
      const response = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), fields)
      expect(location(response).pathname).toBe('/api/auth/passkeys')
      expect(query(response)).toEqual({ error: 'TwoFactor', code: 'code_required' })
    }
    // The response of a refused post, sent again with a good code, comes too late: its challenge is spent.
    const { options } = (await agent.get('/api/auth/webauthn-options/passkey?action=register').expect(200)).body
    const data = JSON.stringify(new SoftwareAuthenticator(ORIGIN).register(options))
    expect(query(await post(agent, 'callback/passkey', { action: 'register', data }))).toEqual({ error: 'TwoFactor', code: 'code_required' })
    const again = await post(agent, 'callback/passkey', { action: 'register', data, code: codeAt(secret, T0 + 30_000) })
    expect(query(again).error).toBe('WebAuthnVerificationError')
    expect(await passkeysOf(userId)).toEqual({ authenticators: 0, accounts: 0 })
    expect(added).toEqual([])
  })

  it('refuses a wrong code and a replayed one (the enrolment code, then a code that added a passkey already): invalid_code, nothing stored', async () => {
    const { agent, userId, secret } = await enrolledUser()
    freezeClock(T0 + 30_000)
    const wrong = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code: codeAt(secret, T0 + 30_000) === '000000' ? '111111' : '000000' })
    expect(query(wrong)).toEqual({ error: 'TwoFactor', code: 'invalid_code' })
    // The code the enrolment was confirmed with, still within the clock window: good once, used.
    const replayed = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code: codeAt(secret, T0) })
    expect(query(replayed)).toEqual({ error: 'TwoFactor', code: 'invalid_code' })
    expect(await passkeysOf(userId)).toEqual({ authenticators: 0, accounts: 0 })

    const code = codeAt(secret, T0 + 30_000)
    expect(location(await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code })).search).toBe('')
    const twice = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code })
    expect(query(twice)).toEqual({ error: 'TwoFactor', code: 'invalid_code' })
    expect(await passkeysOf(userId)).toEqual({ authenticators: 1, accounts: 1 })
  })

  it('stores the passkey with a current code, and with an unused recovery code (used up by it)', async () => {
    const { agent, userId, secret, recoveryCodes } = await enrolledUser()
    freezeClock(T0 + 30_000)
    added.length = 0
    const withCode = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code: codeAt(secret, T0 + 30_000) })
    expect(location(withCode).href).toBe(`${new URL(withCode.request.url).origin}/api/auth/passkeys`)
    const withRecovery = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code: recoveryCodes[0]!.toUpperCase() })
    expect(location(withRecovery).search).toBe('')
    expect(await passkeysOf(userId)).toEqual({ authenticators: 2, accounts: 2 })
    expect(added).toEqual([userId, userId])
    const reused = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code: recoveryCodes[0] })
    expect(query(reused)).toEqual({ error: 'TwoFactor', code: 'invalid_code' })
    expect(await passkeysOf(userId)).toEqual({ authenticators: 2, accounts: 2 })
  })

  it("counts the codes against the user's window that the second page and turning it off share: a right code after too many wrong ones is refused (RateLimited)", async () => {
    const { agent, userId, secret } = await enrolledUser(limited)
    freezeClock(T0 + 30_000)
    const right = codeAt(secret, T0 + 30_000)
    const wrong = right === '000000' ? '111111' : '000000'
    // Two wrong codes on the registration, one on the disable form: the window of three is used up.
    for (let i = 0; i < 2; i++) expect(query(await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code: wrong })).code).toBe('invalid_code')
    expect((await post(agent, 'two-factor/disable', { code: wrong })).status).toBe(400)
    const refused = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { code: right })
    expect(location(refused).pathname).toBe('/api/auth/passkeys')
    expect(query(refused)).toEqual({ error: 'RateLimited' })
    expect(await passkeysOf(userId)).toEqual({ authenticators: 0, accounts: 0 })
  })

  it('asks for the code on the passkeys page of an enrolled user, and says what was wrong with it', async () => {
    const { agent } = await enrolledUser()
    const page = (await agent.get('/api/auth/passkeys').expect(200)).text
    expect(page).toMatch(/<form method="post" action="\/api\/auth\/callback\/passkey" data-passkey="register"[^>]*>[\s\S]*<input id="passkey-code" type="text" name="code"[^>]* required>[\s\S]*<button type="submit">Add a passkey<\/button>/)
    expect((await agent.get('/api/auth/passkeys?error=TwoFactor&code=invalid_code')).text).toContain('That code is not right, or was used already.')
    expect((await agent.get('/api/auth/passkeys?error=TwoFactor&code=code_required')).text).toContain('Enter a code from your authenticator app (or a recovery code) to add a passkey.')
  })

  it('leaves users without the second factor as they were: no code field, a registration without a code stored', async () => {
    const { agent, userId } = await signedInUser()
    expect((await agent.get('/api/auth/passkeys').expect(200)).text).not.toContain('name="code"')
    const response = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN))
    expect(location(response).search).toBe('')
    expect(await passkeysOf(userId)).toEqual({ authenticators: 1, accounts: 1 })
  })
})

describe('signing in with a passkey with the second factor on', () => {
  /** An enrolled user with a passkey added at T0 + 30 s; `verifiesUser` set on its authenticator afterwards. */
  async function enrolledWithPasskey(verifiesUser: boolean) {
    const user = await enrolledUser()
    freezeClock(T0 + 30_000)
    const authenticator = new SoftwareAuthenticator(ORIGIN)
    expect(location(await postRegistration(user.agent, authenticator, { code: codeAt(user.secret, T0 + 30_000) })).search).toBe('')
    authenticator.verifiesUser = verifiesUser
    return { ...user, authenticator }
  }

  it('sends a passkey that did not verify the user (UV=0) to the second page: no session before the code, the counter stored; the code finishes the passkey sign-in', async () => {
    const { userId, secret, authenticator } = await enrolledWithPasskey(false)
    freezeClock(T0 + 60_000)
    signIns.length = 0
    const { browser, response } = await passkeySignIn(authenticator)
    expect(location(response).pathname).toBe('/api/auth/two-factor')
    expect(cookieSet(response, PENDING)).toBe(true)
    expect((await browser.get('/me')).body).toBeNull()
    expect(signIns).toEqual([])
    // Verified before the second page: a replay of this assertion counts as a cloned key's.
    expect((await db('Authenticator').where({ userId }).first()).counter).toBe(1)

    const wrong = await post(browser, 'two-factor', { code: codeAt(secret, T0 + 60_000) === '000000' ? '111111' : '000000' })
    expect(wrong.status).toBe(400)
    expect((await browser.get('/me')).body).toBeNull()

    const finished = await post(browser, 'two-factor', { code: codeAt(secret, T0 + 60_000) })
    expect(location(finished).pathname).toBe('/dashboard')
    expect((await browser.get('/me')).body?.user?.id).toBe(userId)
    expect(signIns).toHaveLength(1)
    expect(signIns[0]).toMatchObject({ user: { id: userId }, account: { type: 'webauthn', provider: 'passkey', userId }, twoFactor: { method: 'totp' } })
  })

  it('signs a passkey that verified the user (UV=1) in at once, without the second page', async () => {
    const { userId, authenticator } = await enrolledWithPasskey(true)
    signIns.length = 0
    const { browser, response } = await passkeySignIn(authenticator)
    expect(location(response).pathname).toBe('/dashboard')
    expect(cookieSet(response, PENDING)).toBe(false)
    expect((await browser.get('/me')).body?.user?.id).toBe(userId)
    expect(signIns[0]?.twoFactor).toBeUndefined()
  })

  it('signs a UV=0 passkey of a user without the second factor in at once', async () => {
    const { agent, userId } = await signedInUser()
    const authenticator = new SoftwareAuthenticator(ORIGIN)
    authenticator.verifiesUser = false
    await postRegistration(agent, authenticator)
    const { browser, response } = await passkeySignIn(authenticator)
    expect(location(response).pathname).toBe('/dashboard')
    expect((await browser.get('/me')).body?.user?.id).toBe(userId)
  })

  it('signs nobody in when the passkey was removed between the first step and the code (pending_invalid)', async () => {
    const { userId, secret, authenticator } = await enrolledWithPasskey(false)
    freezeClock(T0 + 60_000)
    const { browser, response } = await passkeySignIn(authenticator)
    expect(location(response).pathname).toBe('/api/auth/two-factor')
    await db('Authenticator').where({ userId }).del()
    const finished = await post(browser, 'two-factor', { code: codeAt(secret, T0 + 60_000) })
    expect(query(finished)).toMatchObject({ error: 'TwoFactor', code: 'pending_invalid' })
    expect((await browser.get('/me')).body).toBeNull()
  })
})
