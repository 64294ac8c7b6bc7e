/**
 * The organizations' routes on SQLite, as a JSON client and as a browser's forms use them: listing,
 * creating, changing, deleting and leaving organizations, switching the session's active one (its
 * cookie sent with JWT sessions), the members' list, roles and removal; the answers for visitors who
 * are not signed in; the pages' escaping, caching and the forms they show for the viewer's roles.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { emptyOrganizationsAfterEach, signIn, startOrganizationsApp, type OrganizationsApp, type Strategy } from './organizations-app.js'

const server = await findDatabaseServer('sqlite')

afterAll(closeAll)

for (const strategy of ['database', 'jwt'] as Strategy[]) {
  describe(`organization routes, ${strategy} sessions`, () => {
    const db = migratedDatabase(server)
    emptyOrganizationsAfterEach(db)
    let app: OrganizationsApp
    beforeAll(async () => {
      app = await startOrganizationsApp(db.knex, strategy)
    })

    it('creates an organization (201, the creator its owner), lists it with roles, and switches the session to it and back to none', async () => {
      const ada = await signIn(app, 'ada@example.com')
      const created = await ada.post('/organizations', { name: 'Acme Inc.' })
      expect(created.status).toBe(201)
      expect(created.body.organization).toMatchObject({ name: 'Acme Inc.', slug: 'acme-inc', logo: null, roles: ['owner'] })
      expect(created.response.headers.get('cache-control')).toBe('no-store')
      const id = (created.body.organization as { id: string }).id

      const listed = await ada.get('/organizations')
      expect(listed.status).toBe(200)
      expect(listed.body).toEqual({ organizations: [expect.objectContaining({ id, name: 'Acme Inc.', roles: ['owner'] })], activeOrganizationId: null })

      const switched = await ada.post('/organizations/active', { organizationId: id })
      expect(switched.status).toBe(200)
      expect(switched.body.activeOrganization).toMatchObject({ id, roles: ['owner'] })
      // A JWT session's claim travels in its cookie: the answer carries the re-sealed one.
      if (strategy === 'jwt') expect(switched.response.headers.getSetCookie().some((cookie) => cookie.startsWith('authjs.session-token='))).toBe(true)
      expect((await ada.session())?.user.activeOrganization).toEqual({ id, roles: ['owner'] })
      expect((await ada.get('/organizations')).body.activeOrganizationId).toBe(id)

      const none = await ada.post('/organizations/active', { organizationId: null })
      expect(none.status).toBe(200)
      expect(none.body).toEqual({ activeOrganization: null })
      expect((await ada.session())?.user.activeOrganization ?? null).toBeNull()
    })

    it('changes the name, slug and logo; refuses a taken slug (409) and a bad one (400) with the code', async () => {
      const ada = await signIn(app, 'ada@example.com')
      const id = await ada.create('Acme')
      await ada.create('Other', 'other')
      const updated = await ada.post('/organizations/update', { organizationId: id, name: 'Acme Corp', slug: 'acme-corp', logo: 'https://cdn.example/logo.png' })
      expect(updated.status).toBe(200)
      expect(updated.body.organization).toMatchObject({ id, name: 'Acme Corp', slug: 'acme-corp', logo: 'https://cdn.example/logo.png' })
      const taken = await ada.post('/organizations/update', { organizationId: id, slug: 'other' })
      expect(taken.status).toBe(409)
      expect(taken.body).toEqual({ error: 'Organization', code: 'slug_taken', message: expect.stringContaining('other') })
      const bad = await ada.post('/organizations/update', { organizationId: id, logo: 'javascript:alert(1)' })
      expect(bad.status).toBe(400)
      expect(bad.body.code).toBe('invalid_input')
    })

    it('lists the members, changes a role, removes a member, and a member leaves; the last owner cannot leave (409)', async () => {
      const ada = await signIn(app, 'ada@example.com', 'Ada')
      const bob = await signIn(app, 'bob@example.com', 'Bob')
      const cat = await signIn(app, 'cat@example.com', 'Cat')
      const id = await ada.create('Acme')
      await app.addMember(id, bob.userId, ['member'])
      await app.addMember(id, cat.userId, ['member'])

      const listed = await ada.get(`/organizations/members?organizationId=${id}`)
      expect(listed.status).toBe(200)
      expect((listed.body.members as { userId: string; roles: string[]; user: { name: string } }[]).map((member) => [member.user.name, member.roles])).toEqual([
        ['Ada', ['owner']],
        ['Bob', ['member']],
        ['Cat', ['member']],
      ])

      const promoted = await ada.post('/organizations/members/role', { organizationId: id, userId: bob.userId, roles: ['admin'] })
      expect(promoted.status).toBe(200)
      expect(promoted.body.member).toMatchObject({ userId: bob.userId, roles: ['admin'] })
      expect(app.events).toContainEqual({ name: 'memberRoleChanged', message: expect.objectContaining({ organizationId: id, userId: bob.userId, roles: ['admin'], previous: ['member'], by: ada.userId }) })

      // An admin removes a member.
      const removed = await bob.post('/organizations/members/remove', { organizationId: id, userId: cat.userId })
      expect(removed.status).toBe(200)
      expect(removed.body).toEqual({ removed: cat.userId })
      expect(await app.adapter.getMember(id, cat.userId)).toBeNull()

      const left = await bob.post('/organizations/leave', { organizationId: id })
      expect(left.status).toBe(200)
      expect(left.body).toEqual({ left: id })
      expect((await bob.get('/organizations')).body.organizations).toEqual([])

      const lastOwner = await ada.post('/organizations/leave', { organizationId: id })
      expect(lastOwner.status).toBe(409)
      expect(lastOwner.body.code).toBe('last_owner')
      expect(await app.adapter.getMember(id, ada.userId)).not.toBeNull()
    })

    it('deletes an organization (owners only): it leaves the lists and the session that had it active', async () => {
      const ada = await signIn(app, 'ada@example.com')
      const bob = await signIn(app, 'bob@example.com')
      const id = await ada.create('Acme')
      await app.addMember(id, bob.userId, ['admin'])
      await ada.post('/organizations/active', { organizationId: id })

      const byAdmin = await bob.post('/organizations/delete', { organizationId: id })
      expect(byAdmin.status).toBe(403)
      expect(byAdmin.body.code).toBe('forbidden')

      const deleted = await ada.post('/organizations/delete', { organizationId: id })
      expect(deleted.status).toBe(200)
      expect(deleted.body).toEqual({ deleted: id })
      expect(await app.adapter.getOrganization({ id })).toBeNull()
      expect((await ada.get('/organizations')).body).toEqual({ organizations: [], activeOrganizationId: null })
      expect((await ada.session())?.user.activeOrganization ?? null).toBeNull()
    })

    it('leaving the active organization clears it from the session', async () => {
      const ada = await signIn(app, 'ada@example.com')
      const bob = await signIn(app, 'bob@example.com')
      const id = await ada.create('Acme')
      await app.addMember(id, bob.userId, ['member'])
      await bob.post('/organizations/active', { organizationId: id })
      expect((await bob.session())?.user.activeOrganization).toEqual({ id, roles: ['member'] })
      expect((await bob.post('/organizations/leave', { organizationId: id })).status).toBe(200)
      expect((await bob.session())?.user.activeOrganization ?? null).toBeNull()
    })
  })
}

describe('organization routes, JWT sessions with a session store', () => {
  const db = migratedDatabase(server)
  emptyOrganizationsAfterEach(db)
  let app: OrganizationsApp
  beforeAll(async () => {
    app = await startOrganizationsApp(db.knex, 'jwt+store')
  })

  it('a member whose role changed or who was removed is signed out (their token carried the old roles); signed in again, the new role shows', async () => {
    const ada = await signIn(app, 'ada@example.com')
    const bob = await signIn(app, 'bob@example.com')
    const id = await ada.create('Acme')
    await app.addMember(id, bob.userId, ['member'])
    expect((await bob.post('/organizations/active', { organizationId: id })).body.activeOrganization).toMatchObject({ roles: ['member'] })

    expect((await ada.post('/organizations/members/role', { organizationId: id, userId: bob.userId, roles: ['admin'] })).status).toBe(200)
    expect(await bob.session()).toBeNull()
    expect((await bob.get('/organizations')).status).toBe(401)
    const again = await signIn(app, 'bob@example.com')
    expect((await again.session())?.user.activeOrganization).toEqual({ id, roles: ['admin'] })
    // The owner's own session stands: only the changed member's end.
    expect((await ada.get('/organizations')).status).toBe(200)

    expect((await ada.post('/organizations/members/remove', { organizationId: id, userId: bob.userId })).status).toBe(200)
    expect(await again.session()).toBeNull()
  })
})

describe('organization routes for visitors and browsers', () => {
  const db = migratedDatabase(server)
  emptyOrganizationsAfterEach(db)
  let app: OrganizationsApp
  beforeAll(async () => {
    app = await startOrganizationsApp(db.knex)
  })

  it('answers a visitor who is not signed in with 401 JSON, and sends a browser to the sign-in page coming back', async () => {
    for (const path of ['/organizations', '/organizations/members?organizationId=x']) {
      const json = await fetch(`${app.url}/api/auth${path}`, { headers: { accept: 'application/json' } })
      expect(json.status).toBe(401)
      expect(await json.json()).toMatchObject({ error: 'Organization', code: 'not_signed_in' })
      const browser = await fetch(`${app.url}/api/auth${path}`, { headers: { accept: 'text/html' }, redirect: 'manual' })
      expect(browser.status).toBe(302)
      const location = new URL(browser.headers.get('location')!)
      expect(location.pathname).toBe('/api/auth/signin')
      expect(location.searchParams.get('callbackUrl')).toBe(`${app.url}/api/auth${path}`)
    }
  })

  it('answers a POST of a visitor who is not signed in, with a valid CSRF token, with 401 JSON or the sign-in page', async () => {
    const visitor = await signIn(app, 'ada@example.com')
    await visitor.browser.request(`${app.url}/api/auth/signout`, { body: new URLSearchParams({ csrfToken: await visitor.csrf() }) })
    expect(await visitor.session()).toBeNull()
    for (const path of ['/organizations', '/organizations/update', '/organizations/delete', '/organizations/active', '/organizations/leave', '/organizations/members/role', '/organizations/members/remove']) {
      const json = await visitor.post(path, { organizationId: 'x', name: 'X' })
      expect([path, json.status, json.body.code]).toEqual([path, 401, 'not_signed_in'])
      const form = await visitor.form(path, { organizationId: 'x', name: 'X' })
      expect([path, form.status, new URL(form.headers.get('location')!).pathname]).toEqual([path, 302, '/api/auth/signin'])
    }
    expect(await db.knex('Organization').count({ n: '*' }).first()).toMatchObject({ n: 0 })
  })

  it('shows the organizations page: escaped names, the active one marked, a switch form per other one, the create form; never cached', async () => {
    const ada = await signIn(app, 'ada@example.com')
    const evil = await ada.create('<script>alert(1)</script> & "Co"', 'evil-co')
    const plain = await ada.create('Plain', 'plain')
    await ada.post('/organizations/active', { organizationId: plain })
    const { status, html, response } = await ada.page('/organizations')
    expect(status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/html/)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(html).not.toContain('<script>alert(1)</script>')
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;')
    expect(html).toMatch(new RegExp(`data-organization-id="${plain}" data-active`))
    // One switch form: to the organization that is not active (and one to none).
    expect(html.match(/action="\/api\/auth\/organizations\/active"/g)).toHaveLength(2)
    expect(html).toContain(`name="organizationId" value="${evil}"`)
    expect(html).toContain('action="/api/auth/organizations"')
    expect(html).toContain('name="csrfToken"')
  })

  it('a browser creates and switches by form: redirected back to the page; a refusal shows the page again with the message', async () => {
    const ada = await signIn(app, 'ada@example.com')
    const created = await ada.form('/organizations', { name: 'Acme', slug: '' })
    expect(created.status).toBe(302)
    expect(created.headers.get('location')).toBe(`${app.url}/api/auth/organizations`)
    const [acme] = (await ada.get('/organizations')).body.organizations as { id: string; slug: string }[]
    expect(acme!.slug).toBe('acme')

    const switched = await ada.form('/organizations/active', { organizationId: acme!.id })
    expect(switched.status).toBe(302)
    expect((await ada.session())?.user.activeOrganization?.id).toBe(acme!.id)

    const taken = await ada.form('/organizations', { name: 'Acme again', slug: 'acme' })
    expect(taken.status).toBe(409)
    expect(taken.headers.get('cache-control')).toBe('no-store')
    const html = await taken.text()
    expect(html).toContain('role="alert"')
    expect(html).toContain('Another organization has the slug &quot;acme&quot;.')
  })

  it('shows the members page with the forms the viewer\'s roles allow, and the invitations\' form', async () => {
    const ada = await signIn(app, 'ada@example.com', 'Ada')
    const bob = await signIn(app, 'bob@example.com', '<b>Bob</b>')
    const cat = await signIn(app, 'cat@example.com', 'Cat')
    const id = await ada.create('Acme')
    await app.addMember(id, bob.userId, ['admin'])
    await app.addMember(id, cat.userId, ['member'])

    const owner = await ada.page(`/organizations/members?organizationId=${id}`)
    expect(owner.status).toBe(200)
    expect(owner.response.headers.get('cache-control')).toBe('no-store')
    expect(owner.html).toContain('&lt;b&gt;Bob&lt;/b&gt;')
    expect(owner.html).not.toContain('<b>Bob</b>')
    // The owner may change Bob's and Cat's roles, remove both, change settings and delete; as the only
    // owner, not step down or leave (they are told why).
    expect(owner.html.match(/organizations\/members\/role"/g)).toHaveLength(2)
    expect(owner.html).not.toContain('action="/api/auth/organizations/leave"')
    expect(owner.html).toContain('You are its only owner')
    expect(owner.html.match(/organizations\/members\/remove"/g)).toHaveLength(2)
    expect(owner.html).toContain('<option value="owner"')
    expect(owner.html).toContain('action="/api/auth/organizations/update"')
    expect(owner.html).toContain('action="/api/auth/organizations/delete"')
    // The invitations: none yet, and the invite form, offering the owner role to the owner.
    expect(owner.html).toContain('No pending invitations.')
    expect(owner.html).toContain('action="/api/auth/organizations/invitations"')
    const inviteRoles = (html: string) => /<select id="invite-role" name="roles">(.*?)<\/select>/s.exec(html)?.[1] ?? ''
    expect(inviteRoles(owner.html)).toContain('<option value="owner"')

    // An admin: only Cat's role and removal, no owner role offered, no deletion.
    const admin = await bob.page(`/organizations/members?organizationId=${id}`)
    expect(admin.status).toBe(200)
    expect(admin.html.match(/organizations\/members\/role"/g)).toHaveLength(1)
    expect(admin.html.match(/organizations\/members\/remove"/g)).toHaveLength(1)
    expect(admin.html).not.toContain('<option value="owner"')
    expect(admin.html).toContain(`name="userId" value="${cat.userId}"`)
    expect(admin.html).not.toContain('action="/api/auth/organizations/delete"')
    expect(admin.html).toContain('action="/api/auth/organizations/leave"')
    expect(admin.html).toContain('action="/api/auth/organizations/invitations"')
    expect(inviteRoles(admin.html)).toContain('<option value="admin"')
    expect(inviteRoles(admin.html)).not.toContain('<option value="owner"')

    // A member may not list the members: the organizations page says so (403).
    const member = await cat.page(`/organizations/members?organizationId=${id}`)
    expect(member.status).toBe(403)
    expect(member.html).toContain('Your roles in this organization do not allow this.')
    expect((await cat.get(`/organizations/members?organizationId=${id}`)).body.code).toBe('forbidden')
  })

  it('a browser changes a role, removes a member and saves settings by form, back to the members page', async () => {
    const ada = await signIn(app, 'ada@example.com')
    const bob = await signIn(app, 'bob@example.com')
    const cat = await signIn(app, 'cat@example.com')
    const id = await ada.create('Acme')
    await app.addMember(id, bob.userId, ['member'])
    await app.addMember(id, cat.userId, ['member'])
    const back = `${app.url}/api/auth/organizations/members?organizationId=${id}`

    const role = await ada.form('/organizations/members/role', { organizationId: id, userId: bob.userId, roles: 'admin' })
    expect([role.status, role.headers.get('location')]).toEqual([302, back])
    expect((await app.adapter.getMember(id, bob.userId))?.roles).toEqual(['admin'])

    const removed = await ada.form('/organizations/members/remove', { organizationId: id, userId: cat.userId })
    expect([removed.status, removed.headers.get('location')]).toEqual([302, back])
    expect(await app.adapter.getMember(id, cat.userId)).toBeNull()

    const saved = await ada.form('/organizations/update', { organizationId: id, name: 'Acme Corp', slug: 'acme-corp', logo: '' })
    expect([saved.status, saved.headers.get('location')]).toEqual([302, back])
    expect(await app.adapter.getOrganization({ id })).toMatchObject({ name: 'Acme Corp', slug: 'acme-corp', logo: null })

    // Refused: the members page again, with the message.
    const lastOwner = await ada.form('/organizations/members/role', { organizationId: id, userId: ada.userId, roles: 'member' })
    expect(lastOwner.status).toBe(409)
    const html = await lastOwner.text()
    expect(html).toContain('<h1>Acme Corp</h1>')
    expect(html).toContain('The organization would have no owner')

    // An invitation by the page's form comes back to the page, which lists it with Resend and Cancel.
    const invited = await ada.form('/organizations/invitations', { organizationId: id, email: 'dan@example.com', roles: 'member', callbackUrl: back })
    expect([invited.status, invited.headers.get('location')]).toEqual([302, back])
    const listed = await ada.page(`/organizations/members?organizationId=${id}`)
    expect(listed.html).toContain('<strong>dan@example.com</strong>')
    expect(listed.html).toContain('action="/api/auth/organizations/invitations/resend"')
    const [invitation] = await app.adapter.listInvitations(id)
    const canceled = await ada.form('/organizations/invitations/cancel', { invitationId: invitation!.id, callbackUrl: back })
    expect([canceled.status, canceled.headers.get('location')]).toEqual([302, back])
    expect((await ada.page(`/organizations/members?organizationId=${id}`)).html).toContain('No pending invitations.')

    const deleted = await ada.form('/organizations/delete', { organizationId: id })
    expect([deleted.status, deleted.headers.get('location')]).toEqual([302, `${app.url}/api/auth/organizations`])
    expect(await app.adapter.getOrganization({ id })).toBeNull()
  })
})
