/**
 * The passkey callback without a browser: a software authenticator (test/support/software-authenticator.ts)
 * registers a passkey for a signed-in user and signs in with it, through `@simplewebauthn/server`'s
 * real verification, and the callback's refusals: a registration by a browser not signed in, or with
 * a challenge issued to another user, a replayed assertion, a cloned authenticator (its counter, and
 * two sign-ins racing), a user not verified, posts that are no WebAuthn response, a bad action, a
 * GET. The browser suite (test/passkey/browser.test.ts) runs the same ceremonies in Chromium.
 */
import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import { KnexAdapter } from 'portcullis/adapters/knex'
import request from 'supertest'
import type { PasskeyInfo } from 'portcullis'
import { fetchCsrfToken } from '../support/flow.js'
import { SoftwareAuthenticator } from '../support/software-authenticator.js'
import { passkeyApp, passkeyDatabase, SECRET, type PasskeyApp } from './passkey-app.js'

const ORIGIN = 'https://app.example.com'
let db: Knex
let app: PasskeyApp
const events: { name: string; userId: string; isNewUser?: boolean | undefined }[] = []
let users = 0

beforeAll(async () => {
  db = await passkeyDatabase()
  app = passkeyApp(db, ORIGIN, {
    config: {
      // Every request comes from one address here; the suite asks for more than 50 challenges.
      rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
      events: {
        passkeyAdded: ({ userId }: { userId: string; passkey: PasskeyInfo }) => void events.push({ name: 'passkeyAdded', userId }),
        linkAccount: ({ user }) => void events.push({ name: 'linkAccount', userId: user.id! }),
        signIn: ({ user, account, isNewUser }) => void (account?.type === 'webauthn' && events.push({ name: 'signIn', userId: user.id!, isNewUser })),
      },
    },
  })
})
afterAll(() => db?.destroy())


/** A stored user, and an agent signed in as that user (the credentials provider). */
async function signedInUser(on = app): Promise<{ agent: request.Agent; userId: string }> {
  const email = `ceremony${++users}@example.com`
  const user = await on.adapter.createUser({ email, name: null, emailVerified: null })
  const agent = request.agent(on.app)
  await signInAs(agent, email)
  return { agent, userId: user.id }
}

async function optionsFor(agent: request.Agent, action: 'register' | 'authenticate') {
  const response = await agent.get(`/api/auth/webauthn-options/passkey?action=${action}`).expect(200)
  return response.body.options
}

// The CSRF token is fetched before the POST is made: an agent's request takes the cookies it has when made.
async function post(agent: request.Agent, fields: Record<string, unknown>) {
  const csrfToken = await fetchCsrfToken(agent)
  return agent.post('/api/auth/callback/passkey').type('form').send({ csrfToken, ...fields })
}

async function signInAs(agent: request.Agent, email: string): Promise<void> {
  const csrfToken = await fetchCsrfToken(agent)
  await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, email }).expect(302)
}

/** `authenticator`'s answer to `agent`'s registration options, posted with `fields` (a callbackUrl, say). */
async function postRegistration(agent: request.Agent, authenticator: SoftwareAuthenticator, fields: Record<string, unknown> = {}) {
  return post(agent, { action: 'register', ...fields, data: JSON.stringify(authenticator.register(await optionsFor(agent, 'register'))) })
}

/** A user with a registered passkey, and the authenticator holding it. */
async function registered(): Promise<{ authenticator: SoftwareAuthenticator; userId: string }> {
  const { agent, userId } = await signedInUser()
  const authenticator = new SoftwareAuthenticator(ORIGIN)
  const response = await postRegistration(agent, authenticator)
  expect(response.headers.location).toBe(`${new URL(response.request.url).origin}/api/auth/passkeys`)
  return { authenticator, userId }
}

const location = (response: { headers: Record<string, string> }) => new URL(response.headers.location!)

