/**
 * Organizations end to end on SQLite, PostgreSQL and MariaDB, with database sessions and JWT
 * sessions (with a session store, and without): creating one (the creator its owner), the active
 * organization in the session (the oldest membership at sign-in, a switch only to one's own),
 * `hasPermission` and `requirePermission` answering for the roles there with no query, a member's
 * role lowered or their removal reaching their session within the roles' bound, the last owner kept,
 * deleting an organization with its memberships.
 */
import { createHash } from 'node:crypto'
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import Portcullis, { OrganizationError, type PortcullisConfig, type Session } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import type { Knex } from 'knex'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { SECRET, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

type Strategy = 'database' | 'jwt+store' | 'jwt'

const organizations = {
  statements: { project: ['create', 'delete'] },
  roles: { member: { project: ['create'] }, viewer: {} },
} as const

/** An app on `knex` whose users sign in with credentials (`<name>` / `lovelace`), with test routes on the server-side functions. */
function organizationsApp(knex: Knex, strategy: Strategy, config: Partial<PortcullisConfig> = {}) {
  const adapter = KnexAdapter(knex)
  const events: { name: string; message: unknown }[] = []
  const record = (name: string) => (message: unknown) => void events.push({ name, message })
  const logger = recordingLogger()
  const portcullis = Portcullis({
    secret: SECRET,
    logger,
    adapter,
    organizations,
    session: strategy === 'database' ? { strategy: 'database' } : strategy === 'jwt+store' ? { strategy: 'jwt', store: 'memory' } : { strategy: 'jwt' },
    providers: [
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: async ({ username, password }) => (password === 'lovelace' ? await adapter.getUserByEmail(`${String(username)}@example.com`) : null),
      }),
    ],
    events: {
      organizationCreated: record('organizationCreated'),
      memberAdded: record('memberAdded'),
      memberRemoved: record('memberRemoved'),
      memberRoleChanged: record('memberRoleChanged'),
      activeOrganizationChanged: record('activeOrganizationChanged'),
      sessionRevoked: record('sessionRevoked'),
    },
    ...config,
  })
  const app = express()
  app.use(express.json())
  app.use('/api/auth', portcullis.handlers)
  const answer = (run: (req: express.Request, res: express.Response) => Promise<unknown>) => async (req: express.Request, res: express.Response) => {
    try {
      res.json((await run(req, res)) ?? null)
    } catch (error) {
      if (error instanceof OrganizationError) return void res.status(400).json({ code: error.code, message: error.message })
      res.status(500).json({ message: String(error) })
    }
  }
  app.get('/me', async (req, res) => res.json(await portcullis.auth(req, res)))
  app.post('/orgs', answer((req) => portcullis.createOrganization(req, { ...req.body, skipCsrfCheck: true })))
  app.get('/orgs', answer((req) => portcullis.listOrganizations(req)))
  app.post('/active', answer((req) => portcullis.setActiveOrganization(req, { organizationId: req.body.organizationId, skipCsrfCheck: true })))
  app.get('/active', answer((req) => portcullis.getActiveOrganization(req)))
  app.post('/role', answer((req) => portcullis.updateMemberRoles(req, { ...req.body, skipCsrfCheck: true })))
  app.post('/remove', answer((req) => portcullis.removeMember(req, { ...req.body, skipCsrfCheck: true })))
  app.post('/delete', answer((req) => portcullis.deleteOrganization(req, { ...req.body, skipCsrfCheck: true })))
  app.post('/leave', answer((req) => portcullis.leaveOrganization(req, { ...req.body, skipCsrfCheck: true })))
  app.get('/members', answer((req) => portcullis.listMembers(req, { organizationId: String(req.query.organizationId) })))
  app.post('/projects', portcullis.requirePermission({ project: ['create'] }), (_req, res) => res.status(201).json({ created: true }))
  app.get('/can-delete', async (req, res) => res.json({ can: await portcullis.hasPermission(req, { project: ['delete'] }) }))
  return { ...portcullis, app, adapter, events, logger }
}

