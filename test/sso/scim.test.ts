/**
 * SCIM 2.0 provisioning (RFC 7643/7644) of an SSO connection, over HTTP on SQLite, PostgreSQL and
 * MariaDB, with the requests Okta and Microsoft Entra ID document (Okta's "SCIM 2.0 protocol
 * reference", Microsoft's "Build a SCIM endpoint and configure user provisioning with Microsoft Entra
 * ID", its request examples): provisioning, finding by filter, updating, deactivating (the user's
 * session ends), reactivating, deleting; groups as teams. The attacks: no token, a wrong token,
 * another connection's token, a revoked or replaced one, a disabled connection's, a token in the
 * URL, an address outside the verified domains, another organization's user, the last owner.
 */
import { randomInt } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import express from 'express'
import type { Knex } from 'knex'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import SSO from 'portcullis/providers/sso'
import type { PortcullisConfig } from 'portcullis'
import { Browser } from '../support/browser.js'
import { ssoClient } from './sso-client.js'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, sessionOf, type Listener } from '../support/oauth-app.js'
import { idpMetadata } from './saml/idp.js'

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User'
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group'
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error'
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'

let app: Listener
let idp: TestIdp
beforeAll(async () => {
  app = await listen()
  // An OpenID Connect IdP whose login is the address it answers.
  idp = await startIdp({ clients: [{ client_id: 'acme', client_secret: 'acme-secret', redirect_uris: [`${app.url}/api/auth/callback/sso`] }], claims: (login) => ({ email: login, email_verified: true, name: login }) })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

type Adapter = ReturnType<typeof KnexAdapter>
type Scim = { status: number; headers: Headers; body: any }

/** Portcullis with organizations (teams unless told), the SSO provider and passwords ("pw"); the events it emitted. */
function mount(knex: Knex, config: Partial<PortcullisConfig> = {}) {
  const adapter = KnexAdapter(knex)
  const events: Array<[string, any]> = []
  let server: express.Express | undefined
  const portcullis = mountApp(app, {
    adapter,
    organizations: { teams: true },
    session: { strategy: 'database' },
    providers: [SSO({ dangerouslyAllowInternalUrls: true }), Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) })],
    events: {
      ssoUserProvisioned: (message) => void events.push(['ssoUserProvisioned', message]),
      ssoUserDeprovisioned: (message) => void events.push(['ssoUserDeprovisioned', message]),
    },
    ...config,
  }, () => (server = express()))
  // The app's own "disconnect an account" route: the server-side unlinkAccount() for the signed-in user.
  server!.post('/unlink', express.json(), portcullis.auth(async (req, res) => {
    try {
      await portcullis.unlinkAccount(String(req.body.provider), { providerAccountId: req.body.providerAccountId, skipCsrfCheck: true })
      res.json({ removed: true })
    } catch (error) {
      res.status(409).json({ code: (error as { code?: string }).code })
    }
  }))
  return { adapter, portcullis, events }
}

const { csrf, post } = ssoClient(() => app.url)

