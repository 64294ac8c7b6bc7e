/**
 * The second factor after each kind of first factor, end to end on SQLite with real parts: the
 * Password provider and e-mail links through the in-process SMTP server, OpenID Connect through the
 * in-process oidc-provider, custom Credentials, and the server-side `signIn()` of an app route.
 * Enrolled users reach the second page and no session starts before the code; the sign-in then
 * finishes as its first factor would have (where it was headed, the `signIn` callback told which
 * factor was given, the provider's tokens in the JWT). Clock frozen (only `Date`) where codes are made.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals'
import express from 'express'
import type { CallbacksOptions, JWTCallbackParams, PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import OIDC from 'portcullis/providers/oidc'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { redirectOf, sessionOf, signInWith } from '../support/oauth-app.js'
import { linkOf } from '../support/smtp.js'
import { followLink, mountEmailApp, requestLink, useEmailRig } from '../email/email-app.js'
import { GOOD_PASSWORD, mountPasswordApp, nextLink, verifiedUser } from '../password/password-app.js'
import { Browser, codeAt, csrfOf, enrol, freezeClock, giveCode, mountTwoFactorApp, post, signIn, T0 } from './two-factor-app.js'

type SignInParams = Parameters<NonNullable<CallbacksOptions['signIn']>>[0]

const PENDING = 'authjs.two-factor'
const TWO_FACTOR = { issuer: 'Portcullis tests' }

// One listener for every app (the IdP knows its callback URL), the SMTP server, the IdP.
const rig = useEmailRig()
let idp: TestIdp
beforeAll(async () => {
  idp = await startIdp({ clients: [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [rig.app.callbackUrl('corp')] }] })
})
afterAll(() => idp?.close())
afterEach(() => {
  jest.useRealTimers()
})

const url = () => rig.app.url
const secondPage = () => `${url()}/api/auth/two-factor`

/** Records the `signIn` callback's calls; allows every sign-in. */
function signInRecorder(): { calls: SignInParams[]; callbacks: { signIn: (params: SignInParams) => boolean } } {
  const calls: SignInParams[] = []
  return { calls, callbacks: { signIn: (params) => (calls.push(params), true) } }
}

