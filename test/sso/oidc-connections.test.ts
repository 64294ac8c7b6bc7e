/**
 * Enterprise single sign-on through OpenID Connect connections, on SQLite, PostgreSQL and MariaDB, with
 * a real identity provider (oidc-provider in process, one client per organization) and a real DNS
 * lookup (node:dns against a DNS server the suite starts): an organization proves its domain by a TXT
 * record, registers its IdP, and its people are sent there by their address (home-realm discovery),
 * become members at their first sign-in, and, once the organization requires it, sign in no other way.
 * The attacks: an unverified domain, another organization's IdP answering for this one's addresses,
 * the answer carried to another browser, a domain claimed from its verified owner, connections to
 * internal addresses (SSRF), and members without the right to manage connections.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import SSO, { type SsoOptions } from 'portcullis/providers/sso'
import type { PortcullisConfig } from 'portcullis'
import { Browser } from '../support/browser.js'
import { ssoClient } from './sso-client.js'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { rawRequestAt } from '../support/raw-http.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, type Listener } from '../support/oauth-app.js'
import { startDns, type TestDns } from './dns-server.js'

let app: Listener
let idp: TestIdp
let dns: TestDns

beforeAll(async () => {
  app = await listen()
  dns = await startDns()
  // The login typed at the IdP is the subject; an address-like login is the address it answers.
  idp = await startIdp({
    clients: ['acme', 'evil', 'other'].map((id) => ({ client_id: id, client_secret: `${id}-secret`, redirect_uris: [`${app.url}/api/auth/callback/sso`] })),
    claims: (login) => ({ email: login.includes('@') ? login : `${login}@acme.example`, email_verified: true, name: `User ${login}` }),
  })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
  await dns?.close()
})

/** Portcullis with organizations, the SSO provider (pointed at the suite's DNS server) and passwords ("pw") beside it. */
function mount(knex: Knex, sso: SsoOptions = { dangerouslyAllowInternalUrls: true }, config: Partial<PortcullisConfig> = {}) {
  const adapter = KnexAdapter(knex)
  const portcullis = mountApp(app, {
    adapter,
    organizations: true,
    session: { strategy: 'database' },
    providers: [
      SSO({ dnsServers: [dns.server], ...sso }),
      Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) }),
    ],
    ...config,
  })
  return { adapter, portcullis }
}

const { csrf, post } = ssoClient(() => app.url)

