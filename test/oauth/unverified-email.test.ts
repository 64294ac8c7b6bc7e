/**
 * A provider's address counts only when the provider says it is verified. An IdP account can claim
 * any address unverified; if that address reached a new user, its real owner would later enter that
 * user through an e-mail link while the attacker's IdP account stays linked (pre-account takeover),
 * and with allowDangerousEmailAccountLinking it would link straight to the owner's user.
 *
 * Every provider type: the generic `oidc` default profile (email_verified), a generic `oauth` provider
 * whose profile() marks the address or not; the built-ins' mappings are held to the same contract by
 * their fixtures (test/providers/catalogue.test.ts) and the Passport bridge by test/oauth/passport.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Nodemailer from 'portcullis/providers/nodemailer'
import OAuth from 'portcullis/providers/oauth'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, sessionOf, signInWith, type Listener } from '../support/oauth-app.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'
import { recordingLogger, requestLink } from '../email/email-app.js'

let idp: TestIdp
let app: Listener
let smtp: TestSmtpServer

// `mallory` claims the victim's address unverified; `owner` holds it, verified; `unmarked` says nothing.
const claims: Record<string, Record<string, unknown>> = {
  mallory: { email: 'victim@example.com', email_verified: false },
  owner: { email: 'victim@example.com', email_verified: true },
  unmarked: { email: 'unmarked@example.com', email_verified: undefined },
}
// At userinfo, `switched` answers another address than its ID token's verified one, without email_verified;
// `restated` answers its ID token's address again, without email_verified.
const atUserinfo: Record<string, Record<string, unknown>> = {
  switched: { email: 'victim@example.com', email_verified: undefined },
  restated: { email_verified: undefined },
}

beforeAll(async () => {
  app = await listen()
  smtp = await startSmtpServer()
  idp = await startIdp({
    clients: [
      { client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [app.callbackUrl('corp')] },
      { client_id: 'plain', client_secret: 'plain-secret', redirect_uris: [app.callbackUrl('acme')] },
    ],
    claims: (login, use) => ({ ...claims[login], ...(use === 'userinfo' ? atUserinfo[login] : {}) }),
  })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
  await smtp?.close()
})

const corp = (overrides: Partial<Parameters<typeof OIDC>[0]> = {}) =>
  OIDC({ id: 'corp', name: 'Corp', issuer: idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true, ...overrides })

/** A plain OAuth 2 provider on the IdP's GitHub-like API, mapping the address as `mark` says. */
const acme = (mark: (me: Record<string, unknown>) => Record<string, unknown>) =>
  OAuth({
    id: 'acme',
    name: 'Acme',
    clientId: 'plain',
    clientSecret: 'plain-secret',
    authorization: { url: idp.authorizationEndpoint, params: { scope: 'read:user' } },
    token: idp.tokenEndpoint,
    userinfo: idp.apiUrl,
    profile: (me) => ({ id: String(me.id), name: String(me.name), email: me.email as string, ...mark(me) }),
    dangerouslyAllowInsecureRequests: true,
  })

describe('JWT sessions without a database', () => {
  it('oidc: an address with email_verified false, or without the claim, is not in the session', async () => {
    mountApp(app, { providers: [corp()] })
    for (const login of ['mallory', 'unmarked']) {
      const browser = new Browser()
      expect((await signInWith(browser, app.url, 'corp', login)).status).toBe(302)
      const session = await sessionOf(browser, app.url)
      expect(session?.user.id).toBe(login)
      expect(session?.user.email ?? null).toBeNull()
    }
    const browser = new Browser()
    await signInWith(browser, app.url, 'corp', 'owner')
    expect((await sessionOf(browser, app.url))?.user.email).toBe('victim@example.com')
  })

  it("oidc: the ID token's email_verified does not vouch for another address that userinfo answers", async () => {
    mountApp(app, { providers: [corp()] })
    const switched = new Browser()
    expect((await signInWith(switched, app.url, 'corp', 'switched')).status).toBe(302)
    const session = await sessionOf(switched, app.url)
    expect(session?.user.id).toBe('switched')
    expect(session?.user.email ?? null).toBeNull()
    const restated = new Browser()
    await signInWith(restated, app.url, 'corp', 'restated')
    expect((await sessionOf(restated, app.url))?.user.email).toBe('restated@example.com')
  })

  it('oauth: profile() decides with emailVerified; an address it does not mark is dropped, with one warning naming the fix', async () => {
    const { logger, lines } = recordingLogger()
    mountApp(app, { providers: [acme(() => ({}))], logger })
    for (const login of ['alice', 'bob']) {
      const browser = new Browser()
      await signInWith(browser, app.url, 'acme', login)
      const session = await sessionOf(browser, app.url)
      expect(session?.user.id).toBe(login)
      expect(session?.user.email ?? null).toBeNull()
    }
    expect(lines.warn.filter((line) => line.startsWith('UnverifiedEmailIgnored'))).toEqual([expect.stringContaining('emailVerified: true')])

    mountApp(app, { providers: [acme(() => ({ emailVerified: false }))] })
    const refused = new Browser()
    await signInWith(refused, app.url, 'acme', 'alice')
    expect((await sessionOf(refused, app.url))?.user.email ?? null).toBeNull()

    mountApp(app, { providers: [acme(() => ({ emailVerified: true }))] })
    const verified = new Browser()
    await signInWith(verified, app.url, 'acme', 'alice')
    expect((await sessionOf(verified, app.url))?.user.email).toBe('alice@example.com')
  })
})