await describeWithDatabase('sqlite', 'the second factor after each sign-in method (SQLite)', (server) => {
  const db = migratedDatabase(server)
  const createUser = (email: string) => KnexAdapter(db.knex).createUser!({ email, emailVerified: null, name: null, image: null })
  const sessionRows = async () => (await db.knex('Session').count({ n: '*' }))[0]

  /** The Password provider's app at T0 (its signIn calls recorded) with a verified user who enrolled. */
  async function enrolledPasswordUser(): Promise<{ calls: SignInParams[]; secret: string }> {
    freezeClock(T0)
    const { calls, callbacks } = signInRecorder()
    mountPasswordApp(rig.app, db.knex, rig.smtp, { twoFactor: TWO_FACTOR, callbacks })
    const owner = new Browser()
    await verifiedUser(owner, url(), rig.smtp, 'ada@example.com')
    const { secret } = await enrol(owner, url(), T0)
    return { calls, secret }
  }

  it('Password provider: an enrolled user goes to the second page; the session starts after the code, the signIn callback told of it and given only the address', async () => {
    const { calls, secret } = await enrolledPasswordUser()

    freezeClock(T0 + 60_000)
    calls.length = 0
    // A wrong password never reaches the second page.
    const guesser = new Browser()
    const wrong = await post(guesser, url(), 'callback/password', { email: 'ada@example.com', password: 'not the password at all' })
    expect(redirectOf(wrong).error).toBe('CredentialsSignin')
    expect(guesser.cookie(url(), PENDING)).toBeUndefined()

    const laptop = new Browser()
    const first = await post(laptop, url(), 'callback/password', { email: 'ada@example.com', password: GOOD_PASSWORD, callbackUrl: '/dashboard' })
    expect(first.status).toBe(302)
    expect(first.headers.get('location')).toBe(secondPage())
    expect(laptop.cookie(url(), PENDING)).toBeDefined()
    expect(laptop.cookie(url(), 'authjs.session-token')).toBeUndefined()
    expect(await sessionOf(laptop, url())).toBeNull()
    expect(calls).toEqual([])

    expect((await giveCode(laptop, url(), '000000')).status).toBe(400)
    expect(await sessionOf(laptop, url())).toBeNull()
    const second = await giveCode(laptop, url(), codeAt(secret, T0 + 60_000))
    expect(second.status).toBe(302)
    expect(second.headers.get('location')).toBe(`${url()}/dashboard`)
    expect((await sessionOf(laptop, url()))?.user.email).toBe('ada@example.com')
    expect(laptop.cookie(url(), PENDING)).toBeUndefined()
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({ twoFactor: { method: 'totp' }, user: { email: 'ada@example.com' }, account: { provider: 'password' } })
    expect(calls[0]!.credentials).toEqual({ email: 'ada@example.com' })
  })

  // Found by this test: the reset link used to sign in without the second factor.
  it('Password provider: a reset link of an enrolled user sets the new password, but the session still waits for the code', async () => {
    const { calls, secret } = await enrolledPasswordUser()

    // Whoever reads the mailbox asks for a reset link and follows it.
    freezeClock(T0 + 60_000)
    calls.length = 0
    const reader = new Browser()
    await post(reader, url(), 'forgot-password', { email: 'ada@example.com' })
    const { link } = await nextLink(rig.smtp, 'ada@example.com')
    const reset = await reader.submitForm(await reader.request(link), { password: 'a brand new passphrase' })
    expect(reset.status).toBe(302)
    expect(await sessionOf(reader, url())).toBeNull()
    expect(calls).toEqual([])
    expect(reset.headers.get('location')).toBe(secondPage())
    expect((await giveCode(reader, url(), codeAt(secret, T0 + 60_000))).status).toBe(302)
    expect((await sessionOf(reader, url()))?.user.email).toBe('ada@example.com')
  })

  // Found by this test: the same bypass through a "send the link again" link.
  it('Password provider: the verification link of an enrolled user whose address is not yet verified does not sign in without the code', async () => {
    freezeClock(T0)
    mountPasswordApp(rig.app, db.knex, rig.smtp, { twoFactor: TWO_FACTOR })
    const owner = new Browser()
    expect((await post(owner, url(), 'signup', { email: 'ada@example.com', password: GOOD_PASSWORD })).status).toBe(302)
    await nextLink(rig.smtp, 'ada@example.com')
    // Unverified addresses may sign in (requireEmailVerification is off by default), and enrol.
    expect((await post(owner, url(), 'callback/password', { email: 'ada@example.com', password: GOOD_PASSWORD })).status).toBe(302)
    await enrol(owner, url(), T0)
    freezeClock(T0 + 60_000)
    expect((await post(new Browser(), url(), 'callback/password', { email: 'ada@example.com', password: GOOD_PASSWORD })).headers.get('location')).toBe(secondPage())

    const reader = new Browser()
    await post(reader, url(), 'verify-email/resend', { email: 'ada@example.com' })
    const { link } = await nextLink(rig.smtp, 'ada@example.com')
    const followed = await followLink(reader, link)
    expect(followed.status).toBe(302)
    expect(await sessionOf(reader, url())).toBeNull()
    expect(followed.headers.get('location')).toBe(secondPage())
  })

  it('Credentials provider: the resumed sign-in gives the signIn callback the submitted fields without the password', async () => {
    freezeClock(T0)
    const { calls, callbacks } = signInRecorder()
    mountTwoFactorApp(rig.app, db.knex, { callbacks })
    await createUser('ada@example.com')
    await createUser('bob@example.com')
    const owner = new Browser()
    await signIn(owner, url(), 'ada@example.com')
    const { secret } = await enrol(owner, url(), T0)

    freezeClock(T0 + 60_000)
    // Not enrolled: no second page, and the callback sees the fields as Auth.js gives them, password included.
    calls.length = 0
    const bob = new Browser()
    expect((await signIn(bob, url(), 'bob@example.com')).headers.get('location')).toBe(`${url()}/dashboard`)
    expect(calls[0]!.credentials).toEqual({ email: 'bob@example.com', password: 'pw' })

    calls.length = 0
    const laptop = new Browser()
    const fields = { email: 'ada@example.com', password: 'pw', memorable: 'kettle', pin: '1234', device: 'laptop' }
    expect((await post(laptop, url(), 'callback/credentials', { ...fields, callbackUrl: '/dashboard' })).headers.get('location')).toBe(secondPage())
    expect(calls).toEqual([])
    expect((await giveCode(laptop, url(), codeAt(secret, T0 + 60_000))).headers.get('location')).toBe(`${url()}/dashboard`)
    expect((await sessionOf(laptop, url()))?.user.email).toBe('ada@example.com')
    expect(calls).toHaveLength(1)
    // What the pending cookie carried: the address and the other plain field, not the password, the
    // field declared type: 'password', the one named like a PIN (nor Portcullis's own fields).
    expect(calls[0]!.credentials).toEqual({ email: 'ada@example.com', device: 'laptop' })
    expect(calls[0]).toMatchObject({ twoFactor: { method: 'totp' }, account: { type: 'credentials', provider: 'credentials' } })
  })

  it('e-mail link: an enrolled user goes to the second page (requireForEmail by default); a user not enrolled signs in at once', async () => {
    freezeClock(T0)
    const { calls, callbacks } = signInRecorder()
    mountEmailApp(rig.app, db.knex, rig.smtp, { twoFactor: TWO_FACTOR, callbacks })
    const owner = new Browser()
    await requestLink(owner, url(), 'ada@example.com')
    // Not enrolled yet: the link signs in at once.
    expect((await owner.request(linkOf(await rig.smtp.nextMessage()))).headers.get('location')).toBe(`${url()}/`)
    expect((await sessionOf(owner, url()))?.user.email).toBe('ada@example.com')
    const { secret } = await enrol(owner, url(), T0)

    freezeClock(T0 + 60_000)
    calls.length = 0
    const phone = new Browser()
    expect((await requestLink(phone, url(), 'ada@example.com', { callbackUrl: '/dashboard' })).status).toBe(302)
    const followed = await phone.request(linkOf(await rig.smtp.nextMessage()))
    expect(followed.status).toBe(302)
    expect(followed.headers.get('location')).toBe(secondPage())
    expect(await sessionOf(phone, url())).toBeNull()
    expect(phone.cookie(url(), PENDING)).toBeDefined()
    // The link is used up: it cannot be followed again to start another pending sign-in.
    expect(await db.knex('VerificationToken').select()).toEqual([])
    // Asked once when the link was requested; not yet for this sign-in.
    expect(calls.filter((call) => !call.email?.verificationRequest)).toEqual([])

    const second = await giveCode(phone, url(), codeAt(secret, T0 + 60_000))
    expect(second.headers.get('location')).toBe(`${url()}/dashboard`)
    expect((await sessionOf(phone, url()))?.user.email).toBe('ada@example.com')
    expect(calls.at(-1)).toMatchObject({ twoFactor: { method: 'totp' }, account: { provider: 'nodemailer', type: 'email' }, user: { email: 'ada@example.com' } })
    expect(await db.knex('User').select()).toHaveLength(1)

    // Another user, not enrolled, with the same app: straight in.
    const bob = new Browser()
    await requestLink(bob, url(), 'bob@example.com', { callbackUrl: '/dashboard' })
    expect((await bob.request(linkOf(await rig.smtp.nextMessage()))).headers.get('location')).toBe(`${url()}/dashboard`)
    expect((await sessionOf(bob, url()))?.user.email).toBe('bob@example.com')
    expect(bob.cookie(url(), PENDING)).toBeUndefined()
  })

  it('e-mail link with requireForEmail: false: an enrolled user signs in with the link alone', async () => {
    freezeClock(T0)
    const { calls, callbacks } = signInRecorder()
    mountEmailApp(rig.app, db.knex, rig.smtp, { twoFactor: { ...TWO_FACTOR, requireForEmail: false }, callbacks })
    const owner = new Browser()
    await requestLink(owner, url(), 'ada@example.com')
    await owner.request(linkOf(await rig.smtp.nextMessage()))
    await enrol(owner, url(), T0)
    expect(await db.knex('TwoFactor').whereNotNull('enabledAt').select()).toHaveLength(1)

    const phone = new Browser()
    await requestLink(phone, url(), 'ada@example.com', { callbackUrl: '/dashboard' })
    const followed = await phone.request(linkOf(await rig.smtp.nextMessage()))
    expect(followed.headers.get('location')).toBe(`${url()}/dashboard`)
    expect((await sessionOf(phone, url()))?.user.email).toBe('ada@example.com')
    expect(phone.cookie(url(), PENDING)).toBeUndefined()
    expect(calls.at(-1)?.twoFactor).toBeUndefined()
  })

  describe('OpenID Connect', () => {
    const corp = (overrides: Partial<Parameters<typeof OIDC>[0]> = {}) =>
      OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true, ...overrides })

    /** JWT sessions, the rig's credentials provider beside Corp; records the signIn and jwt callbacks' sign-in calls. */
    function mountOAuthApp(config: Partial<PortcullisConfig> = {}, corpOptions: Partial<Parameters<typeof OIDC>[0]> = {}) {
      const { calls, callbacks } = signInRecorder()
      const jwtCalls: JWTCallbackParams[] = []
      const adapter = KnexAdapter(db.knex)
      const app = authApp({
        secret: SECRET,
        adapter,
        session: { strategy: 'jwt' },
        providers: [
          Credentials({
            credentials: { email: { label: 'E-mail' }, password: { label: 'Password', type: 'password' } },
            authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null),
          }),
          corp(corpOptions),
        ],
        callbacks: {
          ...callbacks,
          jwt: (params) => {
            if (params.trigger) jwtCalls.push(params)
            return params.token
          },
        },
        ...config,
      })
      rig.app.mount(app.app)
      return { calls, jwtCalls }
    }

    it('with requireForOAuth: an enrolled user whose account is linked gives a code, and only then does the JWT get the provider account', async () => {
      freezeClock(T0)
      const { calls, jwtCalls } = mountOAuthApp({ twoFactor: { ...TWO_FACTOR, requireForOAuth: true } })
      const owner = new Browser()
      // Not enrolled: straight through (and the account is linked to a new user).
      expect(redirectOf(await signInWith(owner, url(), 'corp', 'alice')).url.href).toBe(`${url()}/`)
      const { secret } = await enrol(owner, url(), T0)
      const [user] = await db.knex('User').select('id')

      freezeClock(T0 + 60_000)
      calls.length = 0
      jwtCalls.length = 0
      const laptop = new Browser()
      const callback = await signInWith(laptop, url(), 'corp', 'alice', { callbackUrl: '/dashboard' })
      expect(callback.status).toBe(302)
      expect(callback.headers.get('location')).toBe(secondPage())
      expect(await sessionOf(laptop, url())).toBeNull()
      expect(laptop.cookie(url(), 'authjs.session-token')).toBeUndefined()
      expect({ signIn: calls.length, jwt: jwtCalls.length }).toEqual({ signIn: 0, jwt: 0 })

      const second = await giveCode(laptop, url(), codeAt(secret, T0 + 60_000))
      expect(second.headers.get('location')).toBe(`${url()}/dashboard`)
      expect((await sessionOf(laptop, url()))?.user).toMatchObject({ id: user.id, email: 'alice@example.com' })
      expect(calls).toHaveLength(1)
      expect(calls[0]).toMatchObject({ twoFactor: { method: 'totp' }, account: { provider: 'corp', providerAccountId: 'alice' }, profile: { sub: 'alice' } })
      expect(jwtCalls).toHaveLength(1)
      expect(jwtCalls[0]).toMatchObject({
        trigger: 'signIn',
        user: { id: user.id },
        account: { provider: 'corp', providerAccountId: 'alice', access_token: expect.any(String), id_token: expect.any(String) },
        profile: { sub: 'alice' },
      })
      // The same user and account as before: the resumed sign-in created nothing.
      expect(await db.knex('User').count({ n: '*' })).toEqual([{ n: 1 }])
      expect(await db.knex('Account').select('userId', 'provider', 'providerAccountId')).toEqual([{ userId: user.id, provider: 'corp', providerAccountId: 'alice' }])
    })

    it('by default (requireForOAuth false), an enrolled user\'s OAuth sign-in goes straight through', async () => {
      freezeClock(T0)
      const { calls, jwtCalls } = mountOAuthApp({ twoFactor: TWO_FACTOR })
      const owner = new Browser()
      await signInWith(owner, url(), 'corp', 'alice')
      await enrol(owner, url(), T0)
      expect(await db.knex('TwoFactor').whereNotNull('enabledAt').select()).toHaveLength(1)

      calls.length = 0
      jwtCalls.length = 0
      const laptop = new Browser()
      const callback = await signInWith(laptop, url(), 'corp', 'alice', { callbackUrl: '/dashboard' })
      expect(callback.headers.get('location')).toBe(`${url()}/dashboard`)
      expect((await sessionOf(laptop, url()))?.user.email).toBe('alice@example.com')
      expect(laptop.cookie(url(), PENDING)).toBeUndefined()
      expect(calls).toHaveLength(1)
      expect(calls[0]!.twoFactor).toBeUndefined()
      expect(jwtCalls[0]).toMatchObject({ trigger: 'signIn', account: { access_token: expect.any(String) } })
    })

    it('with requireForOAuth and allowDangerousEmailAccountLinking: a new account for an enrolled user\'s address is linked only after the code', async () => {
      freezeClock(T0)
      const { calls } = mountOAuthApp({ twoFactor: { ...TWO_FACTOR, requireForOAuth: true } }, { allowDangerousEmailAccountLinking: true })
      const user = await createUser('alice@example.com')
      const owner = new Browser()
      await signIn(owner, url(), 'alice@example.com')
      const { secret } = await enrol(owner, url(), T0)

      freezeClock(T0 + 60_000)
      calls.length = 0
      const laptop = new Browser()
      expect((await signInWith(laptop, url(), 'corp', 'alice')).headers.get('location')).toBe(secondPage())
      expect(await sessionOf(laptop, url())).toBeNull()
      expect(await db.knex('Account').select()).toEqual([])
      expect(calls).toEqual([])

      expect((await giveCode(laptop, url(), codeAt(secret, T0 + 60_000))).status).toBe(302)
      expect((await sessionOf(laptop, url()))?.user.id).toBe(user.id)
      expect(await db.knex('Account').select('userId', 'provider', 'providerAccountId')).toEqual([{ userId: user.id, provider: 'corp', providerAccountId: 'alice' }])
      expect(await db.knex('User').count({ n: '*' })).toEqual([{ n: 1 }])
    })
  })

  it('a signIn callback that refuses after the second factor: AccessDenied, and no session', async () => {
    freezeClock(T0)
    let refuse = false
    const calls: SignInParams[] = []
    mountTwoFactorApp(rig.app, db.knex, { callbacks: { signIn: (params) => (calls.push(params), !refuse) } })
    await createUser('ada@example.com')
    const owner = new Browser()
    await signIn(owner, url(), 'ada@example.com')
    const { secret } = await enrol(owner, url(), T0)
    await db.knex('Session').del()

    freezeClock(T0 + 60_000)
    refuse = true
    const laptop = new Browser()
    expect((await signIn(laptop, url(), 'ada@example.com')).headers.get('location')).toBe(secondPage())
    const refused = await giveCode(laptop, url(), codeAt(secret, T0 + 60_000))
    expect(refused.status).toBe(302)
    expect(redirectOf(refused).error).toBe('AccessDenied')
    expect(calls.at(-1)).toMatchObject({ twoFactor: { method: 'totp' } })
    expect(laptop.cookie(url(), 'authjs.session-token')).toBeUndefined()
    // The pending sign-in ends with the refusal: its cookie is cleared, so the next code finds none.
    expect(laptop.cookie(url(), 'authjs.two-factor')).toBeUndefined()
    expect(await sessionOf(laptop, url())).toBeNull()
    expect(await sessionRows()).toEqual({ n: 0 })
  })

  it('the server-side signIn("credentials") of an app route sends an enrolled user to the second page; with redirect: false it resolves with that page', async () => {
    freezeClock(T0)
    const app: AuthApp = mountTwoFactorApp(rig.app, db.knex)
    app.app.post(
      '/login',
      express.urlencoded({ extended: false }),
      app.auth(async (req, res) => {
        const { email, password, csrfToken, mode } = req.body as Record<string, string>
        const options = { email, password, csrfToken, redirectTo: '/dashboard' }
        if (mode === 'url') res.json({ url: await app.signIn('credentials', { ...options, redirect: false }) })
        else await app.signIn('credentials', options)
      }),
    )
    await createUser('ada@example.com')
    const owner = new Browser()
    await signIn(owner, url(), 'ada@example.com')
    const { secret } = await enrol(owner, url(), T0)
    const login = async (browser: Browser, mode: string) =>
      browser.request(`${url()}/login`, { body: new URLSearchParams({ email: 'ada@example.com', password: 'pw', csrfToken: await csrfOf(browser, url()), mode }) })

    freezeClock(T0 + 60_000)
    const redirected = new Browser()
    const page = await login(redirected, 'page')
    expect(page.status).toBe(302)
    expect(page.headers.get('location')).toBe(secondPage())
    expect(redirected.cookie(url(), PENDING)).toBeDefined()
    expect(await sessionOf(redirected, url())).toBeNull()
    expect((await giveCode(redirected, url(), codeAt(secret, T0 + 60_000))).headers.get('location')).toBe(`${url()}/dashboard`)
    expect((await sessionOf(redirected, url()))?.user.email).toBe('ada@example.com')

    freezeClock(T0 + 90_000)
    const scripted = new Browser()
    const answer = await login(scripted, 'url')
    expect(answer.status).toBe(200)
    expect(await answer.json()).toEqual({ url: secondPage() })
    expect(scripted.cookie(url(), PENDING)).toBeDefined()
    expect(await sessionOf(scripted, url())).toBeNull()
    expect((await giveCode(scripted, url(), codeAt(secret, T0 + 90_000))).headers.get('location')).toBe(`${url()}/dashboard`)
    expect((await sessionOf(scripted, url()))?.user.email).toBe('ada@example.com')
  })
})