/** A new browser signing in with `authenticator`'s passkey; where it was sent. */
async function passkeySignIn(authenticator: SoftwareAuthenticator, on = app): Promise<{ browser: request.Agent; to: URL }> {
  const browser = request.agent(on.app)
  const response = await post(browser, { data: JSON.stringify(authenticator.authenticate(await optionsFor(browser, 'authenticate'))) })
  return { browser, to: location(response) }
}
const clearsChallenge = (response: { headers: Record<string, unknown> }) => ((response.headers['set-cookie'] as string[] | undefined) ?? []).some((cookie) => /^authjs\.challenge=;/.test(cookie))
/** What was logged since the last `clear()`, as text. */
const logged = () => app.logger.lines.map((line) => line.message.map(String).join(' ')).join('\n')
const clientData = (fields: unknown) => Buffer.from(JSON.stringify(fields)).toString('base64url')

describe('registering a passkey', () => {
  it('stores the passkey with its webauthn account, fires linkAccount and passkeyAdded, and goes back to the passkeys page', async () => {
    events.length = 0
    const { userId } = await registered()
    const stored = await db('Authenticator').where({ userId })
    expect(stored).toHaveLength(1)
    expect(await db('Account').where({ userId, type: 'webauthn' }).select('provider', 'providerAccountId')).toEqual([{ provider: 'passkey', providerAccountId: stored[0].providerAccountId }])
    expect(events).toEqual([
      { name: 'linkAccount', userId },
      { name: 'passkeyAdded', userId },
    ])
  })

  it('registers with an adapter that has no second-factor methods (as Auth.js\'s have none), the second factor off', async () => {
    const withoutTwoFactor = Object.fromEntries(Object.entries(KnexAdapter(db)).filter(([name]) => !/TwoFactor|RecoveryCode/.test(name)))
    const other = passkeyApp(db, ORIGIN, { config: { adapter: withoutTwoFactor } })
    const { agent, userId } = await signedInUser(other)
    const response = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN))
    expect(location(response).pathname).toBe('/api/auth/passkeys')
    expect(await db('Authenticator').where({ userId })).toHaveLength(1)
  })

  it('goes to the callbackUrl given with the registration', async () => {
    const { agent } = await signedInUser()
    const response = await postRegistration(agent, new SoftwareAuthenticator(ORIGIN), { callbackUrl: '/settings/security' })
    expect(location(response).pathname).toBe('/settings/security')
  })

  it('refuses a registration from a browser that is not signed in (the error page, nothing stored)', async () => {
    const { agent } = await signedInUser()
    const data = JSON.stringify(new SoftwareAuthenticator(ORIGIN).register(await optionsFor(agent, 'register')))
    const stranger = request.agent(app.app)
    const before = await db('Authenticator').count({ n: '*' })
    const response = await post(stranger, { action: 'register', data })
    expect(Object.fromEntries(location(response).searchParams)).toMatchObject({ error: 'WebAuthnVerificationError', code: 'not_signed_in' })
    expect(await db('Authenticator').count({ n: '*' })).toEqual(before)
    expect(JSON.stringify(app.logger.lines)).toContain('registering a passkey needs a signed-in user')
  })

  it('stores the transports the registration reports, and none when it reports none', async () => {
    const cases: [SoftwareAuthenticator['transports'], string | null][] = [
      [['internal', 'hybrid'], 'internal,hybrid'],
      [[], null],
      [undefined, null],
    ]
    for (const [transports, stored] of cases) {
      const { agent, userId } = await signedInUser()
      const authenticator = new SoftwareAuthenticator(ORIGIN)
      authenticator.transports = transports
      await postRegistration(agent, authenticator)
      expect(await db('Authenticator').where({ userId }).select('transports')).toEqual([{ transports: stored }])
    }
  })

  it("refuses a registration whose challenge was issued to another user than the one signed in now: back to the passkeys page with the code, the challenge cleared", async () => {
    const first = await signedInUser()
    const options = await optionsFor(first.agent, 'register')
    // The same browser signs in as someone else before answering.
    const email = `ceremony${++users}@example.com`
    await app.adapter.createUser({ email, name: null, emailVerified: null })
    await signInAs(first.agent, email)
    const response = await post(first.agent, { action: 'register', data: JSON.stringify(new SoftwareAuthenticator(ORIGIN).register(options)) })
    const back = location(response)
    expect(back.pathname).toBe('/api/auth/passkeys')
    expect(Object.fromEntries(back.searchParams)).toEqual({ error: 'WebAuthnVerificationError', code: 'not_signed_in' })
    expect(clearsChallenge(response)).toBe(true)
    expect(await db('Authenticator').where({ userId: first.userId })).toEqual([])
    expect(JSON.stringify(app.logger.lines)).toContain('The passkey registration challenge was issued to another user than the one signed in now.')
  })
})