/** Signs in with the password form; the response (302). */
async function passwordSignIn(browser: Browser, email: string): Promise<Response> {
  return browser.request(`${app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await csrf(browser), email, password: 'pw' }) })
}

/** A user who owns a new organization, signed in with a password. */
async function owner(adapter: ReturnType<typeof KnexAdapter>, email = 'owner@acme.example', name = 'Acme'): Promise<{ browser: Browser; organizationId: string; userId: string }> {
  const user = (await adapter.getUserByEmail(email)) ?? (await adapter.createUser({ email, emailVerified: null, name: email, image: null }))
  const browser = new Browser()
  expect((await passwordSignIn(browser, email)).status).toBe(302)
  const created = await post(browser, '/organizations', { name })
  expect(created.status).toBe(201)
  return { browser, organizationId: created.body.organization.id, userId: user.id }
}

/** Claims `domain` for the organization, publishes its TXT record at the suite's DNS server, verifies it. */
async function verifiedDomain(browser: Browser, organizationId: string, domain: string): Promise<Record<string, any>> {
  const added = await post(browser, '/sso/domains', { organizationId, domain })
  expect(added.status).toBe(201)
  dns.txt.set(added.body.domain.record.name, [added.body.domain.record.value])
  const verified = await post(browser, '/sso/domains/verify', { domainId: added.body.domain.id })
  expect(verified.status).toBe(200)
  return verified.body.domain
}

async function oidcConnection(browser: Browser, organizationId: string, client: string, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const created = await post(browser, '/sso/connections', { organizationId, name: `${client} IdP`, type: 'oidc', issuer: idp.issuer, clientId: client, clientSecret: `${client}-secret`, ...extra })
  expect({ status: created.status, body: created.status === 201 ? undefined : created.body }).toEqual({ status: 201 })
  return created.body.connection
}

/** A request sent with its path exactly as written (fetch would normalise `%2e%2e`). */
function raw(method: string, path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; body: string }> {
  return rawRequestAt(Number(new URL(app.url).port), path, { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, body })
}

/** POST /signin/sso with the address: the response (a redirect to the IdP, or back to the sign-in page). */
async function startSso(browser: Browser, email: string, callbackUrl = '/after'): Promise<Response> {
  return browser.request(`${app.url}/api/auth/signin/sso`, { body: new URLSearchParams({ csrfToken: await csrf(browser), email, callbackUrl }) })
}

/** The whole SSO sign-in: the address, the IdP's login as `login`, the callback; the callback's response. */
async function ssoSignIn(browser: Browser, email: string, login = email): Promise<Response> {
  const started = await startSso(browser, email)
  expect(started.status).toBe(302)
  const location = started.headers.get('location')!
  expect(new URL(location).origin).toBe(new URL(idp.issuer).origin)
  return browser.navigate(await browser.authorize(location, login))
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `SSO through OpenID Connect connections on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    it('an organization proves its domain by DNS, registers its IdP, and its people sign in there and become members', async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      const added = await post(acme.browser, '/sso/domains', { organizationId: acme.organizationId, domain: 'ACME.example.' })
      expect(added.status).toBe(201)
      const { record } = added.body.domain
      expect(added.body.domain).toMatchObject({ domain: 'acme.example', verified: false })
      expect(record).toEqual({ type: 'TXT', name: '_portcullis-sso.acme.example', value: expect.stringMatching(/^portcullis-sso-verification=[0-9a-f]{32}$/) })

      // No record, then records that only resemble it: each a refusal, the domain still unverified.
      expect((await post(acme.browser, '/sso/domains/verify', { domainId: added.body.domain.id })).body.code).toBe('domain_unverified')
      dns.txt.set(record.name, [`${record.value}x`, `x${record.value}`, record.value.toUpperCase()])
      expect((await post(acme.browser, '/sso/domains/verify', { domainId: added.body.domain.id })).body.code).toBe('domain_unverified')
      dns.txt.set(record.name, ['v=spf1 -all', record.value])
      const verified = await post(acme.browser, '/sso/domains/verify', { domainId: added.body.domain.id })
      expect(verified).toMatchObject({ status: 200, body: { domain: { verified: true, verifiedBy: 'dns' } } })

      const connection = await oidcConnection(acme.browser, acme.organizationId, 'acme')
      expect(connection).toMatchObject({ type: 'oidc', enabled: true, ssoOnly: false, defaultRole: 'member', oidc: { issuer: idp.issuer, clientId: 'acme' }, redirectUri: `${app.url}/api/auth/callback/sso` })
      // The secret is neither given back nor stored as it was typed.
      expect(JSON.stringify(connection)).not.toContain('acme-secret')
      expect(JSON.stringify(await db.knex('SsoConnection').select())).not.toContain('acme-secret')

      const alice = new Browser()
      const started = await startSso(alice, 'Alice@Acme.example')
      expect(new URL(started.headers.get('location')!).searchParams.get('login_hint')).toBe('Alice@Acme.example')
      const back = await alice.navigate(await alice.authorize(started.headers.get('location')!, 'alice@acme.example'))
      expect(back.status).toBe(302)
      expect(back.headers.get('location')).toBe(`${app.url}/after`)
      const session = await sessionOf(alice, app.url)
      expect(session?.user?.email).toBe('alice@acme.example')
      const user = (await adapter.getUserByEmail('alice@acme.example'))!
      expect(await adapter.getMember!(acme.organizationId, user.id)).toMatchObject({ roles: ['member'] })

      // A second sign-in lands in the same user, one account and one membership.
      expect((await ssoSignIn(new Browser(), 'alice@acme.example')).status).toBe(302)
      expect(Number((await db.knex('Account').where({ userId: user.id }).count({ n: '*' }))[0]!.n)).toBe(1)
      expect(Number((await db.knex('Member').where({ userId: user.id }).count({ n: '*' }))[0]!.n)).toBe(1)
    })

    it('an address whose domain is unverified, or whose connection is disabled, is sent to no identity provider', async () => {
      const { adapter } = mount(db.knex)
      const other = await owner(adapter, 'owner@other.example', 'Other')
      const claimed = await post(other.browser, '/sso/domains', { organizationId: other.organizationId, domain: 'other.example' })
      expect(claimed.status).toBe(201)
      const connection = await oidcConnection(other.browser, other.organizationId, 'other')
      const refused = await startSso(new Browser(), 'bob@other.example')
      expect(redirectOf(refused)).toMatchObject({ error: 'SSO', code: 'no_connection' })
      expect(refused.headers.get('location')).not.toContain(new URL(idp.issuer).host)

      dns.txt.set(claimed.body.domain.record.name, [claimed.body.domain.record.value])
      expect((await post(other.browser, '/sso/domains/verify', { domainId: claimed.body.domain.id })).status).toBe(200)
      expect((await startSso(new Browser(), 'bob@other.example')).headers.get('location')).toContain(new URL(idp.issuer).host)
      expect((await post(other.browser, '/sso/connections/update', { connectionId: connection.id, enabled: false })).body.connection.enabled).toBe(false)
      expect(redirectOf(await startSso(new Browser(), 'bob@other.example'))).toMatchObject({ error: 'SSO', code: 'no_connection' })
      // A sub-domain is another domain.
      expect(redirectOf(await startSso(new Browser(), 'bob@mail.other.example'))).toMatchObject({ error: 'SSO', code: 'no_connection' })
    })

    it("another organization's IdP cannot sign in an address of this organization's domain", async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      await verifiedDomain(acme.browser, acme.organizationId, 'acme.example')
      await oidcConnection(acme.browser, acme.organizationId, 'acme')
      const victim = (await ssoSignIn(new Browser(), 'alice@acme.example')).status
      expect(victim).toBe(302)

      const evil = await owner(adapter, 'owner@evil.example', 'Evil')
      await verifiedDomain(evil.browser, evil.organizationId, 'evil.example')
      await oidcConnection(evil.browser, evil.organizationId, 'evil')
      // The attacker's IdP answers for mallory@evil.example with Alice's address.
      const attacker = new Browser()
      const answer = await ssoSignIn(attacker, 'mallory@evil.example', 'alice@acme.example')
      expect(redirectOf(answer)).toMatchObject({ error: 'SSO', code: 'address_outside_domains' })
      expect(await sessionOf(attacker, app.url)).toBeNull()
      const alice = (await adapter.getUserByEmail('alice@acme.example'))!
      expect((await db.knex('Account').where({ userId: alice.id })).map((row) => row.providerAccountId)).toEqual([expect.stringMatching(/:alice@acme\.example$/)])
      expect(await adapter.getMember!(evil.organizationId, alice.id)).toBeNull()
    })

    it('the answer counts only in the browser that started the sign-in', async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      await verifiedDomain(acme.browser, acme.organizationId, 'acme.example')
      await oidcConnection(acme.browser, acme.organizationId, 'acme')
      const victim = new Browser()
      const started = await startSso(victim, 'alice@acme.example')
      const navigation = await victim.authorize(started.headers.get('location')!, 'alice@acme.example')
      // The callback URL carried to another browser (login CSRF): no sign-in cookie, no check cookies there.
      const other = new Browser()
      const answer = await other.navigate(navigation)
      expect(redirectOf(answer).error).toBe('InvalidCheck')
      expect(await sessionOf(other, app.url)).toBeNull()
      // The code is not spent by the refusal: the browser that asked still signs in with it, once.
      expect((await victim.navigate(navigation)).status).toBe(302)
      expect((await sessionOf(victim, app.url))?.user?.email).toBe('alice@acme.example')
      expect(redirectOf(await victim.navigate(navigation)).error).toBe('InvalidCheck')
    })

    it('an SSO-only organization keeps its members and its domain out of every other way in', async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      await verifiedDomain(acme.browser, acme.organizationId, 'acme.example')
      const connection = await oidcConnection(acme.browser, acme.organizationId, 'acme')
      expect((await ssoSignIn(new Browser(), 'alice@acme.example')).status).toBe(302)
      const outsider = await adapter.createUser({ email: 'dave@elsewhere.example', emailVerified: null, name: 'Dave', image: null })
      await adapter.addMember!({ organizationId: acme.organizationId, userId: outsider.id, roles: ['member'] })
      await adapter.createUser({ email: 'carol@acme.example', emailVerified: null, name: 'Carol', image: null })

      expect((await post(acme.browser, '/sso/connections/update', { connectionId: connection.id, ssoOnly: true })).body.connection.ssoOnly).toBe(true)
      // Alice (a member, from the domain), Carol (the domain's address, no member yet) and Dave (a member of another domain):
      // the password form refuses each, before any session.
      for (const email of ['alice@acme.example', 'carol@acme.example', 'dave@elsewhere.example']) {
        const browser = new Browser()
        const refused = await passwordSignIn(browser, email)
        expect(redirectOf(refused)).toMatchObject({ error: 'SSO', code: 'sso_required' })
        expect(await sessionOf(browser, app.url)).toBeNull()
      }
      // Through the organization's IdP they still come in.
      const alice = new Browser()
      expect((await ssoSignIn(alice, 'alice@acme.example')).status).toBe(302)
      expect((await sessionOf(alice, app.url))?.user?.email).toBe('alice@acme.example')
      const carol = new Browser()
      expect((await ssoSignIn(carol, 'carol@acme.example')).status).toBe(302)
      const carolUser = (await adapter.getUserByEmail('carol@acme.example'))!
      expect(await adapter.getMember!(acme.organizationId, carolUser.id)).toMatchObject({ roles: ['member'] })

      // Disabled, the connection binds nobody: the password form works again.
      await post(acme.browser, '/sso/connections/update', { connectionId: connection.id, enabled: false })
      expect(redirectOf(await passwordSignIn(new Browser(), 'dave@elsewhere.example')).error).toBeNull()
    })

    it("a domain another organization verified first can be neither claimed nor verified again", async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      const evil = await owner(adapter, 'owner@evil.example', 'Evil')
      // Both claim it while it is unverified: an early claim does not keep the owner out.
      const early = await post(evil.browser, '/sso/domains', { organizationId: evil.organizationId, domain: 'acme.example' })
      expect(early.status).toBe(201)
      await verifiedDomain(acme.browser, acme.organizationId, 'acme.example')
      dns.txt.set(early.body.domain.record.name, [early.body.domain.record.value])
      expect(await post(evil.browser, '/sso/domains/verify', { domainId: early.body.domain.id })).toMatchObject({ status: 409, body: { code: 'domain_taken' } })
      expect(await post(evil.browser, '/sso/domains', { organizationId: evil.organizationId, domain: 'acme.example' })).toMatchObject({ status: 409, body: { code: 'domain_taken' } })
      // Another organization's domain id is as unknown as a made-up one.
      const acmeDomains = (await post(acme.browser, '/sso/domains', { organizationId: acme.organizationId, domain: 'acme-two.example' })).body.domain
      expect(await post(evil.browser, '/sso/domains/delete', { domainId: acmeDomains.id })).toMatchObject({ status: 404 })
      expect(await post(evil.browser, '/sso/domains/verify', { domainId: acmeDomains.id })).toMatchObject({ status: 404 })
    })

    it('a connection to an internal address is refused before anything is stored (SSRF)', async () => {
      const { adapter } = mount(db.knex, {})
      const acme = await owner(adapter)
      const attempts: [Record<string, unknown>, string][] = [
        [{ issuer: idp.issuer }, 'invalid_input'],
        [{ issuer: `https://localhost:${new URL(idp.issuer).port}` }, 'invalid_metadata'],
        [{ issuer: 'https://169.254.169.254/latest/meta-data' }, 'invalid_metadata'],
        [{ issuer: 'https://[::ffff:127.0.0.1]:1/' }, 'invalid_metadata'],
        [{ issuer: 'https://user:pw@idp.example/' }, 'invalid_input'],
      ]
      for (const [fields, code] of attempts) {
        const refused = await post(acme.browser, '/sso/connections', { organizationId: acme.organizationId, name: 'x', type: 'oidc', clientId: 'acme', clientSecret: 's', ...fields })
        expect({ fields, status: refused.status, code: refused.body.code }).toEqual({ fields, status: 400, code })
      }
      const saml = await post(acme.browser, '/sso/connections', { organizationId: acme.organizationId, name: 'x', type: 'saml', metadataUrl: `https://localhost:${new URL(idp.issuer).port}/metadata` })
      expect(saml).toMatchObject({ status: 400, body: { code: 'invalid_metadata' } })
      expect(await db.knex('SsoConnection').select()).toEqual([])
    })

    it('only the organization\'s owners and admins manage its connections and domains; others learn nothing', async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      await verifiedDomain(acme.browser, acme.organizationId, 'acme.example')
      const connection = await oidcConnection(acme.browser, acme.organizationId, 'acme')
      const member = await adapter.createUser({ email: 'member@acme.example', emailVerified: null, name: 'M', image: null })
      await adapter.addMember!({ organizationId: acme.organizationId, userId: member.id, roles: ['member'] })
      const memberBrowser = new Browser()
      expect((await passwordSignIn(memberBrowser, 'member@acme.example')).status).toBe(302)
      expect(await post(memberBrowser, '/sso/connections/update', { connectionId: connection.id, enabled: false })).toMatchObject({ status: 403, body: { code: 'forbidden' } })
      expect(await post(memberBrowser, '/sso/domains', { organizationId: acme.organizationId, domain: 'x.example' })).toMatchObject({ status: 403 })
      const stranger = await owner(adapter, 'owner@evil.example', 'Evil')
      expect(await post(stranger.browser, '/sso/connections/delete', { connectionId: connection.id })).toMatchObject({ status: 404 })
      const list = await stranger.browser.request(`${app.url}/api/auth/sso?organizationId=${acme.organizationId}`, { headers: { accept: 'application/json' } })
      expect(list.status).toBe(404)
      // Without a CSRF token, nothing changes.
      const forged = await acme.browser.request(`${app.url}/api/auth/sso/connections/delete`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ connectionId: connection.id }) })
      expect(forged.status).toBe(403)
      expect(await db.knex('SsoConnection').count({ n: '*' }).then((rows) => Number(rows[0]!.n))).toBe(1)
    })

    it('raw paths through the ACS (the one POST without a CSRF token), a trailing slash and HEAD reach no management action', async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      const connection = await oidcConnection(acme.browser, acme.organizationId, 'acme')
      const cookie = ['authjs.session-token', 'authjs.csrf-token'].map((name) => `${name}=${acme.browser.cookie(app.url, name)}`).join('; ')
      const headers = { cookie, 'content-type': 'application/json', accept: 'application/json', origin: app.url, host: new URL(app.url).host }
      const body = JSON.stringify({ connectionId: connection.id })
      for (const path of ['/api/auth/saml-acs/%2e%2e/sso/connections/delete', '/api/auth/saml-acs/..%2fsso%2fconnections%2fdelete', '/api/auth/saml-acs/x/../../sso/connections/delete', '/api/auth/sso/connections/delete/', '/api/auth/sso//connections/delete', '/api/auth/SSO/connections/delete']) {
        const answer = await raw('POST', path, headers, body)
        expect([path, answer.status === 200 || answer.status === 201]).toEqual([path, false])
      }
      const head = await raw('HEAD', '/api/auth/sso/connections/delete', headers)
      expect(head.status).not.toBe(200)
      expect(Number((await db.knex('SsoConnection').count({ n: '*' }))[0]!.n)).toBe(1)
      // The same raw request with the form's token does reach it: the refusals above were the CSRF rule's.
      const token = await csrf(acme.browser)
      const cookieNow = ['authjs.session-token', 'authjs.csrf-token'].map((name) => `${name}=${acme.browser.cookie(app.url, name)}`).join('; ')
      expect((await raw('POST', '/api/auth/sso/connections/delete/', { ...headers, cookie: cookieNow }, JSON.stringify({ connectionId: connection.id, csrfToken: token }))).status).toBe(200)
      expect(Number((await db.knex('SsoConnection').count({ n: '*' }))[0]!.n)).toBe(0)
    })

    it('the SSO page shows the record to publish and what the IdP needs; the sign-in page asks the address first', async () => {
      const { adapter } = mount(db.knex)
      const acme = await owner(adapter)
      const added = (await post(acme.browser, '/sso/domains', { organizationId: acme.organizationId, domain: 'acme.example' })).body.domain
      await oidcConnection(acme.browser, acme.organizationId, 'acme')
      const page = await acme.browser.request(`${app.url}/api/auth/sso?organizationId=${acme.organizationId}`, { headers: { accept: 'text/html' } })
      expect(page.status).toBe(200)
      expect(page.headers.get('cache-control')).toBe('no-store')
      const html = await page.text()
      expect(html).toContain(added.record.name)
      expect(html).toContain(added.record.value)
      expect(html).toContain(`${app.url}/api/auth/callback/sso`)
      expect(html).not.toContain('acme-secret')

      const signIn = await (await new Browser().request(`${app.url}/api/auth/signin`)).text()
      const sso = signIn.indexOf('Work e-mail address')
      expect(sso).toBeGreaterThan(0)
      expect(sso).toBeLessThan(signIn.indexOf('/callback/credentials'))
      expect(signIn).toContain(`action="/api/auth/signin/sso"`)
    })
  })
}