async function signIn(email: string): Promise<Browser> {
  const browser = new Browser()
  const response = await browser.request(`${app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await csrf(browser), email, password: 'pw' }) })
  expect(response.status).toBe(302)
  expect((await sessionOf(browser, app.url))?.user?.email).toBe(email)
  return browser
}

/**
 * An organization of an owner signed in with a password, its verified domain, an SSO connection and
 * the connection's SCIM token (made through POST /sso/connections/scim-token).
 */
async function organization(adapter: Adapter, domain = 'acme.example', name = 'Acme') {
  const email = `owner@${domain}`
  const owner = await adapter.createUser({ email, emailVerified: null, name: 'Owner', image: null })
  const browser = await signIn(email)
  const created = await post(browser, '/organizations', { name })
  expect(created.status).toBe(201)
  const organizationId: string = created.body.organization.id
  const claimed = await adapter.createSsoDomain({ organizationId, domain, token: 'proof' })
  if (claimed === 'taken') throw new Error('taken')
  await adapter.verifySsoDomain(claimed.id, new Date(), 'admin')
  const registered = await post(browser, '/sso/connections', { organizationId, name: `${name} IdP`, type: 'saml', metadataXml: idpMetadata(['idp']) })
  expect(registered.status).toBe(201)
  const connection = registered.body.connection as { id: string }
  const made = await post(browser, '/sso/connections/scim-token', { connectionId: connection.id })
  expect(made.status).toBe(201)
  return { browser, organizationId, connectionId: connection.id, token: made.body.token as string, ownerId: owner.id, made: made.body }
}

/** A SCIM request to /api/auth/scim/v2<path> with the bearer token (none when undefined). */
async function scim(token: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Scim> {
  const response = await fetch(`${app.url}/api/auth/scim/v2${path}`, {
    method,
    headers: { ...(token !== undefined && { authorization: `Bearer ${token}` }), ...(body !== undefined && { 'content-type': 'application/scim+json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** A well-formed token of the connection that it never issued: its checksum right, so only the stored hash refuses it. */
function forgedToken(connectionId: string): string {
  const head = `pcscim_${connectionId}_${Array.from({ length: 32 }, () => BASE62[randomInt(62)]).join('')}`
  let value = crc32(head)
  let checksum = ''
  for (let i = 0; i < 6; i++, value = Math.floor(value / 62)) checksum = BASE62[value % 62] + checksum
  return head + checksum
}

const q = (filter: string) => `?filter=${encodeURIComponent(filter)}`

/** Okta's POST /Users (its protocol reference's "Create the user" request), for `email`. */
function oktaUser(email: string, externalId = '00ujl29u0le5T6Aj10h7') {
  return {
    schemas: [USER],
    userName: email,
    name: { givenName: 'Alice', familyName: 'Smith' },
    emails: [{ primary: true, value: email, type: 'work' }],
    displayName: 'Alice Smith',
    locale: 'en-US',
    externalId,
    groups: [],
    password: '1mz050nq',
    active: true,
  }
}

/** Entra ID's POST /Users (Microsoft's "Create User" request): a userName that is no address, the address in the primary e-mail. */
function entraUser(email: string) {
  return {
    schemas: [USER, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef',
    userName: 'Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1',
    active: true,
    emails: [{ primary: true, type: 'work', value: email }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: [],
  }
}

function expectScimError(answer: Scim, status: number, scimType?: string): void {
  expect({ status: answer.status, type: answer.headers.get('content-type'), schemas: answer.body?.schemas, statusField: answer.body?.status, scimType: answer.body?.scimType }).toEqual({
    status,
    type: 'application/scim+json; charset=utf-8',
    schemas: [ERROR],
    statusField: String(status),
    scimType,
  })
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `SCIM provisioning of SSO connections on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    it('gives a connection its SCIM token once, keeps only its SHA-256, and describes the endpoints', async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      expect(acme.token).toMatch(new RegExp(`^pcscim_${acme.connectionId}_[0-9A-Za-z]{38}$`))
      expect(acme.made.connection.scim).toEqual({ enabled: true, createdAt: expect.any(String), baseUrl: `${app.url}/api/auth/scim/v2` })
      const stored = JSON.stringify(await db.knex('SsoConnection').select())
      expect(stored).not.toContain(acme.token)
      expect(stored).toContain('scimTokenHash')
      const listed = await acme.browser.request(`${app.url}/api/auth/sso?organizationId=${acme.organizationId}`, { headers: { accept: 'application/json' } })
      expect(JSON.stringify(await listed.json())).not.toContain('scimTokenHash')
      // Without the CSRF token no token is made.
      const forged = await acme.browser.request(`${app.url}/api/auth/sso/connections/scim-token`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ connectionId: acme.connectionId }) })
      expect(forged.status).toBe(403)

      // A browser's form gets the SSO page with the new token, shown this once and never cached.
      const page = await acme.browser.request(`${app.url}/api/auth/sso/connections/scim-token`, { body: new URLSearchParams({ csrfToken: await csrf(acme.browser), connectionId: acme.connectionId, organizationId: acme.organizationId }) })
      expect({ status: page.status, cache: page.headers.get('cache-control') }).toEqual({ status: 200, cache: 'no-store' })
      const html = await page.text()
      const shown = /<code data-scim-token>([^<]+)<\/code>/.exec(html)![1]!
      expect(html).toContain(`<code data-scim-base-url>${app.url}/api/auth/scim/v2</code>`)
      expectScimError(await scim(acme.token, 'GET', '/Users'), 401)
      acme.token = shown
      expect((await scim(acme.token, 'GET', '/Users')).status).toBe(200)
      const again = await (await acme.browser.request(`${app.url}/api/auth/sso?organizationId=${acme.organizationId}`)).text()
      expect(again).not.toContain(shown)

      // A key rollover (new metadata) keeps the token.
      const rolled = await post(acme.browser, '/sso/connections/update', { connectionId: acme.connectionId, metadataXml: idpMetadata(['idp', 'idp-next']) })
      expect(rolled.body.connection).toMatchObject({ saml: { certificates: 2 }, scim: { enabled: true } })
      expect((await scim(acme.token, 'GET', '/Users')).status).toBe(200)

      const config = await scim(acme.token, 'GET', '/ServiceProviderConfig')
      expect(config.headers.get('content-type')).toBe('application/scim+json; charset=utf-8')
      expect(config.body).toMatchObject({
        patch: { supported: true },
        filter: { supported: true, maxResults: 100 },
        bulk: { supported: false },
        sort: { supported: false },
        etag: { supported: false },
        changePassword: { supported: false },
        'urn:portcullis:params:scim:ServiceProviderConfig': { groups: true },
      })
      expect((await scim(acme.token, 'GET', '/ResourceTypes')).body.Resources.map((type: any) => type.endpoint)).toEqual(['/Users', '/Groups'])
      expectScimError(await scim(acme.token, 'GET', '/Users/%E0%A4%A'), 404)
      expectScimError(await scim(acme.token, 'GET', '/Bulk'), 404)
      expectScimError(await scim(acme.token, 'PUT', '/Groups/x', { schemas: [GROUP] }), 405)
      const schemas = (await scim(acme.token, 'GET', '/Schemas')).body
      expect(schemas.Resources.map((schema: any) => schema.id)).toEqual([USER, GROUP])
      expect(schemas.Resources[0].attributes.map((attribute: any) => attribute.name)).toEqual(['userName', 'name', 'displayName', 'emails', 'active'])
    })

    it("provisions, finds, updates, deactivates (ending the session), reactivates and deletes a user with Okta's requests", async () => {
      const { adapter, events } = mount(db.knex)
      const acme = await organization(adapter)
      // Okta looks the user up first.
      const none = await scim(acme.token, 'GET', `/Users${q('userName eq "alice@acme.example"')}&startIndex=1&count=100`)
      expect(none.body).toEqual({ schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] })

      const created = await scim(acme.token, 'POST', '/Users', oktaUser('alice@acme.example'))
      expect(created.status).toBe(201)
      const id: string = created.body.id
      expect(created.headers.get('location')).toBe(`${app.url}/api/auth/scim/v2/Users/${id}`)
      expect(created.body).toMatchObject({ schemas: [USER], userName: 'alice@acme.example', externalId: '00ujl29u0le5T6Aj10h7', displayName: 'Alice Smith', active: true, emails: [{ value: 'alice@acme.example', primary: true }] })
      expect(await adapter.getMember!(acme.organizationId, id)).toMatchObject({ roles: ['member'] })
      expect(events).toContainEqual(['ssoUserProvisioned', { connectionId: acme.connectionId, organizationId: acme.organizationId, userId: id, externalId: '00ujl29u0le5T6Aj10h7', reactivated: false }])
      expectScimError(await scim(acme.token, 'POST', '/Users', oktaUser('alice@acme.example')), 409, 'uniqueness')

      // Attribute names and the operator in any case; userName's value regardless of case (RFC 7644 §3.4.2.2).
      const found = await scim(acme.token, 'GET', `/Users${q('USERNAME Eq "Alice@ACME.example"')}`)
      expect(found.body).toMatchObject({ totalResults: 1, Resources: [{ id, externalId: '00ujl29u0le5T6Aj10h7' }] })
      expect((await scim(acme.token, 'GET', `/Users${q('externalId eq "00ujl29u0le5T6Aj10h7"')}`)).body.Resources.map((user: any) => user.id)).toEqual([id])
      expect((await scim(acme.token, 'GET', `/Users${q('externalId eq "00UJL29U0LE5T6AJ10H7"')}`)).body.totalResults).toBe(0)
      expectScimError(await scim(acme.token, 'GET', `/Users${q('userName co "alice"')}`), 400, 'invalidFilter')
      const page = await scim(acme.token, 'GET', '/Users?startIndex=2&count=1')
      expect(page.body).toMatchObject({ totalResults: 2, startIndex: 2, itemsPerPage: 1 })

      // Okta's profile update is a PUT of the whole user.
      const replaced = await scim(acme.token, 'PUT', `/Users/${id}`, { ...oktaUser('alice@acme.example'), id, name: { givenName: 'Alicia', familyName: 'Smith' }, displayName: undefined })
      expect(replaced.status).toBe(200)
      expect(replaced.body.displayName).toBe('Alicia Smith')

      const alice = await signIn('alice@acme.example')
      // Okta deactivates with a PATCH whose value object has no path.
      const deactivated = await scim(acme.token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] })
      expect(deactivated.body).toMatchObject({ id, active: false })
      expect(await sessionOf(alice, app.url)).toBeNull()
      expect(await adapter.getMember!(acme.organizationId, id)).toBeNull()
      expect(await adapter.getUser(id)).toMatchObject({ email: 'alice@acme.example' })
      expect(events).toContainEqual(['ssoUserDeprovisioned', { connectionId: acme.connectionId, organizationId: acme.organizationId, userId: id, deleted: false, sessionsEnded: 1 }])
      // Still found, inactive, so that the IdP can make them active again.
      expect((await scim(acme.token, 'GET', `/Users${q('userName eq "alice@acme.example"')}`)).body.Resources[0]).toMatchObject({ id, active: false })

      const reactivated = await scim(acme.token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] })
      expect(reactivated.body).toMatchObject({ active: true })
      expect(await adapter.getMember!(acme.organizationId, id)).toMatchObject({ roles: ['member'] })

      const again = await signIn('alice@acme.example')
      expect((await scim(acme.token, 'DELETE', `/Users/${id}`)).status).toBe(204)
      expect(await sessionOf(again, app.url)).toBeNull()
      expectScimError(await scim(acme.token, 'GET', `/Users/${id}`), 404)
      expect(await adapter.getUser(id)).not.toBeNull()
      expect(await adapter.getMember!(acme.organizationId, id)).toBeNull()
    })

    it("provisions, renames and disables a user with Entra ID's requests (a string boolean, capitalised ops)", async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      expect((await scim(acme.token, 'GET', `/Users${q('userName eq "5171a35d82074e068ce2"')}`)).body.totalResults).toBe(0)
      const created = await scim(acme.token, 'POST', '/Users', entraUser('Bob@Acme.example'))
      expect(created.status).toBe(201)
      const id: string = created.body.id
      expect(created.body).toMatchObject({ userName: 'bob@acme.example', externalId: '0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef', displayName: 'givenName familyName', active: true })
      expect((await scim(acme.token, 'GET', `/Users${q('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"')}`)).body.Resources.map((user: any) => user.id)).toEqual([id])

      const renamed = await scim(acme.token, 'PATCH', `/Users/${id}`, {
        schemas: [PATCH],
        Operations: [
          { op: 'Replace', path: 'name.familyName', value: 'Leenay' },
          { op: 'Replace', path: 'name.givenName', value: 'Ryan' },
          { op: 'Add', path: 'emails[type eq "work"].value', value: 'ignored@acme.example' },
          { op: 'Replace', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Sales' },
        ],
      })
      expect(renamed.body).toMatchObject({ displayName: 'Ryan Leenay', userName: 'bob@acme.example' })
      expect((await scim(acme.token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'displayName', value: 'Bob B.' }] })).body.displayName).toBe('Bob B.')
      expect((await scim(acme.token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'externalId', value: 'e2' }] })).body.externalId).toBe('e2')

      const bob = await signIn('bob@acme.example')
      const disabled = await scim(acme.token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] })
      expect(disabled.body).toMatchObject({ active: false })
      expect(await sessionOf(bob, app.url)).toBeNull()
      expectScimError(await scim(acme.token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'maybe' }] }), 400, 'invalidValue')
      expect((await scim(acme.token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] })).body.active).toBe(true)
      expect((await scim(acme.token, 'DELETE', `/Users/${id}`)).status).toBe(204)
      expect((await scim(acme.token, 'GET', `/Users${q('externalId eq "e2"')}`)).body.totalResults).toBe(0)
    })

    it("maps groups to the organization's teams (Entra ID's and Okta's group requests); off without teams", async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      const alice = (await scim(acme.token, 'POST', '/Users', oktaUser('alice@acme.example', 'a1'))).body.id as string
      const bob = (await scim(acme.token, 'POST', '/Users', entraUser('bob@acme.example'))).body.id as string

      const created = await scim(acme.token, 'POST', '/Groups', { externalId: '8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159', displayName: 'Engineers', meta: { resourceType: 'Group' }, schemas: [GROUP] })
      expect(created.status).toBe(201)
      const group: string = created.body.id
      expect(created.body).toMatchObject({ schemas: [GROUP], displayName: 'Engineers', members: [] })
      expectScimError(await scim(acme.token, 'POST', '/Groups', { schemas: [GROUP], displayName: 'engineers' }), 409, 'uniqueness')
      expect((await scim(acme.token, 'GET', `/Groups${q('displayName eq "engineers"')}&excludedAttributes=members`)).body.Resources).toEqual([expect.not.objectContaining({ members: expect.anything() })])

      // Entra ID adds members with a path and a list; Okta removes one by a value filter and renames without a path.
      const add = await scim(acme.token, 'PATCH', `/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: alice }, { $ref: null, value: bob }] }] })
      expect(add.status).toBe(204)
      expect((await scim(acme.token, 'GET', `/Groups/${group}`)).body.members.map((member: any) => member.value).sort()).toEqual([alice, bob].sort())
      await scim(acme.token, 'PATCH', `/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${bob}"]` }, { op: 'replace', value: { id: group, displayName: 'Test SCIMv2' } }] })
      expect((await scim(acme.token, 'GET', `/Groups/${group}`)).body).toMatchObject({ displayName: 'Test SCIMv2', members: [{ value: alice }] })
      // Entra ID removes members with a path and a list of values.
      await scim(acme.token, 'PATCH', `/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: bob }] }] })
      expect((await scim(acme.token, 'PATCH', `/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'Remove', path: 'members', value: [{ value: bob }] }] })).status).toBe(204)
      expect((await scim(acme.token, 'GET', `/Groups/${group}`)).body.members.map((member: any) => member.value)).toEqual([alice])
      // A user who is no member of the organization cannot join one of its teams.
      expectScimError(await scim(acme.token, 'PATCH', `/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: acme.ownerId.replace(/.$/, 'x') }] }] }), 400, 'invalidValue')
      // Deprovisioning takes the user out of the organization's teams too.
      await scim(acme.token, 'PATCH', `/Users/${alice}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] })
      expect((await scim(acme.token, 'GET', `/Groups/${group}`)).body.members).toEqual([])
      expect((await scim(acme.token, 'DELETE', `/Groups/${group}`)).status).toBe(204)
      expectScimError(await scim(acme.token, 'GET', `/Groups/${group}`), 404)

      const off = mount(db.knex, { organizations: true })
      const other = await organization(off.adapter, 'other.example', 'Other')
      expectScimError(await scim(other.token, 'GET', '/Groups'), 501)
      expect((await scim(other.token, 'GET', '/ServiceProviderConfig')).body['urn:portcullis:params:scim:ServiceProviderConfig'].groups).toBe(false)
      expect((await scim(other.token, 'GET', '/ResourceTypes')).body.Resources.map((type: any) => type.id)).toEqual(['User'])
    })

    it('ends the JWT sessions of a deprovisioned user (a session store), and reads a body sent as application/json', async () => {
      const { adapter } = mount(db.knex, { session: { strategy: 'jwt', store: 'memory' } })
      const acme = await organization(adapter)
      const created = await scim(acme.token, 'POST', '/Users', entraUser('dana@acme.example'), { 'content-type': 'application/json' })
      expect(created.status).toBe(201)
      const dana = await signIn('dana@acme.example')
      const disabled = await scim(acme.token, 'PATCH', `/Users/${created.body.id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] })
      expect(disabled.body.active).toBe(false)
      expect(await sessionOf(dana, app.url)).toBeNull()
      expect(await sessionOf(acme.browser, app.url)).not.toBeNull()
    })

    it('provisions one user and one membership when the identity provider sends the same user twice at once', async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      const answers = await Promise.all([1, 2, 3].map(() => scim(acme.token, 'POST', '/Users', oktaUser('erin@acme.example'))))
      expect(answers.map((answer) => answer.status)).toContain(201)
      expect(answers.every((answer) => answer.status === 201 || answer.body.scimType === 'uniqueness')).toBe(true)
      const erin = (await adapter.getUserByEmail('erin@acme.example'))!
      expect(Number((await db.knex('Member').where({ userId: erin.id }).count({ n: '*' }))[0]!.n)).toBe(1)
      expect((await scim(acme.token, 'GET', `/Users${q('externalId eq "00ujl29u0le5T6Aj10h7"')}`)).body.Resources.map((user: any) => user.id)).toEqual([erin.id])
    })

    it('does not make a user the IdP deactivated over SCIM a member again when they sign in through the connection', async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      await post(acme.browser, '/sso/connections/update', { connectionId: acme.connectionId, enabled: false })
      const oidc = await post(acme.browser, '/sso/connections', { organizationId: acme.organizationId, name: 'Acme OIDC', type: 'oidc', issuer: idp.issuer, clientId: 'acme', clientSecret: 'acme-secret' })
      expect(oidc.status).toBe(201)
      const token = (await post(acme.browser, '/sso/connections/scim-token', { connectionId: oidc.body.connection.id })).body.token as string
      const id = (await scim(token, 'POST', '/Users', entraUser('frank@acme.example'))).body.id as string
      await scim(token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] })

      const frank = new Browser()
      const started = await frank.request(`${app.url}/api/auth/signin/sso`, { body: new URLSearchParams({ csrfToken: await csrf(frank), email: 'frank@acme.example', callbackUrl: '/after' }) })
      expect(new URL(started.headers.get('location')!).origin).toBe(new URL(idp.issuer).origin)
      expect((await frank.navigate(await frank.authorize(started.headers.get('location')!, 'frank@acme.example'))).status).toBe(302)
      expect((await sessionOf(frank, app.url))?.user?.email).toBe('frank@acme.example')
      expect(await adapter.getMember!(acme.organizationId, id)).toBeNull()
      // Nor can they remove the connection's mark of them to be made a member again.
      const mark = (await adapter.getAccountsByUserId!(id)).find((account) => account.providerAccountId.includes(':scim:'))!
      expect(mark.provider).toBe('sso:scim')
      const unlinked = await frank.request(`${app.url}/unlink`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ provider: mark.provider, providerAccountId: mark.providerAccountId }) })
      expect({ status: unlinked.status, body: await unlinked.json() }).toEqual({ status: 409, body: { code: 'not_linked' } })
      expect((await adapter.getAccountsByUserId!(id)).map((account) => account.provider).sort()).toEqual(['sso', 'sso:scim'])
      // Made active again over SCIM, they are a member.
      await scim(token, 'PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] })
      expect(await adapter.getMember!(acme.organizationId, id)).not.toBeNull()
    })

    it('refuses a request without a token, with a wrong one, or with a token in the URL', async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      const none = await scim(undefined, 'GET', '/Users')
      expectScimError(none, 401)
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/)
      expectScimError(await scim(undefined, 'GET', '/Users', undefined, { authorization: `Basic ${Buffer.from(`x:${acme.token}`).toString('base64')}` }), 401)
      // The right connection id with another secret, well-formed: only the stored hash tells.
      expectScimError(await scim(forgedToken(acme.connectionId), 'GET', '/Users'), 401)
      // A mangled one is refused by its checksum before any lookup.
      const secret = acme.token.slice(-38)
      expectScimError(await scim(`pcscim_${acme.connectionId}_${secret.slice(1)}${secret[0]}`, 'GET', '/Users'), 401)
      expectScimError(await scim(`${acme.token}x`, 'GET', '/Users'), 401)
      // A token in the URL is refused, even beside a valid header: it has leaked into logs.
      expectScimError(await scim(acme.token, 'GET', `/Users?access_token=${acme.token}`), 401)
      expect((await scim(acme.token, 'GET', '/Users')).status).toBe(200)
    })

    it('refuses a revoked, a replaced and a disabled connection\'s token', async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      const replaced = await post(acme.browser, '/sso/connections/scim-token', { connectionId: acme.connectionId })
      expectScimError(await scim(acme.token, 'GET', '/Users'), 401)
      expect((await scim(replaced.body.token, 'GET', '/Users')).status).toBe(200)
      await adapter.updateSsoConnection(acme.connectionId, { enabled: false })
      expectScimError(await scim(replaced.body.token, 'GET', '/Users'), 401)
      await adapter.updateSsoConnection(acme.connectionId, { enabled: true })
      const revoked = await post(acme.browser, '/sso/connections/scim-token/delete', { connectionId: acme.connectionId })
      expect(revoked.body.connection.scim).toMatchObject({ enabled: false, createdAt: null })
      expectScimError(await scim(replaced.body.token, 'GET', '/Users'), 401)
    })

    it("keeps each connection to its organization: another's token, users and domains", async () => {
      const { adapter } = mount(db.knex)
      const acme = await organization(adapter)
      const evil = await organization(adapter, 'evil.example', 'Evil')
      const alice = (await scim(acme.token, 'POST', '/Users', oktaUser('alice@acme.example'))).body.id as string
      const aliceSession = await signIn('alice@acme.example')

      // Evil's token does not reach Acme's user, by id, filter or list, nor change or delete them.
      expectScimError(await scim(evil.token, 'GET', `/Users/${alice}`), 404)
      expect((await scim(evil.token, 'GET', `/Users${q('userName eq "alice@acme.example"')}`)).body.totalResults).toBe(0)
      expect((await scim(evil.token, 'GET', `/Users${q('externalId eq "00ujl29u0le5T6Aj10h7"')}`)).body.totalResults).toBe(0)
      expect((await scim(evil.token, 'GET', '/Users')).body.Resources.map((user: any) => user.id)).not.toContain(alice)
      expectScimError(await scim(evil.token, 'PATCH', `/Users/${alice}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }), 404)
      expectScimError(await scim(evil.token, 'DELETE', `/Users/${alice}`), 404)
      expect(await adapter.getMember!(acme.organizationId, alice)).not.toBeNull()
      expect(await sessionOf(aliceSession, app.url)).not.toBeNull()

      // Nor can Evil's IdP provision an address of Acme's domain into Evil.
      const outside = await scim(evil.token, 'POST', '/Users', oktaUser('alice@acme.example', 'evil-1'))
      expectScimError(outside, 400, 'invalidValue')
      expect(await adapter.getMember!(evil.organizationId, alice)).toBeNull()
      expectScimError(await scim(evil.token, 'POST', '/Users', entraUser('carol@unclaimed.example')), 400, 'invalidValue')
      expect(await adapter.getUserByEmail('carol@unclaimed.example')).toBeNull()

      // Acme's own owner, the last one, is not deprovisioned.
      expectScimError(await scim(acme.token, 'PATCH', `/Users/${acme.ownerId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }), 409)
      expectScimError(await scim(acme.token, 'DELETE', `/Users/${acme.ownerId}`), 409)
      expect(await adapter.getMember!(acme.organizationId, acme.ownerId)).toMatchObject({ roles: ['owner'] })
      expect(await sessionOf(acme.browser, app.url)).not.toBeNull()
    })
  })
}
