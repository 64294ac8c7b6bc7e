/**
 * A pre-account takeover, tried as an attacker would: sign up first with the victim's address and a
 * password of one's own, never prove the address, and wait for the victim to sign in another way
 * (an e-mail link, an OpenID provider allowed to link by address, a reset link). The victim's proof
 * of the address takes from the account everything it was given before: the attacker's password,
 * the passkeys, second factor and linked accounts the attacker's session could add, and every
 * session. A verified account signing in by link keeps all of it. End to end on SQLite with real
 * parts (the in-process SMTP server and oidc-provider); the Knex adapter's deleteUserPassword on
 * SQLite, PostgreSQL and MariaDB.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import type { PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Nodemailer from 'portcullis/providers/nodemailer'
import OIDC from 'portcullis/providers/oidc'
import Password from 'portcullis/providers/password'
import { authApp } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { recordingLogger } from '../support/logger.js'
import { redirectOf, sessionOf, signInWith } from '../support/oauth-app.js'
import { linkOf } from '../support/smtp.js'
import { followLink, requestLink, useEmailRig } from '../email/email-app.js'
import { Browser, FAST_HASHING, FROM, GOOD_PASSWORD, nextLink, post, signIn, signUp, verifiedUser } from './password-app.js'

const ATTACKERS_PASSWORD = 'the attacker chose this one'
const VICTIM = 'victim@example.com'

const rig = useEmailRig()
let idp: TestIdp
beforeAll(async () => {
  idp = await startIdp({ clients: [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [rig.app.callbackUrl('corp')] }] })
})
afterAll(() => idp?.close())
const url = () => rig.app.url

await describeWithDatabase('sqlite', 'a pre-account takeover', (server) => {
  const db = migratedDatabase(server)
  const adapter = () => KnexAdapter(db.knex)

  /** Password, e-mail links, Corp (which may link by address) and the second factor on one app; its log and sessionRevoked events. */
  function mount(config: Partial<PortcullisConfig> = {}, requireEmailVerification = false) {
    const logger = recordingLogger()
    const revoked: string[] = []
    const app = authApp({
      secret: SECRET,
      adapter: adapter(),
      logger,
      providers: [
        Password({ server: rig.smtp.url, from: FROM, hashing: FAST_HASHING, requireEmailVerification }),
        Nodemailer({ server: rig.smtp.url, from: FROM }),
        OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true, allowDangerousEmailAccountLinking: true }),
      ],
      // A second factor is asked of enrolled users: the attacker's enrolment must not stop the victim.
      twoFactor: { issuer: 'Portcullis tests' },
      events: { sessionRevoked: ({ by }) => void revoked.push(by) },
      ...config,
    })
    rig.app.mount(app.app)
    return { logger, revoked }
  }

  /** The attacker signs up with the victim's address (its verification mail goes to the victim, unread). */
  async function attackerSignsUp(attacker: Browser): Promise<string> {
    expect((await signUp(attacker, url(), VICTIM, ATTACKERS_PASSWORD)).status).toBe(302)
    await nextLink(rig.smtp, VICTIM)
    return (await adapter().getUserByEmail(VICTIM))!.id
  }

  /** What a signed-in session can add to its account: a passkey, a second factor, a linked account. */
  async function addAttackersMethods(userId: string): Promise<void> {
    const own = adapter()
    await own.createAuthenticator({ credentialID: 'YXR0YWNrZXI=', userId, providerAccountId: 'YXR0YWNrZXI=', credentialPublicKey: 'cGs=', counter: 0, credentialDeviceType: 'singleDevice', credentialBackedUp: false, transports: null })
    await own.startTwoFactor(userId, 'sealed')
    await own.enableTwoFactor(userId, { secret: 'sealed', step: 1, enabledAt: new Date(), recoveryCodes: ['code'] })
    await own.linkAccount({ userId, type: 'oauth', provider: 'elsewhere', providerAccountId: 'attacker' })
  }

  const rowsOf = async (userId: string) => ({
    passwords: (await db.knex('Password').where({ userId })).length,
    passkeys: (await db.knex('Authenticator').where({ userId })).length,
    secondFactors: (await db.knex('TwoFactor').where({ userId })).length,
    accounts: (await db.knex('Account').where({ userId }).select('provider')).map((row: { provider: string }) => row.provider),
  })

  /** The victim signs in with an e-mail link to the address, in the browser that asked. */
  async function victimFollowsLink(victim: Browser): Promise<Response> {
    expect((await requestLink(victim, url(), VICTIM, { providerId: 'nodemailer' })).status).toBe(302)
    return followLink(victim, linkOf(await rig.smtp.nextMessage()))
  }

  it('an e-mail link: the attacker’s password, passkey, second factor, linked account and session are gone, and the victim is signed in without a code', async () => {
    const { logger, revoked } = mount({ session: { strategy: 'database' } })
    const attacker = new Browser()
    const userId = await attackerSignsUp(attacker)
    // Without requireEmailVerification the sign-up can sign in at once, and add to the account.
    expect(redirectOf(await signIn(attacker, url(), VICTIM, ATTACKERS_PASSWORD)).url.pathname).toBe('/')
    expect((await sessionOf(attacker, url()))?.user.id).toBe(userId)
    await addAttackersMethods(userId)

    const victim = new Browser()
    const followed = await victimFollowsLink(victim)
    expect(followed.headers.get('location')).toBe(`${url()}/`)
    expect((await sessionOf(victim, url()))?.user.id).toBe(userId)

    expect(await sessionOf(attacker, url())).toBeNull()
    expect(redirectOf(await signIn(new Browser(), url(), VICTIM, ATTACKERS_PASSWORD)).error).toBe('CredentialsSignin')
    expect(await rowsOf(userId)).toEqual({ passwords: 0, passkeys: 0, secondFactors: 0, accounts: [] })
    expect((await adapter().getUser(userId))?.emailVerified).toBeInstanceOf(Date)
    expect(revoked).toEqual(['addressClaimed'])
    expect(logger.codes('warn')).toContain('UnverifiedAccountClaimed')
    // The victim sets a password of their own with "forgot password".
    await post(victim, url(), 'forgot-password', { email: VICTIM })
    const { link } = await nextLink(rig.smtp, VICTIM)
    await victim.submitForm(await victim.request(link), { password: GOOD_PASSWORD })
    expect(redirectOf(await signIn(new Browser(), url(), VICTIM, GOOD_PASSWORD)).url.pathname).toBe('/')
  })

  it('an e-mail link with requireEmailVerification: the password the attacker could not use yet never starts working', async () => {
    mount({}, true)
    const attacker = new Browser()
    await attackerSignsUp(attacker)
    expect(redirectOf(await signIn(attacker, url(), VICTIM, ATTACKERS_PASSWORD)).code).toBe('email_not_verified')

    await victimFollowsLink(new Browser())
    expect(redirectOf(await signIn(attacker, url(), VICTIM, ATTACKERS_PASSWORD)).error).toBe('CredentialsSignin')
    expect(await sessionOf(attacker, url())).toBeNull()
  })

  it('an OpenID provider that links by address: the attacker’s password and JWT session (with a session store) end', async () => {
    const { revoked } = mount({ session: { strategy: 'jwt', store: 'memory' } })
    const attacker = new Browser()
    const userId = await attackerSignsUp(attacker)
    expect(redirectOf(await signIn(attacker, url(), VICTIM, ATTACKERS_PASSWORD)).url.pathname).toBe('/')
    await addAttackersMethods(userId)

    const victim = new Browser()
    expect((await signInWith(victim, url(), 'corp', 'victim')).headers.get('location')).toBe(`${url()}/`)
    expect((await sessionOf(victim, url()))?.user.id).toBe(userId)

    expect(await sessionOf(attacker, url())).toBeNull()
    expect(redirectOf(await signIn(new Browser(), url(), VICTIM, ATTACKERS_PASSWORD)).error).toBe('CredentialsSignin')
    // Only the victim's own Corp account is linked now.
    expect(await rowsOf(userId)).toEqual({ passwords: 0, passkeys: 0, secondFactors: 0, accounts: ['corp'] })
    expect(revoked).toEqual(['addressClaimed'])
  })

  it('an OpenID provider that spells the address in another case, with an adapter whose lookup minds case: the account it links to is the one claimed', async () => {
    // As an adapter of the app's own may be: getUserByEmail finds only the address as stored.
    const knex = adapter()
    const exact = {
      ...knex,
      getUserByEmail: async (email: string) => {
        const user = await knex.getUserByEmail(email)
        return user?.email === email ? user : null
      },
    }
    mount({ session: { strategy: 'database' }, adapter: exact })
    const attacker = new Browser()
    const userId = await attackerSignsUp(attacker)
    expect(redirectOf(await signIn(attacker, url(), VICTIM, ATTACKERS_PASSWORD)).url.pathname).toBe('/')

    // The IdP gives `Victim@example.com`; the sign-up stored `victim@example.com`.
    const victim = new Browser()
    expect((await signInWith(victim, url(), 'corp', 'Victim')).headers.get('location')).toBe(`${url()}/`)
    expect((await sessionOf(victim, url()))?.user.id).toBe(userId)
    expect(await sessionOf(attacker, url())).toBeNull()
    expect(redirectOf(await signIn(new Browser(), url(), VICTIM, ATTACKERS_PASSWORD)).error).toBe('CredentialsSignin')
  })

  it('a reset link: the attacker’s passkey, second factor, linked account and session are gone with the password, and the victim is signed in without a code', async () => {
    const { revoked } = mount({ session: { strategy: 'database' } })
    const attacker = new Browser()
    const userId = await attackerSignsUp(attacker)
    expect(redirectOf(await signIn(attacker, url(), VICTIM, ATTACKERS_PASSWORD)).url.pathname).toBe('/')
    await addAttackersMethods(userId)

    const victim = new Browser()
    await post(victim, url(), 'forgot-password', { email: VICTIM })
    const { link } = await nextLink(rig.smtp, VICTIM)
    const reset = await victim.submitForm(await victim.request(link), { password: GOOD_PASSWORD })
    expect(reset.headers.get('location')).toBe(`${url()}/`)
    expect((await sessionOf(victim, url()))?.user.id).toBe(userId)

    expect(await sessionOf(attacker, url())).toBeNull()
    expect(await rowsOf(userId)).toEqual({ passwords: 1, passkeys: 0, secondFactors: 0, accounts: [] })
    expect(revoked).toEqual(['addressClaimed'])
  })

  it('a verified password account signing in by e-mail link keeps its password and its other sessions', async () => {
    const { logger, revoked } = mount({ session: { strategy: 'database' } })
    const owner = new Browser()
    await verifiedUser(owner, url(), rig.smtp, VICTIM)
    const userId = (await adapter().getUserByEmail(VICTIM))!.id
    await addAttackersMethods(userId)

    await victimFollowsLink(new Browser())
    expect((await sessionOf(owner, url()))?.user.email).toBe(VICTIM)
    expect(redirectOf(await signIn(new Browser(), url(), VICTIM, GOOD_PASSWORD)).url.pathname).toBe('/api/auth/two-factor')
    expect(await rowsOf(userId)).toEqual({ passwords: 1, passkeys: 1, secondFactors: 1, accounts: ['elsewhere'] })
    expect(revoked).toEqual([])
    expect(logger.codes('warn')).not.toContain('UnverifiedAccountClaimed')
  })
})

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `KnexAdapter.deleteUserPassword on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    it('deletes the user’s password row only, true when there was one', async () => {
      const own = KnexAdapter(db.knex)
      const user = await own.createUser({ email: 'delete@example.com' })
      const other = await own.createUser({ email: 'keep@example.com' })
      await own.setUserPassword(user.id, '$scrypt$hash')
      await own.setUserPassword(other.id, '$scrypt$other')
      expect(await own.deleteUserPassword(user.id)).toBe(true)
      expect(await own.getUserPassword(user.id)).toBeNull()
      expect(await own.deleteUserPassword(user.id)).toBe(false)
      expect(await own.getUserPassword(other.id)).toBe('$scrypt$other')
    })
  })
}
