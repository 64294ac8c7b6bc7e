/**
 * Single sign-on through SAML 2.0 connections, end to end over HTTP, on SQLite, PostgreSQL and MariaDB,
 * with responses signed by a real SAML IdP (samlify, test/sso/saml/idp.ts): the connection registered
 * from the IdP's metadata, this site's SP metadata, an SP-initiated sign-in whose response comes back
 * through the same-site continue page, just-in-time membership. The attacks: a response replayed on
 * another Portcullis instance of the same database (and two at once), an unsolicited response where
 * IdP-initiated sign-in is off, a RelayState pointing elsewhere, a response for another connection,
 * one signed by a stranger, and an address outside the organization's domains.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import SSO from 'portcullis/providers/sso'
import type { PortcullisConfig } from 'portcullis'
import { Browser } from '../support/browser.js'
import { ssoClient } from './sso-client.js'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, type Listener } from '../support/oauth-app.js'
import { authnRequestOf, idpMetadata, idpResponseXml, IDP_SSO_URL, toBase64, type ResponseOptions } from './saml/idp.js'

let app: Listener
let second: Listener

beforeAll(async () => {
  app = await listen()
  second = await listen()
})
afterAll(() => closeListeners())

/** Portcullis at `listener` with organizations, SSO and passwords ("pw"). */
function mount(knex: Knex, listener: Listener = app, config: Partial<PortcullisConfig> = {}) {
  const adapter = KnexAdapter(knex)
  const portcullis = mountApp(listener, {
    ...config,
    adapter,
    organizations: true,
    session: { strategy: 'database' },
    providers: [
      SSO({ domainVerification: 'dns-or-admin' }),
      Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) }),
    ],
  })
  return { adapter, portcullis }
}

const { csrf, post } = ssoClient(() => app.url)