describeWithDatabase('sqlite', 'unverified addresses and stored users', (server) => {
  const database = migratedDatabase(server)
  const users = () => database.knex('User').select('id', 'email', 'emailVerified').orderBy('id')
  const accountsOf = (userId: string) => database.knex('Account').where({ userId }).select('provider', 'providerAccountId')

  function mount(config: Partial<PortcullisConfig> = {}, provider = corp()) {
    mountApp(app, { adapter: KnexAdapter(database.knex), providers: [provider, Nodemailer({ server: smtp.url, from: 'auth@example.test' })], ...config })
  }

  it('a new user gets no unverified address, and the verified one with the time it was proven', async () => {
    mount()
    const mallory = new Browser()
    await signInWith(mallory, app.url, 'corp', 'mallory')
    const malloryId = (await sessionOf(mallory, app.url))!.user.id
    expect(await users()).toEqual([{ id: malloryId, email: null, emailVerified: null }])

    const owner = new Browser()
    await signInWith(owner, app.url, 'corp', 'owner')
    const ownerRow = (await users()).find((row) => row.id !== malloryId)
    expect(ownerRow).toEqual({ id: expect.any(String), email: 'victim@example.com', emailVerified: expect.anything() })
  })

  it('pre-account takeover: the owner who later signs in by e-mail link does not land in the user the unverified claim made', async () => {
    mount()
    const attacker = new Browser()
    await signInWith(attacker, app.url, 'corp', 'mallory')
    const attackerUserId = (await sessionOf(attacker, app.url))!.user.id

    const victim = new Browser()
    smtp.skipReceived()
    expect((await requestLink(victim, app.url, 'victim@example.com')).status).toBe(302)
    const link = linkOf(await smtp.nextMessage())
    await victim.request(link)
    const victimSession = await sessionOf(victim, app.url)
    expect(victimSession?.user.email).toBe('victim@example.com')
    expect(victimSession?.user.id).not.toBe(attackerUserId)
    expect(await accountsOf(victimSession!.user.id)).toEqual([])
    // The attacker's IdP account still leads to the attacker's own user, which holds no address.
    const again = new Browser()
    await signInWith(again, app.url, 'corp', 'mallory')
    expect((await sessionOf(again, app.url))?.user).toMatchObject({ id: attackerUserId })
  })

  it('allowDangerousEmailAccountLinking relaxes the rule for verified addresses only', async () => {
    mount({}, corp({ allowDangerousEmailAccountLinking: true }))
    await database.knex('User').insert({ id: 'owner-user', email: 'victim@example.com', emailVerified: new Date() })

    const attacker = new Browser()
    expect((await signInWith(attacker, app.url, 'corp', 'mallory')).status).toBe(302)
    expect((await sessionOf(attacker, app.url))?.user.id).not.toBe('owner-user')
    expect(await accountsOf('owner-user')).toEqual([])

    const holder = new Browser()
    await signInWith(holder, app.url, 'corp', 'owner')
    expect((await sessionOf(holder, app.url))?.user.id).toBe('owner-user')
    expect(await accountsOf('owner-user')).toEqual([{ provider: 'corp', providerAccountId: 'owner' }])
  })

  it('without the option, an unverified claim of a taken address is not OAuthAccountNotLinked: it proves nothing, so it signs in as its own user', async () => {
    mount()
    await database.knex('User').insert({ id: 'owner-user', email: 'victim@example.com', emailVerified: new Date() })
    const attacker = new Browser()
    const response = await signInWith(attacker, app.url, 'corp', 'mallory')
    expect(response.status).toBe(302)
    expect(response.headers.get('location')).not.toContain('error=')
    expect((await sessionOf(attacker, app.url))?.user).toMatchObject({ id: expect.not.stringMatching(/^owner-user$/) })
    expect(await accountsOf('owner-user')).toEqual([])
  })
})