describe('signing in with a passkey', () => {
  it('signs in as its user (authenticate is the default action), fires signIn, stores the counter, and clears the challenge', async () => {
    const { authenticator, userId } = await registered()
    events.length = 0
    const browser = request.agent(app.app)
    const response = await post(browser, { callbackUrl: '/dashboard', data: JSON.stringify(authenticator.authenticate(await optionsFor(browser, 'authenticate'))) })
    expect(location(response).pathname).toBe('/dashboard')
    expect(clearsChallenge(response)).toBe(true)
    expect((await browser.get('/me')).body?.user?.id).toBe(userId)
    expect(events).toEqual([{ name: 'signIn', userId, isNewUser: false }])
    expect((await db('Authenticator').where({ userId }).first()).counter).toBe(1)
  })

  it('signs in again and again with a passkey that counts its signatures, storing each new counter', async () => {
    const { authenticator, userId } = await registered()
    for (const counter of [1, 2, 3]) {
      const { browser, to } = await passkeySignIn(authenticator)
      expect(to.searchParams.get('error')).toBeNull()
      expect((await browser.get('/me')).body?.user?.id).toBe(userId)
      expect((await db('Authenticator').where({ userId }).first()).counter).toBe(counter)
    }
  })

  it('signs in again and again with a synced passkey, whose signature counter stays 0', async () => {
    const { authenticator, userId } = await registered()
    authenticator.countsSignatures = false
    for (let time = 0; time < 2; time++) {
      const { browser, to } = await passkeySignIn(authenticator)
      expect(to.searchParams.get('error')).toBeNull()
      expect((await browser.get('/me')).body?.user?.id).toBe(userId)
    }
    expect((await db('Authenticator').where({ userId }).first()).counter).toBe(0)
  })

  it('refuses an assertion whose counter is the one stored (a clone that signed as often as the original) or 0 after counting, and keeps the stored counter', async () => {
    const { authenticator, userId } = await registered()
    expect((await passkeySignIn(authenticator)).to.searchParams.get('error')).toBeNull()
    // The clone's counter is where the original's was before that sign-in: its next assertion says 1 again.
    authenticator.credentials.at(-1)!.counter = 0
    app.logger.clear()
    const clone = await passkeySignIn(authenticator)
    expect(Object.fromEntries(clone.to.searchParams)).toMatchObject({ error: 'WebAuthnVerificationError', code: 'counter_replayed' })
    expect(logged()).toContain("The passkey's signature counter went from 1 to 1: the response comes from a cloned authenticator")
    expect((await clone.browser.get('/me')).body).toBeNull()
    // Nor may a passkey that counted drop to 0, as a synced one would report.
    authenticator.credentials.at(-1)!.counter = 0
    authenticator.countsSignatures = false
    expect((await passkeySignIn(authenticator)).to.searchParams.get('code')).toBe('counter_replayed')
    expect((await db('Authenticator').where({ userId }).first()).counter).toBe(1)
  })

  it('of two sign-ins that present the same counter at once (a clone used beside the original), refuses one', async () => {
    const { authenticator, userId } = await registered()
    authenticator.countsSignatures = false
    authenticator.credentials.at(-1)!.counter = 5
    // Both sign-ins read the stored passkey (counter 0) before either stores its counter.
    const stored = KnexAdapter(db)
    let reads = 0
    let bothRead!: () => void
    const gate = new Promise<void>((resolve) => (bothRead = resolve))
    const getAuthenticator = async (id: string) => {
      const found = await stored.getAuthenticator(id)
      if (++reads === 2) bothRead()
      await gate
      return found
    }
    const gated = passkeyApp(db, ORIGIN, { config: { adapter: { ...stored, getAuthenticator } } })
    const both = await Promise.all([passkeySignIn(authenticator, gated), passkeySignIn(authenticator, gated)])
    expect(both.map(({ to }) => to.searchParams.get('code')).sort()).toEqual(['counter_conflict', null])
    expect(JSON.stringify(gated.logger.lines)).toContain('Another sign-in with this passkey stored its counter at the same moment')
    const sessions = await Promise.all(both.map(async ({ browser }) => (await browser.get('/me')).body?.user?.id ?? null))
    expect(sessions.filter(Boolean)).toEqual([userId])
    expect((await db('Authenticator').where({ userId }).first()).counter).toBe(5)
  })

  it('uses a challenge once: the same assertion posted again is refused', async () => {
    const { authenticator } = await registered()
    const browser = request.agent(app.app)
    const data = JSON.stringify(authenticator.authenticate(await optionsFor(browser, 'authenticate')))
    expect(location(await post(browser, { data })).searchParams.get('error')).toBeNull()
    const again = request.agent(app.app)
    const replayed = await post(again, { data })
    expect(location(replayed).searchParams.get('error')).toBe('WebAuthnVerificationError')
    expect((await again.get('/me')).body).toBeNull()
  })

  it('a signIn callback that refuses: AccessDenied, no session, and the challenge spent and cleared', async () => {
    const { authenticator } = await registered()
    const strict = passkeyApp(db, ORIGIN, { config: { callbacks: { signIn: () => false } } })
    const browser = request.agent(strict.app)
    const issued = await browser.get('/api/auth/webauthn-options/passkey?action=authenticate').expect(200)
    const challengeCookie = (issued.headers['set-cookie'] as unknown as string[]).find((cookie) => cookie.startsWith('authjs.challenge='))!.split(';')[0]!
    const data = JSON.stringify(authenticator.authenticate(issued.body.options))
    const response = await post(browser, { data })
    expect(location(response).searchParams.get('error')).toBe('AccessDenied')
    expect(clearsChallenge(response)).toBe(true)
    expect((await browser.get('/me')).body).toBeNull()
    // A copy of the cookie kept by an attacker names a challenge that is used.
    const copy = request.agent(strict.app)
    copy.jar.setCookie(challengeCookie)
    const again = await post(copy, { data })
    expect(location(again).searchParams.get('code')).toBe('challenge_used')
  })

  it('an assertion that does not verify: refused with its code, no session, the challenge cleared', async () => {
    const { authenticator } = await registered()
    const browser = request.agent(app.app)
    const assertion = authenticator.authenticate(await optionsFor(browser, 'authenticate'))
    const signature = Buffer.from(assertion.response.signature, 'base64url')
    signature[signature.length - 1]! ^= 1
    app.logger.clear()
    const response = await post(browser, { data: JSON.stringify({ ...assertion, response: { ...assertion.response, signature: signature.toString('base64url') } }) })
    expect(location(response).searchParams.get('code')).toBe('verification_failed')
    expect(logged()).toContain('The passkey sign-in response was refused: ')
    expect(clearsChallenge(response)).toBe(true)
    expect((await browser.get('/me')).body).toBeNull()
  })
})

