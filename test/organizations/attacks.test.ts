/**
 * The organizations' routes as an attacker reaches them, on SQLite, PostgreSQL and MariaDB: a member
 * raising their own role, an admin making an owner, the last owner removed or demoted (two owners
 * demoting each other at once included), a member of one organization reaching another's members,
 * settings and session switch through every route (404 `not_found`, the same answer as a made-up
 * id), and, on SQLite, every POST without the CSRF token or from another site, raw paths over
 * node:http, HEAD on the POST routes and a forged Host header. Each case checks the database after
 * the attempt: nothing changed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { closeAll, listenApp } from '../support/app-rig.js'
import { describeWithDatabase, findDatabaseServer, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { rawRequest } from '../support/raw-http.js'
import { emptyOrganizationsAfterEach, signIn, startOrganizationsApp, type Member, type OrganizationsApp } from './organizations-app.js'

afterAll(closeAll)

/** Two organizations, A (Ada owner, Amy admin, Abe member) and B (Bea owner, Bo member). */
async function twoOrganizations(app: OrganizationsApp) {
  const [ada, amy, abe, bea, bo] = await Promise.all(['ada', 'amy', 'abe', 'bea', 'bo'].map((name) => signIn(app, `${name}@example.com`, name)))
  const a = await ada!.create('Org A', 'org-a')
  const b = await bea!.create('Org B', 'org-b')
  await app.addMember(a, amy!.userId, ['admin'])
  await app.addMember(a, abe!.userId, ['member'])
  await app.addMember(b, bo!.userId, ['member'])
  return { ada: ada!, amy: amy!, abe: abe!, bea: bea!, bo: bo!, a, b }
}