/** An organization with `domain` verified (on the app's word) and a SAML connection to the samlify IdP. */
async function samlOrganization(mounted: ReturnType<typeof mount>, domain = 'acme.example', extra: Record<string, unknown> = {}): Promise<{ organizationId: string; connection: Record<string, any>; owner: Browser }> {
  const { adapter, portcullis } = mounted
  const email = `owner@${domain}`
  await adapter.createUser({ email, emailVerified: null, name: 'Owner', image: null })
  const owner = new Browser()
  expect((await owner.request(`${app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await csrf(owner), email, password: 'pw' }) })).status).toBe(302)
  const organizationId = (await post(owner, '/organizations', { name: domain })).body.organization.id as string
  const claimed = await post(owner, '/sso/domains', { organizationId, domain })
  await portcullis.markSsoDomainVerified(claimed.body.domain.id)
  const created = await post(owner, '/sso/connections', { organizationId, name: 'Acme SAML', type: 'saml', metadataXml: idpMetadata(['idp']), ...extra })
  expect({ status: created.status, body: created.status === 201 ? undefined : created.body }).toEqual({ status: 201 })
  return { organizationId, connection: created.body.connection, owner }
}

/** A response of the samlify IdP to `connection` at `origin`, for `nameId`, valid now for five minutes. */
async function responseFor(connection: Record<string, any>, nameId: string, requestId: string | null, options: ResponseOptions = {}, origin = app.url): Promise<string> {
  const acsUrl = connection.saml.acsUrl.replace(app.url, origin)
  const now = Date.now()
  const xml = await idpResponseXml({
    ...options,
    attributes: options.attributes ?? { mail: nameId, displayName: 'Alice Liddell' },
    fields: {
      IssueInstant: new Date(now).toISOString(),
      Destination: acsUrl,
      Recipient: acsUrl,
      Audience: connection.saml.spEntityId.replace(app.url, origin),
      InResponseTo: requestId,
      SubjectInResponseTo: requestId,
      NameID: nameId,
      SubjectNotOnOrAfter: new Date(now + 5 * 60_000).toISOString(),
      ConditionsNotBefore: new Date(now - 60_000).toISOString(),
      ConditionsNotOnOrAfter: new Date(now + 5 * 60_000).toISOString(),
      ...options.fields,
    },
  })
  return toBase64(xml)
}

/** The IdP's cross-site POST to the ACS: no cookie of this site goes with it (SameSite=Lax). */
function postToAcs(browser: Browser | null, acsUrl: string, fields: Record<string, string>): Promise<Response> {
  const body = new URLSearchParams(fields)
  return browser ? browser.request(acsUrl, { body }) : fetch(acsUrl, { method: 'POST', body, redirect: 'manual' })
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `SSO through SAML connections on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    it('signs in SP-initiated: the AuthnRequest, the signed response through the same-site continue page, a new member', async () => {
      const mounted = mount(db.knex)
      const { organizationId, connection } = await samlOrganization(mounted)
      expect(connection.saml).toMatchObject({
        idpEntityId: 'https://idp.acme.example/saml/metadata',
        certificates: 1,
        allowIdpInitiated: false,
        spEntityId: `${app.url}/api/auth/saml-metadata/${connection.id}`,
        acsUrl: `${app.url}/api/auth/saml-acs/${connection.id}`,
      })
      const metadata = await fetch(connection.saml.spMetadataUrl)
      expect(metadata.headers.get('content-type')).toContain('application/samlmetadata+xml')
      const xml = await metadata.text()
      expect(xml).toContain(`entityID="${connection.saml.spEntityId}"`)
      expect(xml).toContain(`Location="${connection.saml.acsUrl}"`)

      const alice = new Browser()
      const started = await alice.request(`${app.url}/api/auth/signin/sso`, { body: new URLSearchParams({ csrfToken: await csrf(alice), email: 'alice@acme.example', callbackUrl: '/after' }) })
      const location = started.headers.get('location')!
      expect(location.startsWith(`${IDP_SSO_URL}?`)).toBe(true)
      const request = authnRequestOf(location)
      expect(request).toMatchObject({ issuer: connection.saml.spEntityId, acsUrl: connection.saml.acsUrl, relayState: null })

      // The IdP's POST carries no cookie: the answer is a page that posts the response once more, from this site.
      const response = await responseFor(connection, 'alice@acme.example', request.id)
      const crossSite = await postToAcs(null, connection.saml.acsUrl, { SAMLResponse: response })
      expect(crossSite.status).toBe(200)
      expect(crossSite.headers.get('content-security-policy')).toMatch(/script-src 'sha384-[^']+'|script-src [^;]*saml-continue\.js/)
      const continued = await alice.submitForm(crossSite)
      expect(continued.status).toBe(302)
      expect(continued.headers.get('location')).toBe(`${app.url}/after`)
      expect((await sessionOf(alice, app.url))?.user?.email).toBe('alice@acme.example')
      const user = (await mounted.adapter.getUserByEmail('alice@acme.example'))!
      expect(await mounted.adapter.getMember!(organizationId, user.id)).toMatchObject({ roles: ['member'] })
      expect(user.name).toBe('Alice Liddell')

      // The same response again, in the same browser: its request is spent (the sign-in cookie is gone).
      expect(redirectOf(await postToAcs(alice, connection.saml.acsUrl, { SAMLResponse: response, continued: '1' })).error).toBe('SamlResponse')
    })

    it('refuses an unsolicited response while IdP-initiated sign-in is off, and a response to another request', async () => {
      const mounted = mount(db.knex)
      const { connection } = await samlOrganization(mounted)
      const stranger = new Browser()
      const unsolicited = await postToAcs(stranger, connection.saml.acsUrl, { SAMLResponse: await responseFor(connection, 'alice@acme.example', null), continued: '1' })
      expect(redirectOf(unsolicited).error).toBe('SamlResponse')
      expect(await sessionOf(stranger, app.url)).toBeNull()

      // A browser that started a sign-in, handed a response to another request (login CSRF with a captured response).
      const victim = new Browser()
      await victim.request(`${app.url}/api/auth/signin/sso`, { body: new URLSearchParams({ csrfToken: await csrf(victim), email: 'alice@acme.example' }) })
      const other = await responseFor(connection, 'mallory@acme.example', '_another-request')
      expect(redirectOf(await postToAcs(victim, connection.saml.acsUrl, { SAMLResponse: other })).error).toBe('SamlResponse')
      expect(await sessionOf(victim, app.url)).toBeNull()
    })

    it('with IdP-initiated sign-in allowed, each assertion signs in once across instances, and RelayState stays on this site', async () => {
      const mounted = mount(db.knex)
      const { connection } = await samlOrganization(mounted, 'acme.example', { allowIdpInitiated: true })
      // A second Portcullis on the same database, another process of the same app (its own origin, so its own SP URLs).
      mount(db.knex, second)
      const onSecond = (url: string) => url.replace(app.url, second.url)

      const first = new Browser()
      const response = await responseFor(connection, 'alice@acme.example', null)
      const signedIn = await postToAcs(first, connection.saml.acsUrl, { SAMLResponse: response, RelayState: '/dashboard', continued: '1' })
      expect(signedIn.headers.get('location')).toBe(`${app.url}/dashboard`)
      expect((await sessionOf(first, app.url))?.user?.email).toBe('alice@acme.example')
      // Replayed at this instance, and at the other (with its own audience, so that only the replay check refuses it).
      expect(redirectOf(await postToAcs(new Browser(), connection.saml.acsUrl, { SAMLResponse: response, continued: '1' })).error).toBe('SamlResponse')
      const replayElsewhere = await responseFor(connection, 'alice@acme.example', null, { fields: { AssertionID: '_same-assertion' } }, second.url)
      const once = await postToAcs(new Browser(), onSecond(connection.saml.acsUrl), { SAMLResponse: replayElsewhere, continued: '1' })
      expect(once.status).toBe(302)
      expect(redirectOf(once).error).toBeNull()
      const twice = await postToAcs(new Browser(), onSecond(connection.saml.acsUrl), { SAMLResponse: replayElsewhere, continued: '1' })
      expect(redirectOf(twice).error).toBe('SamlResponse')

      // Two instances given one assertion at the same moment: exactly one signs in.
      const raced = await responseFor(connection, 'alice@acme.example', null, { fields: { AssertionID: '_raced-assertion' } })
      const racedSecond = await responseFor(connection, 'alice@acme.example', null, { fields: { AssertionID: '_raced-assertion' } }, second.url)
      const answers = await Promise.all([
        postToAcs(new Browser(), connection.saml.acsUrl, { SAMLResponse: raced, continued: '1' }),
        postToAcs(new Browser(), onSecond(connection.saml.acsUrl), { SAMLResponse: racedSecond, continued: '1' }),
        postToAcs(new Browser(), connection.saml.acsUrl, { SAMLResponse: raced, continued: '1' }),
      ])
      expect(answers.map((answer) => redirectOf(answer).error).sort()).toEqual([null, 'SamlResponse', 'SamlResponse'].sort())

      // RelayState to another site, or a protocol-relative one: the sign-in goes to this site instead.
      for (const relayState of ['https://evil.example/steal', '//evil.example/', '/\\evil.example']) {
        const answer = await postToAcs(new Browser(), connection.saml.acsUrl, { SAMLResponse: await responseFor(connection, 'alice@acme.example', null), RelayState: relayState, continued: '1' })
        expect(answer.status).toBe(302)
        expect(new URL(answer.headers.get('location')!).origin).toBe(app.url)
      }
    })

    it("refuses a response for another connection, one signed by a stranger, and an address outside the organization's domains", async () => {
      const mounted = mount(db.knex)
      const acme = await samlOrganization(mounted, 'acme.example', { allowIdpInitiated: true })
      const globex = await samlOrganization(mounted, 'globex.example', { allowIdpInitiated: true })
      const refusedWith = async (acsUrl: string, response: string) => {
        const browser = new Browser()
        const answer = await postToAcs(browser, acsUrl, { SAMLResponse: response, continued: '1' })
        expect(await sessionOf(browser, app.url)).toBeNull()
        return redirectOf(answer)
      }
      // Globex's response (its audience and ACS) posted to Acme's ACS.
      expect((await refusedWith(acme.connection.saml.acsUrl, await responseFor(globex.connection, 'alice@acme.example', null))).error).toBe('SamlResponse')
      // Signed with a key no metadata of Acme's lists.
      expect((await refusedWith(acme.connection.saml.acsUrl, await responseFor(acme.connection, 'alice@acme.example', null, { key: 'attacker' }))).error).toBe('SamlResponse')
      // Acme's IdP vouching for a Globex address.
      expect(await refusedWith(acme.connection.saml.acsUrl, await responseFor(acme.connection, 'bob@globex.example', null))).toMatchObject({ error: 'SSO', code: 'address_outside_domains' })
      // A connection id that does not exist.
      expect((await refusedWith(`${app.url}/api/auth/saml-acs/no-such-connection`, await responseFor(acme.connection, 'alice@acme.example', null))).error).toBe('SamlResponse')
      expect((await fetch(`${app.url}/api/auth/saml-metadata/no-such-connection`)).status).toBe(404)
    })

    it("the ACS counts each response against the client's address: a flood of forged ones meets the sign-in limit", async () => {
      const mounted = mount(db.knex, app, { rateLimit: { ip: { attempts: 3, windowSeconds: 60 } } })
      const { connection } = await samlOrganization(mounted, 'acme.example', { allowIdpInitiated: true })
      const forged = await responseFor(connection, 'alice@acme.example', null, { key: 'attacker' })
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) statuses.push((await postToAcs(new Browser(), connection.saml.acsUrl, { SAMLResponse: forged, continued: '1' })).status)
      // Three refusals (the sign-in page), then 429 before any signature is checked.
      expect(statuses).toEqual([302, 302, 302, 429])
    })

    it('the background prune deletes the used assertions past their expiry and keeps the others', async () => {
      const adapter = KnexAdapter(db.knex)
      expect(await adapter.claimSsoAssertion('a'.repeat(64), new Date(Date.now() - 1000))).toBe(true)
      expect(await adapter.claimSsoAssertion('b'.repeat(64), new Date(Date.now() + 3_600_000))).toBe(true)
      expect(await adapter.claimSsoAssertion('b'.repeat(64), new Date(Date.now() + 3_600_000))).toBe(false)
      const stop = new AbortController()
      try {
        mount(db.knex, app, { prune: { everyMinutes: 0.002, signal: stop.signal } })
        for (let i = 0; i < 100 && (await db.knex('SsoReplay').where({ key: 'a'.repeat(64) })).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
      } finally {
        stop.abort()
      }
      expect((await db.knex('SsoReplay').select('key')).map((row) => row.key)).toEqual(['b'.repeat(64)])
    })
  })
}