describe('posts that are not what a browser sends', () => {
  type Assertion = ReturnType<SoftwareAuthenticator['authenticate']>
  const withClientData = (assertion: Assertion, encoded: string) => JSON.stringify({ ...assertion, response: { ...assertion.response, clientDataJSON: encoded } })
  const NOT_A_RESPONSE = 'The posted data is not a WebAuthn authentication response (JSON with id, type "public-key" and response.clientDataJSON, response.authenticatorData, response.signature).'
  const NOT_CLIENT_DATA = "The response's clientDataJSON is not the JSON a browser makes (type, challenge, origin)."
  // Each case: what is posted (made from a good assertion for the browser's challenge), the code, what is logged.
  const cases: [string, (assertion: Assertion, challenge: string) => string, string, string][] = [
    ['no JSON', () => '{"id":', 'response_invalid', NOT_A_RESPONSE],
    ['JSON null', () => 'null', 'response_invalid', NOT_A_RESPONSE],
    ['a number', () => '42', 'response_invalid', NOT_A_RESPONSE],
    ['another type', (assertion) => JSON.stringify({ ...assertion, type: 'password' }), 'response_invalid', NOT_A_RESPONSE],
    ['an id that is no base64url', (assertion) => JSON.stringify({ ...assertion, id: 'not/base64url!' }), 'response_invalid', NOT_A_RESPONSE],
    ['an id that begins outside base64url', (assertion) => JSON.stringify({ ...assertion, id: `!${assertion.id}` }), 'response_invalid', NOT_A_RESPONSE],
    ['an id over 16 KiB', (assertion) => JSON.stringify({ ...assertion, id: 'A'.repeat(16_385) }), 'response_invalid', NOT_A_RESPONSE],
    ['an id of 16 KiB, no passkey of this site', (assertion) => JSON.stringify({ ...assertion, id: 'A'.repeat(16_384) }), 'unknown_credential', 'No stored passkey has the credential id'],
    ['a response that is a string', (assertion) => JSON.stringify({ ...assertion, response: 'signed' }), 'response_invalid', NOT_A_RESPONSE],
    ['no signature', (assertion) => JSON.stringify({ ...assertion, response: { ...assertion.response, signature: undefined } }), 'response_invalid', NOT_A_RESPONSE],
    ['client data that is no JSON', (assertion) => withClientData(assertion, Buffer.from('nope').toString('base64url')), 'response_invalid', NOT_CLIENT_DATA],
    ['client data that is null', (assertion) => withClientData(assertion, clientData(null)), 'response_invalid', NOT_CLIENT_DATA],
    ['client data without a type', (assertion, challenge) => withClientData(assertion, clientData({ challenge, origin: ORIGIN })), 'response_invalid', NOT_CLIENT_DATA],
    ['client data without a challenge', (assertion) => withClientData(assertion, clientData({ type: 'webauthn.get', origin: ORIGIN })), 'response_invalid', NOT_CLIENT_DATA],
    ['client data without an origin', (assertion, challenge) => withClientData(assertion, clientData({ type: 'webauthn.get', challenge })), 'response_invalid', NOT_CLIENT_DATA],
    ["a registration's client data", (assertion, challenge) => withClientData(assertion, clientData({ type: 'webauthn.create', challenge, origin: ORIGIN })), 'response_invalid', `The response's client data is of type "webauthn.create", not "webauthn.get".`],
    ['a challenge one character longer', (assertion, challenge) => withClientData(assertion, clientData({ type: 'webauthn.get', challenge: `${challenge}A`, origin: ORIGIN })), 'challenge_mismatch', "The response signs another challenge than this browser's challenge cookie holds"],
    ['another origin', (assertion, challenge) => withClientData(assertion, clientData({ type: 'webauthn.get', challenge, origin: 'https://app.example.com.evil.test' })), 'origin_mismatch', 'The browser signed the passkey response for https://app.example.com.evil.test, not https://app.example.com'],
  ]

  it.each(cases)('a sign-in with %s: refused with its code, said in the log, no session, the challenge cleared', async (_name, make, code, message) => {
    const { authenticator } = await registered()
    app.logger.clear()
    const browser = request.agent(app.app)
    const options = await optionsFor(browser, 'authenticate')
    const response = await post(browser, { data: make(authenticator.authenticate(options), options.challenge) })
    expect(Object.fromEntries(location(response).searchParams)).toMatchObject({ error: 'WebAuthnVerificationError', code })
    expect(logged()).toContain(message)
    expect(clearsChallenge(response)).toBe(true)
    expect((await browser.get('/me')).body).toBeNull()
  })

  it('a registration without its attestation object: refused, saying what a registration response holds, nothing stored', async () => {
    const { agent, userId } = await signedInUser()
    app.logger.clear()
    const registration = new SoftwareAuthenticator(ORIGIN).register(await optionsFor(agent, 'register'))
    const response = await post(agent, { action: 'register', data: JSON.stringify({ ...registration, response: { ...registration.response, attestationObject: undefined } }) })
    expect(location(response).searchParams.get('code')).toBe('response_invalid')
    expect(logged()).toContain('The posted data is not a WebAuthn registration response (JSON with id, type "public-key" and response.clientDataJSON, response.attestationObject).')
    expect(await db('Authenticator').where({ userId })).toEqual([])
  })

  it('a passkey registered again (an authenticator that ignores excludeCredentials): refused, the stored one unchanged', async () => {
    const { authenticator, userId } = await registered()
    app.logger.clear()
    const [before] = await db('Authenticator').where({ userId })
    const agent = request.agent(app.app)
    await signInAs(agent, (await app.adapter.getUser(userId))!.email!)
    const response = await post(agent, { action: 'register', data: JSON.stringify(authenticator.register(await optionsFor(agent, 'register'), authenticator.credentials.at(-1)!)) })
    expect(location(response).searchParams.get('code')).toBe('credential_exists')
    expect(logged()).toContain('This passkey is registered already.')
    expect(await db('Authenticator').where({ userId })).toEqual([before])
  })
})