async function createUser(knex: Knex, name: string): Promise<string> {
  return (await KnexAdapter(knex).createUser({ name, email: `${name}@example.com`, emailVerified: null, image: null })).id
}

const me = async (agent: request.Agent): Promise<Session | null> => (await agent.get('/me').expect(200)).body as Session | null
const signIn = (agent: request.Agent, username: string) => signInWithPassword(agent, { username, password: 'lovelace' })
const createProject = (agent: request.Agent) => agent.post('/projects').set('Accept', 'application/json')

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `organizations on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    describe('the adapter', () => {
      it('creates an organization with its owner, finds it by id and slug, refuses a taken slug, lists a user\'s memberships oldest first', async () => {
        const ada = await createUser(db.knex, 'ada')
        const adapter = KnexAdapter(db.knex)
        const acme = await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: { plan: 'pro' } }, { userId: ada, roles: ['owner'] })
        expect(acme?.member).toMatchObject({ userId: ada, roles: ['owner'] })
        expect(await adapter.getOrganization({ slug: 'acme' })).toMatchObject({ id: acme!.organization.id, name: 'Acme', metadata: { plan: 'pro' } })
        expect(await adapter.createOrganization({ name: 'Other', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] })).toBeNull()
        const globex = await adapter.createOrganization({ name: 'Globex', slug: 'globex', logo: null, metadata: null }, { userId: ada, roles: ['owner'] })
        expect((await adapter.listOrganizationsOfUser(ada)).map(({ organization }) => organization.slug)).toEqual(['acme', 'globex'])
        expect(await adapter.updateOrganization(globex!.organization.id, { slug: 'acme' })).toBe('slug_taken')
        expect(await adapter.updateOrganization('no-such-id', { name: 'x' })).toBeNull()
      })

      it('keeps the last owner: neither demoted nor removed while no other member is owner', async () => {
        const ada = await createUser(db.knex, 'ada')
        const bob = await createUser(db.knex, 'bob')
        const adapter = KnexAdapter(db.knex)
        const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
        await adapter.addMember({ organizationId: organization.id, userId: bob, roles: ['member'] })
        expect(await adapter.addMember({ organizationId: organization.id, userId: bob, roles: ['member'] })).toBeNull()
        expect(await adapter.updateMemberRoles(organization.id, ada, ['admin'], 'owner')).toBe('last_owner')
        expect(await adapter.removeMember(organization.id, ada, 'owner')).toBe('last_owner')
        expect(await adapter.updateMemberRoles(organization.id, bob, ['owner'], 'owner')).toBe('done')
        // Two owners stepping down at once: one of them stays owner.
        const results = await Promise.all([adapter.updateMemberRoles(organization.id, ada, ['member'], 'owner'), adapter.updateMemberRoles(organization.id, bob, ['member'], 'owner')])
        expect(results.sort()).toEqual(['done', 'last_owner'])
        const owners = (await adapter.listMembers(organization.id)).filter((member) => member.roles.includes('owner'))
        expect(owners).toHaveLength(1)
        expect(await adapter.removeMember(organization.id, 'no-such-user', 'owner')).toBe('not_found')
      })

      it('deleting a user deletes their memberships; deleting an organization its members and its place as a session\'s active one', async () => {
        const ada = await createUser(db.knex, 'ada')
        const bob = await createUser(db.knex, 'bob')
        const adapter = KnexAdapter(db.knex)
        const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
        await adapter.addMember({ organizationId: organization.id, userId: bob, roles: ['member'] })
        await adapter.deleteUser(bob)
        expect(await adapter.countMembers(organization.id)).toBe(1)
        await adapter.createSession({ sessionToken: 'tok', userId: ada, expires: new Date(Date.now() + 60_000), activeOrganizationId: organization.id })
        expect((await adapter.getSessionAndUser('tok', { with: ['activeOrganization'] }))?.user.activeOrganization).toEqual({ id: organization.id, roles: 'owner' })
        expect(await adapter.deleteOrganization(organization.id)).toBe(true)
        expect(await adapter.getOrganization({ id: organization.id })).toBeNull()
        expect(await adapter.countMembers(organization.id)).toBe(0)
        expect((await adapter.getSessionAndUser('tok', { with: ['activeOrganization'] }))?.user.activeOrganization).toBeNull()
      })
    })

    it('the background prune deletes the invitations past their expiry, used or not, and keeps the others', async () => {
      const ada = await createUser(db.knex, 'ada')
      const adapter = KnexAdapter(db.knex)
      const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
      const invite = (email: string, expiresAt: Date) => adapter.createInvitation({ organizationId: organization.id, email, roles: ['member'], teamId: null, tokenHash: createHash('sha256').update(email).digest('hex'), inviterId: ada, expiresAt, sentAt: new Date() })
      const old = await invite('old@example.com', new Date(Date.now() - 60_000))
      const used = await invite('used@example.com', new Date(Date.now() - 1000))
      await adapter.settleInvitation(used.id, 'accepted', { expect: 'pending' })
      const standing = await invite('new@example.com', new Date(Date.now() + 3_600_000))
      const stop = new AbortController()
      try {
        organizationsApp(db.knex, 'database', { prune: { everyMinutes: 0.002, signal: stop.signal } })
        for (let i = 0; i < 100 && (await adapter.getInvitation(old.id)); i++) await new Promise((resolve) => setTimeout(resolve, 50))
      } finally {
        stop.abort()
      }
      expect([await adapter.getInvitation(old.id), await adapter.getInvitation(used.id)]).toEqual([null, null])
      expect(await adapter.getInvitation(standing.id)).toMatchObject({ email: 'new@example.com', status: 'pending' })
    })

    for (const strategy of ['database', 'jwt+store'] as Strategy[]) {
      describe(`${strategy} sessions`, () => {
        it('the creator is owner; a switch makes it active and hasPermission answers for the roles there, with no query', async () => {
          const ada = await createUser(db.knex, 'ada')
          const { app, events } = organizationsApp(db.knex, strategy)
          const agent = request.agent(app)
          await signIn(agent, 'ada')
          expect((await me(agent))?.user.activeOrganization).toBeNull()
          expect((await createProject(agent)).status).toBe(403)

          const created = (await agent.post('/orgs').send({ name: 'Acme Inc.' }).expect(200)).body
          expect(created).toMatchObject({ name: 'Acme Inc.', slug: 'acme-inc', roles: ['owner'] })
          expect(events.map((event) => event.name)).toEqual(['organizationCreated', 'memberAdded'])
          // Created, not switched to.
          expect((await me(agent))?.user.activeOrganization).toBeNull()

          expect((await agent.post('/active').send({ organizationId: created.id }).expect(200)).body).toMatchObject({ id: created.id, roles: ['owner'] })
          expect((await me(agent))?.user.activeOrganization).toEqual({ id: created.id, roles: ['owner'] })
          expect((await createProject(agent)).status).toBe(201)
          expect((await agent.get('/can-delete').expect(200)).body).toEqual({ can: true })
          expect((await agent.get('/active').expect(200)).body).toMatchObject({ id: created.id, slug: 'acme-inc', roles: ['owner'] })
          expect(events.at(-1)).toEqual({ name: 'activeOrganizationChanged', message: { userId: ada, organizationId: created.id } })

          // Switched to none.
          await agent.post('/active').send({ organizationId: null }).expect(200)
          expect((await me(agent))?.user.activeOrganization).toBeNull()
          expect((await createProject(agent)).status).toBe(403)
        })

        it('refuses a switch to an organization the user is not a member of, and keeps the active one', async () => {
          await createUser(db.knex, 'ada')
          await createUser(db.knex, 'eve')
          const { app } = organizationsApp(db.knex, strategy)
          const ada = request.agent(app)
          const eve = request.agent(app)
          await signIn(ada, 'ada')
          await signIn(eve, 'eve')
          const acme = (await ada.post('/orgs').send({ name: 'Acme' }).expect(200)).body
          const evil = (await eve.post('/orgs').send({ name: 'Evil' }).expect(200)).body
          await eve.post('/active').send({ organizationId: evil.id }).expect(200)
          const refused = await eve.post('/active').send({ organizationId: acme.id })
          expect(refused.status).toBe(400)
          // The same answer as a made-up id: nothing says the organization exists.
          expect(refused.body).toEqual((await eve.post('/active').send({ organizationId: 'made-up' })).body)
          expect(refused.body.code).toBe('not_found')
          expect((await me(eve))?.user.activeOrganization).toEqual({ id: evil.id, roles: ['owner'] })
        })

        it('at sign-in the active organization is the user\'s oldest membership', async () => {
          const ada = await createUser(db.knex, 'ada')
          const { app, adapter } = organizationsApp(db.knex, strategy)
          const first = await adapter.createOrganization({ name: 'First', slug: 'first', logo: null, metadata: null }, { userId: ada, roles: ['owner'] })
          await new Promise((resolve) => setTimeout(resolve, 5))
          await adapter.createOrganization({ name: 'Second', slug: 'second', logo: null, metadata: null }, { userId: ada, roles: ['owner'] })
          const agent = request.agent(app)
          await signIn(agent, 'ada')
          expect((await me(agent))?.user.activeOrganization).toEqual({ id: first!.organization.id, roles: ['owner'] })
          expect((await createProject(agent)).status).toBe(201)
        })

        it('a role lowered and a removal reach the member\'s session within the roles\' bound', async () => {
          const ada = await createUser(db.knex, 'ada')
          const bob = await createUser(db.knex, 'bob')
          const { app, addMember, adapter, events } = organizationsApp(db.knex, strategy)
          const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
          await addMember(organization.id, bob, ['member'])
          const owner = request.agent(app)
          const member = request.agent(app)
          await signIn(owner, 'ada')
          await signIn(member, 'bob')
          expect((await me(member))?.user.activeOrganization).toEqual({ id: organization.id, roles: ['member'] })
          expect((await createProject(member)).status).toBe(201)

          await owner.post('/role').send({ organizationId: organization.id, userId: bob, roles: ['viewer'] }).expect(200)
          expect(events.find((event) => event.name === 'memberRoleChanged')?.message).toEqual({ organizationId: organization.id, userId: bob, roles: ['viewer'], previous: ['member'], by: ada })
          if (strategy === 'database') {
            // At once: the session's join reads the membership.
            expect((await me(member))?.user.activeOrganization).toEqual({ id: organization.id, roles: ['viewer'] })
            expect((await createProject(member)).status).toBe(403)
          } else {
            // Ended through the store; the new sign-in carries the new roles.
            expect(events.find((event) => event.name === 'sessionRevoked')?.message).toMatchObject({ userId: bob, by: 'membershipChanged' })
            expect(await me(member)).toBeNull()
            await signIn(member, 'bob')
            expect((await me(member))?.user.activeOrganization).toEqual({ id: organization.id, roles: ['viewer'] })
          }
          // The owner's own session was not touched.
          expect((await me(owner))?.user.activeOrganization).toEqual({ id: organization.id, roles: ['owner'] })

          await owner.post('/remove').send({ organizationId: organization.id, userId: bob }).expect(200)
          if (strategy === 'database') expect((await me(member))?.user.activeOrganization).toBeNull()
          else expect(await me(member)).toBeNull()
          expect((await createProject(member)).status).toBe(strategy === 'database' ? 403 : 401)
        })

        it('keeps the last owner, refuses raising one\'s own roles, and deleting an organization ends it everywhere', async () => {
          const ada = await createUser(db.knex, 'ada')
          const bob = await createUser(db.knex, 'bob')
          const { app, addMember, adapter } = organizationsApp(db.knex, strategy)
          const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
          await addMember(organization.id, bob, ['admin'])
          const owner = request.agent(app)
          const admin = request.agent(app)
          await signIn(owner, 'ada')
          await signIn(admin, 'bob')
          expect((await owner.post('/role').send({ organizationId: organization.id, userId: ada, roles: ['admin'] })).body.code).toBe('last_owner')
          expect((await owner.post('/remove').send({ organizationId: organization.id, userId: ada })).body.code).toBe('last_owner')
          expect((await admin.post('/role').send({ organizationId: organization.id, userId: bob, roles: ['owner'] })).body.code).toBe('forbidden')
          expect((await admin.post('/remove').send({ organizationId: organization.id, userId: ada })).body.code).toBe('forbidden')
          expect((await admin.post('/delete').send({ organizationId: organization.id })).body.code).toBe('forbidden')
          expect((await admin.get('/members').query({ organizationId: organization.id }).expect(200)).body.map((m: { roles: string[] }) => m.roles)).toEqual([['owner'], ['admin']])

          await owner.post('/delete').send({ organizationId: organization.id }).expect(200)
          expect(await adapter.getOrganization({ id: organization.id })).toBeNull()
          expect((await owner.get('/orgs').expect(200)).body).toEqual([])
          // The deleter's own session stays, with no active organization; the admin's lost it.
          expect((await me(owner))?.user.activeOrganization).toBeNull()
          if (strategy === 'database') expect((await me(admin))?.user.activeOrganization).toBeNull()
          else expect(await me(admin)).toBeNull()
        })
      })
    }

    describe('JWT sessions without a store', () => {
      it('keep the roles of their token until the next switch or sign-in, and the wing warns at init', async () => {
        const ada = await createUser(db.knex, 'ada')
        const bob = await createUser(db.knex, 'bob')
        const { app, addMember, adapter, logger } = organizationsApp(db.knex, 'jwt')
        expect(logger.codes('warn')).toContain('OrganizationsWithoutStore')
        const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
        await addMember(organization.id, bob, ['member'])
        const member = request.agent(app)
        await signIn(member, 'bob')
        expect((await createProject(member)).status).toBe(201)
        await adapter.updateMemberRoles(organization.id, bob, ['viewer'], 'owner')
        // Nothing on the server reaches the cookie: the old roles stand in it.
        expect((await createProject(member)).status).toBe(201)
        // getActiveOrganization reads the membership itself.
        expect((await member.get('/active').expect(200)).body).toMatchObject({ roles: ['viewer'] })
        await member.post('/active').send({ organizationId: organization.id }).expect(200)
        expect((await createProject(member)).status).toBe(403)
        // Leaving through leaveOrganization() switches the session off the organization: its cookie is re-sealed.
        await member.post('/leave').send({ organizationId: organization.id }).expect(200)
        expect((await me(member))?.user.activeOrganization).toBeNull()
      })
    })
  })
}

describe('the organizations option', () => {
  const base: PortcullisConfig = { secret: SECRET, logger: recordingLogger(), providers: [], adapter: {}, session: { strategy: 'jwt' } }

  it('refuses an unknown option, a role named owner, and a role granting what no statement has', () => {
    expect(() => Portcullis({ ...base, organizations: { teamz: true } as never })).toThrow("organizations: unknown option 'teamz'")
    expect(() => Portcullis({ ...base, organizations: { roles: { owner: {} } } as never })).toThrow('"owner" is built in')
    expect(() => Portcullis({ ...base, organizations: { statements: { project: ['create'] }, roles: { dev: { project: ['deploy'] } } } as never })).toThrow('"deploy" is no action of project')
    expect(() => Portcullis({ ...base, organizations: { statements: { member: ['x'] } } as never })).toThrow('"member" is the wing\'s own resource')
  })

  it('needs the option for its functions, and hasPermission says what to turn on', async () => {
    const { createOrganization, hasPermission } = Portcullis({ secret: SECRET, logger: recordingLogger(), providers: [] })
    await expect(createOrganization({ headers: {}, method: 'GET' } as never, { name: 'x', skipCsrfCheck: true })).rejects.toThrow('needs the organizations option')
    await expect(hasPermission({ headers: {}, method: 'GET' } as never, { project: ['create'] })).rejects.toThrow('roles option')
  })
})