const rolesOf = async (app: OrganizationsApp, organizationId: string, user: Member) => (await app.adapter.getMember(organizationId, user.userId))?.roles

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `organization routes under attack on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    emptyOrganizationsAfterEach(db)
    let app: OrganizationsApp
    beforeAll(async () => {
      app = await startOrganizationsApp(db.knex)
    })

    it('refuses a member or an admin raising their own role to owner (403), their roles unchanged', async () => {
      const { amy, abe, a } = await twoOrganizations(app)
      for (const [user, held] of [
        [abe, ['member']],
        [amy, ['admin']],
      ] as const) {
        const raised = await user.post('/organizations/members/role', { organizationId: a, userId: user.userId, roles: ['owner'] })
        expect(raised.status).toBe(403)
        expect(raised.body.code).toBe('forbidden')
        // A form's single role, and the roles as a string, are no way around it.
        expect((await user.form('/organizations/members/role', { organizationId: a, userId: user.userId, roles: 'owner' })).status).toBe(403)
        expect(await rolesOf(app, a, user)).toEqual(held)
      }
      // Nor does a member raise themselves to admin.
      expect((await abe.post('/organizations/members/role', { organizationId: a, userId: abe.userId, roles: ['admin'] })).status).toBe(403)
      expect(await rolesOf(app, a, abe)).toEqual(['member'])
    })

    it('refuses an admin giving the owner role, changing an owner\'s roles or removing an owner (403)', async () => {
      const { ada, amy, abe, a } = await twoOrganizations(app)
      expect((await amy.post('/organizations/members/role', { organizationId: a, userId: abe.userId, roles: ['owner'] })).status).toBe(403)
      expect((await amy.post('/organizations/members/role', { organizationId: a, userId: abe.userId, roles: ['member', 'owner'] })).status).toBe(403)
      expect((await amy.post('/organizations/members/role', { organizationId: a, userId: ada.userId, roles: ['member'] })).status).toBe(403)
      expect((await amy.post('/organizations/members/remove', { organizationId: a, userId: ada.userId })).status).toBe(403)
      expect(await rolesOf(app, a, abe)).toEqual(['member'])
      expect(await rolesOf(app, a, ada)).toEqual(['owner'])
      // A member may do none of it, nor remove anyone.
      expect((await abe.post('/organizations/members/remove', { organizationId: a, userId: amy.userId })).status).toBe(403)
      expect(await rolesOf(app, a, amy)).toEqual(['admin'])
    })

    it('refuses removing or demoting the last owner (409 last_owner) by every route', async () => {
      const { ada, a } = await twoOrganizations(app)
      const attempts = [
        () => ada.post('/organizations/members/role', { organizationId: a, userId: ada.userId, roles: ['admin'] }),
        () => ada.post('/organizations/members/remove', { organizationId: a, userId: ada.userId }),
        () => ada.post('/organizations/leave', { organizationId: a }),
      ]
      for (const attempt of attempts) {
        const refused = await attempt()
        expect(refused.status).toBe(409)
        expect(refused.body).toEqual({ error: 'Organization', code: 'last_owner', message: expect.any(String) })
      }
      expect(await rolesOf(app, a, ada)).toEqual(['owner'])
    })

    it('two owners demoting each other at the same time: exactly one succeeds, one owner remains', async () => {
      const { ada, amy, a } = await twoOrganizations(app)
      for (let round = 0; round < 3; round++) {
        await db.knex('Member').update({ role: 'owner' }).where({ organizationId: a, userId: amy.userId })
        await db.knex('Member').update({ role: 'owner' }).where({ organizationId: a, userId: ada.userId })
        // Both tokens first, so the two POSTs leave together.
        const [adaToken, amyToken] = await Promise.all([ada.csrf(), amy.csrf()])
        const results = await Promise.all([
          ada.post('/organizations/members/role', { organizationId: a, userId: amy.userId, roles: ['member'], csrfToken: adaToken }),
          amy.post('/organizations/members/role', { organizationId: a, userId: ada.userId, roles: ['member'], csrfToken: amyToken }),
        ])
        // The one that lost is refused: 409 last_owner when both passed the check of the caller's
        // roles before either wrote, 403 when the winner's write came first (the loser is no owner then).
        const [won, lost] = results[0]!.status === 200 ? results : [results[1]!, results[0]!]
        expect(won!.status).toBe(200)
        expect(['409 last_owner', '403 forbidden']).toContain(`${lost!.status} ${String(lost!.body.code)}`)
        const owners = (await app.adapter.listMembers(a)).filter((member) => member.roles.includes('owner'))
        expect(owners).toHaveLength(1)
      }
      // The adapter's own check, both changes surely inside their transactions at once (no route's
      // check of the caller before them): one is done, the other answered last_owner, no deadlock.
      for (const change of ['role', 'remove'] as const) {
        await db.knex('Member').update({ role: 'owner' }).whereIn('userId', [ada.userId, amy.userId]).andWhere({ organizationId: a })
        const demote = (user: Member) => (change === 'role' ? app.adapter.updateMemberRoles(a, user.userId, ['member'], 'owner') : app.adapter.removeMember(a, user.userId, 'owner'))
        expect((await Promise.all([demote(ada), demote(amy)])).sort()).toEqual(['done', 'last_owner'])
        expect((await app.adapter.listMembers(a)).filter((member) => member.roles.includes('owner'))).toHaveLength(1)
        if (change === 'remove') await app.addMember(a, (await app.adapter.getMember(a, ada.userId)) ? amy.userId : ada.userId, ['owner'])
      }
    })

    it('answers 404 not_found for another organization\'s ids on every route, the same answer as a made-up id, and changes nothing', async () => {
      const { ada, abe, bea, bo, a, b } = await twoOrganizations(app)
      const made = 'no-such-organization'
      const madeUser = 'no-such-user'
      // Ada (owner of A) tries B's organization, B's members in A, and A's members in B.
      const attempts: [string, (organizationId: string, userId: string) => Promise<{ status: number; body: Record<string, unknown> }>, string, string, string, string][] = [
        ['members', (organizationId) => ada.get(`/organizations/members?organizationId=${organizationId}`), b, made, bo.userId, madeUser],
        ['update', (organizationId) => ada.post('/organizations/update', { organizationId, name: 'Pwned' }), b, made, bo.userId, madeUser],
        ['delete', (organizationId) => ada.post('/organizations/delete', { organizationId }), b, made, bo.userId, madeUser],
        ['active', (organizationId) => ada.post('/organizations/active', { organizationId }), b, made, bo.userId, madeUser],
        ['leave', (organizationId) => ada.post('/organizations/leave', { organizationId }), b, made, bo.userId, madeUser],
        ['role in B', (organizationId, userId) => ada.post('/organizations/members/role', { organizationId, userId, roles: ['member'] }), b, made, bo.userId, madeUser],
        ['remove in B', (organizationId, userId) => ada.post('/organizations/members/remove', { organizationId, userId }), b, made, bo.userId, madeUser],
        // A's organization id with B's member ids: as unknown as a made-up member.
        ['role of B\'s member in A', (organizationId, userId) => ada.post('/organizations/members/role', { organizationId, userId, roles: ['admin'] }), a, a, bo.userId, madeUser],
        ['remove B\'s member from A', (organizationId, userId) => ada.post('/organizations/members/remove', { organizationId, userId }), a, a, bea.userId, madeUser],
        // B's organization id with A's member ids.
        ['role of A\'s member in B', (organizationId, userId) => ada.post('/organizations/members/role', { organizationId, userId, roles: ['owner'] }), b, made, abe.userId, madeUser],
        ['remove A\'s member from B', (organizationId, userId) => ada.post('/organizations/members/remove', { organizationId, userId }), b, made, abe.userId, madeUser],
      ]
      for (const [what, attempt, theirs, madeOrganization, theirUser, madeUserId] of attempts) {
        const real = await attempt(theirs, theirUser)
        const fake = await attempt(madeOrganization, madeUserId)
        expect([what, real.status, real.body.code]).toEqual([what, 404, 'not_found'])
        expect([what, real.body]).toEqual([what, fake.body])
      }
      // A browser gets the organizations page, 404, with the same words.
      const page = await ada.page(`/organizations/members?organizationId=${b}`)
      expect(page.status).toBe(404)
      expect(page.html).toContain('No such organization among yours.')
      expect(page.html).not.toContain('Org B')

      expect(await app.adapter.getOrganization({ id: b })).toMatchObject({ name: 'Org B' })
      expect(await rolesOf(app, b, bea)).toEqual(['owner'])
      expect(await rolesOf(app, b, bo)).toEqual(['member'])
      expect(await app.adapter.getMember(a, bo.userId)).toBeNull()
      expect(await app.adapter.getMember(b, abe.userId)).toBeNull()
      expect(await app.adapter.getMember(b, ada.userId)).toBeNull()
    })

    it('refuses switching to an organization one is not a member of, the session\'s active organization unchanged', async () => {
      const { ada, a, b } = await twoOrganizations(app)
      expect((await ada.post('/organizations/active', { organizationId: a })).status).toBe(200)
      const before = (await ada.session())?.user.activeOrganization
      expect(before).toEqual({ id: a, roles: ['owner'] })
      for (const organizationId of [b, 'made-up', ['x'], { id: b }]) {
        const refused = await ada.post('/organizations/active', { organizationId })
        expect([404, 400]).toContain(refused.status)
        expect((await ada.session())?.user.activeOrganization).toEqual(before)
      }
      expect((await ada.form('/organizations/active', { organizationId: b })).status).toBe(404)
      expect((await ada.session())?.user.activeOrganization).toEqual(before)
    })
  })
}

/** Every POST route, with the fields that would change something for the owner. */
const postRoutes = (a: string, victim: string): [string, Record<string, string>][] => [
  ['/organizations', { name: 'Forged', slug: 'forged' }],
  ['/organizations/update', { organizationId: a, name: 'Forged' }],
  ['/organizations/delete', { organizationId: a }],
  ['/organizations/active', { organizationId: '' }],
  ['/organizations/leave', { organizationId: a }],
  ['/organizations/members/role', { organizationId: a, userId: victim, roles: 'owner' }],
  ['/organizations/members/remove', { organizationId: a, userId: victim }],
]

const server = await findDatabaseServer('sqlite')

describe('organization POSTs without the CSRF token, from another site, on raw paths and as HEAD', () => {
  const db = migratedDatabase(server)
  emptyOrganizationsAfterEach(db)
  let app: OrganizationsApp
  let ada: Member
  let abe: Member
  let a: string
  beforeAll(async () => {
    app = await startOrganizationsApp(db.knex)
  })
  beforeEach(async () => {
    ada = await signIn(app, 'ada@example.com')
    abe = await signIn(app, 'abe@example.com')
    a = await ada.create('Org A', 'org-a')
    await app.addMember(a, abe.userId, ['member'])
    await ada.post('/organizations/active', { organizationId: a })
  })

  /** Nothing the POSTs would change has changed. */
  async function unchanged() {
    expect(await app.adapter.getOrganization({ id: a })).toMatchObject({ name: 'Org A' })
    expect(await app.adapter.getOrganization({ slug: 'forged' })).toBeNull()
    expect(await rolesOf(app, a, abe)).toEqual(['member'])
    expect(await rolesOf(app, a, ada)).toEqual(['owner'])
    expect((await ada.session())?.user.activeOrganization?.id).toBe(a)
  }

  it('refuses every POST without the CSRF token: 403 for JSON clients, the sign-in page with MissingCSRF for forms', async () => {
    for (const [path, fields] of postRoutes(a, abe.userId)) {
      const json = await ada.browser.request(`${app.url}/api/auth${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', origin: app.url }, body: JSON.stringify(fields) })
      expect([path, json.status]).toEqual([path, 403])
      expect(await json.json()).toMatchObject({ error: 'MissingCSRF' })
      const form = await ada.browser.request(`${app.url}/api/auth${path}`, { method: 'POST', headers: { origin: app.url }, body: new URLSearchParams(fields) })
      expect([path, form.status]).toEqual([path, 302])
      expect(new URL(form.headers.get('location')!).searchParams.get('error')).toBe('MissingCSRF')
      // A token of another browser (the attacker's own, with their cookie) does not match this one's cookie.
      const forged = await ada.browser.request(`${app.url}/api/auth${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', origin: app.url }, body: JSON.stringify({ ...fields, csrfToken: await abe.csrf() }) })
      expect([path, forged.status]).toEqual([path, 403])
    }
    await unchanged()
  })

  it('refuses every POST from another site, even with the victim\'s valid token (Origin and Sec-Fetch-Site)', async () => {
    for (const [path, fields] of postRoutes(a, abe.userId)) {
      for (const headers of [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }] as Record<string, string>[]) {
        const response = await ada.post(path, fields, headers)
        expect([path, headers, response.status]).toEqual([path, headers, 403])
      }
    }
    await unchanged()
  })

  it('changes nothing through raw paths over node:http: dot segments, doubled slashes, encoded letters, other cases', async () => {
    const spellings = (path: string) => [`/api/auth/organizations/..${path}`, `/api/auth/x/..${path}`, `/api/auth/x/%2e%2e${path}`, `/api/auth/${path}`, `/api/auth${path}/.`, `/api/auth${path.replace('o', '%6f')}`, `/api/auth${path.toUpperCase()}`]
    const json = { origin: app.url, accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' }
    for (const [path, fields] of postRoutes(a, abe.userId)) {
      for (const spelled of spellings(path)) {
        // The owner's cookies and no token, as a cross-site form would send them: refused, or no route.
        const response = await rawRequest(app.server, spelled, { method: 'POST', headers: { ...json, cookie: ada.cookieHeader() }, body: new URLSearchParams(fields).toString() })
        expect([400, 403, 404].map((status) => `${spelled} ${status}`)).toContain(`${spelled} ${response.status}`)
      }
    }
    // A spelling that reaches a route is that route, with all its checks: a member with his own
    // valid token deletes nothing, nor makes himself owner, whatever the path says.
    for (const spelled of [...spellings('/organizations/delete'), '/api/auth/organizations/../organizations/delete']) {
      const body = new URLSearchParams({ csrfToken: await abe.csrf(), organizationId: a }).toString()
      const response = await rawRequest(app.server, spelled, { method: 'POST', headers: { ...json, cookie: abe.cookieHeader() }, body })
      expect([400, 403, 404].map((status) => `${spelled} ${status}`)).toContain(`${spelled} ${response.status}`)
    }
    const raised = await rawRequest(app.server, '/api/auth/organizations/../organizations/members/role', { method: 'POST', headers: { ...json, cookie: abe.cookieHeader() }, body: new URLSearchParams({ csrfToken: await abe.csrf(), organizationId: a, userId: abe.userId, roles: 'owner' }).toString() })
    expect(raised.status).toBe(403)
    await unchanged()
  })

  it('HEAD on the POST routes runs none of them', async () => {
    const cookie = ada.cookieHeader()
    for (const [path, fields] of postRoutes(a, abe.userId)) {
      const response = await rawRequest(app.server, `/api/auth${path}?${new URLSearchParams(fields)}`, { method: 'HEAD', headers: { cookie } })
      expect(response.body).toBe('')
    }
    await unchanged()
  })
})

describe('organization routes behind a forged Host', () => {
  const db = migratedDatabase(server)
  let app: OrganizationsApp
  const previous = process.env.AUTH_URL
  beforeAll(async () => {
    // The deployment's own address: with it set, no Host header decides where a redirect goes.
    process.env.AUTH_URL = 'http://app.example'
    app = await startOrganizationsApp(db.knex, 'database', { trustHost: false })
  })
  afterAll(() => {
    if (previous === undefined) delete process.env.AUTH_URL
    else process.env.AUTH_URL = previous
  })

  it('sends a signed-out visitor to the sign-in page of the configured site, never of the Host sent', async () => {
    const raw = (await listenApp(app.app)).server
    for (const path of ['/api/auth/organizations', '/api/auth/organizations/members?organizationId=x']) {
      for (const host of ['evil.example', 'app.example.evil.example', 'evil.example:80']) {
        const response = await rawRequest(raw, path, { headers: { host, 'x-forwarded-host': 'evil.example', accept: 'text/html' } })
        expect(response.status).toBe(302)
        expect(response.headers.location).not.toContain('evil.example')
        expect(response.headers.location).toMatch(/^http:\/\/app\.example\/api\/auth\/signin\?callbackUrl=http%3A%2F%2Fapp\.example%2Fapi%2Fauth%2Forganizations/)
      }
    }
    // A POST from the forged host is refused as cross-site: its Origin is not the configured one.
    const post = await rawRequest(raw, '/api/auth/organizations', { method: 'POST', headers: { host: 'evil.example', origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Forged' })
    expect(post.headers.location ?? '').not.toContain('evil.example')
    expect(await app.adapter.getOrganization({ slug: 'forged' })).toBeNull()
  })
})

describe('a JWT session\'s active organization under a forged session update', () => {
  const db = migratedDatabase(server)
  emptyOrganizationsAfterEach(db)
  let app: OrganizationsApp
  beforeAll(async () => {
    // A careless app merging whatever the client's update sends into the token.
    app = await startOrganizationsApp(db.knex, 'jwt', { callbacks: { jwt: ({ token, trigger, session }) => (trigger === 'update' && session && typeof session === 'object' ? { ...token, ...session } : token) } })
  })

  it('keeps the active organization and its roles whatever POST /session sends', async () => {
    const { ada, a, b } = await twoOrganizations(app)
    await ada.post('/organizations/active', { organizationId: a })
    const before = (await ada.session())?.user.activeOrganization
    expect(before).toEqual({ id: a, roles: ['owner'] })
    for (const data of [{ activeOrganization: { id: b, roles: ['owner'] } }, { user: { activeOrganization: { id: b, roles: ['owner'] } } }]) {
      const response = await ada.post('/session', { data })
      expect(response.status).toBe(200)
      expect((await ada.session())?.user.activeOrganization).toEqual(before)
    }
    // B's members stay out of her reach however the session reads.
    expect((await ada.get(`/organizations/members?organizationId=${b}`)).status).toBe(404)
  })
})