describe('the registration options', () => {
  it('ask for a discoverable passkey that verifies the user, filed under a user handle derived from the user id', async () => {
    const { agent, userId } = await signedInUser()
    const { email } = (await app.adapter.getUser(userId))!
    const options = await optionsFor(agent, 'register')
    expect(options.authenticatorSelection).toEqual({ residentKey: 'required', requireResidentKey: true, userVerification: 'required' })
    // Kept from version to version: a password manager files a user's passkeys under their handle.
    const handle = createHmac('sha256', SECRET).update(`portcullis webauthn user handle\0${userId}`).digest('base64url')
    expect(options.user).toEqual({ id: handle, name: email, displayName: email })
  })
})

describe('user verification', () => {
  it('when required (the default), refuses a registration and an assertion from an authenticator that did not verify the user', async () => {
    const { agent, userId } = await signedInUser()
    const unverified = new SoftwareAuthenticator(ORIGIN)
    unverified.verifiesUser = false
    app.logger.clear()
    const registration = await postRegistration(agent, unverified)
    expect(location(registration).searchParams.get('code')).toBe('verification_failed')
    expect(logged()).toContain('The passkey registration response was refused: ')
    expect(await db('Authenticator').where({ userId })).toEqual([])

    const { authenticator } = await registered()
    authenticator.verifiesUser = false
    const { browser, to } = await passkeySignIn(authenticator)
    expect(to.searchParams.get('code')).toBe('verification_failed')
    expect((await browser.get('/me')).body).toBeNull()
  })

  it('when "preferred", registers and signs in with an authenticator that only tests presence', async () => {
    const lenient = passkeyApp(db, ORIGIN, { passkey: { userVerification: 'preferred' } })
    const { agent, userId } = await signedInUser(lenient)
    const authenticator = new SoftwareAuthenticator(ORIGIN)
    authenticator.verifiesUser = false
    const registration = await postRegistration(agent, authenticator)
    expect(location(registration).searchParams.get('error')).toBeNull()
    const { browser, to } = await passkeySignIn(authenticator, lenient)
    expect(to.searchParams.get('error')).toBeNull()
    expect((await browser.get('/me')).body?.user?.id).toBe(userId)
  })
})

describe('the route', () => {
  it('refuses an action other than authenticate and register, and a GET', async () => {
    const browser = request.agent(app.app)
    const bad = await post(browser, { action: 'steal', data: '{}' })
    expect([bad.status, bad.body]).toEqual([400, { error: 'InvalidRequest', message: 'POST /callback/passkey: action must be "authenticate" or "register".' }])
    const get = await browser.get('/api/auth/callback/passkey').set('Accept', 'application/json')
    expect([get.status, get.body]).toEqual([400, { error: 'UnknownAction', message: 'The passkey callback takes a POST of the passkey response.' }])
  })
})
