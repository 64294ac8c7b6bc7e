/**
 * Teams inside organizations (`organizations.teams`), on SQLite, PostgreSQL and MariaDB: who may
 * create, rename and delete them and change their members, that a team's members are members of its
 * organization (and leave its teams with it), the per-organization limit, and that a team of another
 * organization is as unknown as a made-up one.
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import Portcullis, { OrganizationError, type OrganizationMail, type PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import type { Knex } from 'knex'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { SECRET, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

function teamsApp(knex: Knex, config: Partial<PortcullisConfig> = {}) {
  const adapter = KnexAdapter(knex)
  const mails: OrganizationMail[] = []
  const portcullis = Portcullis({
    secret: SECRET,
    logger: recordingLogger(),
    adapter,
    organizations: { teams: { maxTeamsPerOrganization: 2 }, sendMail: (mail) => void mails.push(mail) },
    session: { strategy: 'database' },
    providers: [
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: async ({ username }) => await adapter.getUserByEmail(`${String(username)}@example.com`),
      }),
    ],
    ...config,
  })
  const app = express()
  app.use(express.json())
  app.use('/api/auth', portcullis.handlers)
  const call = (run: (req: express.Request) => Promise<unknown>) => async (req: express.Request, res: express.Response) => {
    try {
      res.json((await run(req)) ?? null)
    } catch (error) {
      if (!(error instanceof OrganizationError)) throw error
      res.status(400).json({ code: error.code, message: error.message })
    }
  }
  const body = (req: express.Request) => ({ ...req.body, skipCsrfCheck: true })
  app.post('/teams', call((req) => portcullis.createTeam(req, body(req))))
  app.get('/teams', call((req) => portcullis.listTeams(req, { organizationId: String(req.query.organizationId) })))
  app.post('/teams/rename', call((req) => portcullis.renameTeam(req, body(req))))
  app.post('/teams/delete', call((req) => portcullis.deleteTeam(req, body(req))))
  app.post('/teams/add', call((req) => portcullis.addTeamMember(req, body(req))))
  app.post('/teams/remove', call((req) => portcullis.removeTeamMember(req, body(req))))
  app.get('/teams/members', call((req) => portcullis.listTeamMembers(req, { organizationId: String(req.query.organizationId), teamId: String(req.query.teamId) })))
  app.post('/members/remove', call((req) => portcullis.removeMember(req, body(req))))
  app.post('/invite', call((req) => portcullis.inviteMember(req, body(req))))
  app.post('/accept', call((req) => portcullis.acceptInvitation({ req, res: req.res! }, body(req))))
  return { ...portcullis, app, adapter, mails }
}

async function createUser(knex: Knex, name: string): Promise<string> {
  return (await KnexAdapter(knex).createUser({ name, email: `${name}@example.com`, emailVerified: null, image: null })).id
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `teams on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    it('an admin makes teams and puts members in them; a plain member lists them but changes nothing', async () => {
      const ada = await createUser(db.knex, 'ada')
      const bob = await createUser(db.knex, 'bob')
      const { app, adapter, addMember } = teamsApp(db.knex)
      const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
      await addMember(organization.id, bob, ['member'])
      const owner = request.agent(app)
      const member = request.agent(app)
      await signInWithPassword(owner, { username: 'ada', password: 'x' })
      await signInWithPassword(member, { username: 'bob', password: 'x' })

      const support = (await owner.post('/teams').send({ organizationId: organization.id, name: ' Support ' }).expect(200)).body
      expect(support).toMatchObject({ organizationId: organization.id, name: 'Support' })
      expect((await member.post('/teams').send({ organizationId: organization.id, name: 'Mine' })).body.code).toBe('forbidden')
      expect((await member.post('/teams/add').send({ organizationId: organization.id, teamId: support.id, userId: bob })).body.code).toBe('forbidden')
      await owner.post('/teams/add').send({ organizationId: organization.id, teamId: support.id, userId: bob }).expect(200)
      // Twice is still once.
      await owner.post('/teams/add').send({ organizationId: organization.id, teamId: support.id, userId: bob }).expect(200)
      expect((await member.get('/teams/members').query({ organizationId: organization.id, teamId: support.id }).expect(200)).body).toEqual([{ userId: bob, name: 'bob', email: 'bob@example.com' }])
      expect((await member.get('/teams').query({ organizationId: organization.id }).expect(200)).body.map((team: { name: string }) => team.name)).toEqual(['Support'])
      expect((await owner.post('/teams/rename').send({ organizationId: organization.id, teamId: support.id, name: 'Help' }).expect(200)).body.name).toBe('Help')

      // The limit: two teams per organization here.
      await owner.post('/teams').send({ organizationId: organization.id, name: 'Sales' }).expect(200)
      expect((await owner.post('/teams').send({ organizationId: organization.id, name: 'Third' })).body.code).toBe('limit_reached')

      await owner.post('/teams/remove').send({ organizationId: organization.id, teamId: support.id, userId: bob }).expect(200)
      expect((await owner.get('/teams/members').query({ organizationId: organization.id, teamId: support.id }).expect(200)).body).toEqual([])
      await owner.post('/teams/delete').send({ organizationId: organization.id, teamId: support.id }).expect(200)
      expect((await owner.get('/teams').query({ organizationId: organization.id }).expect(200)).body.map((team: { name: string }) => team.name)).toEqual(['Sales'])
    })

    it('only members of the organization join its teams, and leaving it leaves its teams', async () => {
      const ada = await createUser(db.knex, 'ada')
      const bob = await createUser(db.knex, 'bob')
      const eve = await createUser(db.knex, 'eve')
      const { app, adapter, addMember } = teamsApp(db.knex)
      const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
      await addMember(organization.id, bob, ['member'])
      const owner = request.agent(app)
      await signInWithPassword(owner, { username: 'ada', password: 'x' })
      const team = (await owner.post('/teams').send({ organizationId: organization.id, name: 'Support' }).expect(200)).body
      expect((await owner.post('/teams/add').send({ organizationId: organization.id, teamId: team.id, userId: eve })).body.code).toBe('not_found')
      await owner.post('/teams/add').send({ organizationId: organization.id, teamId: team.id, userId: bob }).expect(200)
      await owner.post('/members/remove').send({ organizationId: organization.id, userId: bob }).expect(200)
      expect(await adapter.listTeamMembers(organization.id, team.id)).toEqual([])
    })

    it('an invitation into a team: the invitee joins the organization and the team; a team of another organization cannot be named', async () => {
      const ada = await createUser(db.knex, 'ada')
      const bob = await createUser(db.knex, 'bob')
      const { app, adapter, mails } = teamsApp(db.knex)
      const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
      const other = (await adapter.createOrganization({ name: 'Other', slug: 'other', logo: null, metadata: null }, { userId: bob, roles: ['owner'] }))!.organization
      const foreign = await adapter.createTeam({ organizationId: other.id, name: 'Theirs' })
      await createUser(db.knex, 'cy')
      const owner = request.agent(app)
      await signInWithPassword(owner, { username: 'ada', password: 'x' })
      const support = (await owner.post('/teams').send({ organizationId: organization.id, name: 'Support' }).expect(200)).body
      expect((await owner.post('/invite').send({ organizationId: organization.id, email: 'cy@example.com', teamId: foreign.id })).body.code).toBe('not_found')
      const invitation = (await owner.post('/invite').send({ organizationId: organization.id, email: 'cy@example.com', teamId: support.id }).expect(200)).body
      expect(invitation).toMatchObject({ teamId: support.id, mailed: true })
      const token = new URL(mails.at(-1)!.url).searchParams.get('token')
      const invitee = request.agent(app)
      await signInWithPassword(invitee, { username: 'cy', password: 'x' })
      await invitee.post('/accept').send({ token }).expect(200)
      expect((await adapter.listTeamMembers(organization.id, support.id)).map((member) => member.name)).toEqual(['cy'])
      expect(await adapter.listTeamMembers(other.id, foreign.id)).toEqual([])
    })

    it('with teams off, their functions say how to turn them on', async () => {
      const ada = await createUser(db.knex, 'ada')
      const { app, adapter } = teamsApp(db.knex, { organizations: true })
      const { organization } = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!
      const owner = request.agent(app)
      await signInWithPassword(owner, { username: 'ada', password: 'x' })
      expect((await owner.post('/teams').send({ organizationId: organization.id, name: 'Support' })).body).toEqual({ code: 'invalid_input', message: 'Teams are off: set organizations.teams to use them.' })
    })

    it('a team of another organization is unknown, by its id under one\'s own organization\'s', async () => {
      const ada = await createUser(db.knex, 'ada')
      const eve = await createUser(db.knex, 'eve')
      const { app, adapter } = teamsApp(db.knex)
      const acme = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!.organization
      const evil = (await adapter.createOrganization({ name: 'Evil', slug: 'evil', logo: null, metadata: null }, { userId: eve, roles: ['owner'] }))!.organization
      const acmeTeam = await adapter.createTeam({ organizationId: acme.id, name: 'Secret' })
      const attacker = request.agent(app)
      await signInWithPassword(attacker, { username: 'eve', password: 'x' })
      const madeUp = (await attacker.post('/teams/delete').send({ organizationId: evil.id, teamId: 'made-up' })).body
      expect(madeUp.code).toBe('not_found')
      for (const [path, extra] of [
        ['/teams/delete', {}],
        ['/teams/rename', { name: 'Mine' }],
        ['/teams/add', { userId: eve }],
        ['/teams/remove', { userId: ada }],
      ] as const) {
        expect([path, (await attacker.post(path).send({ organizationId: evil.id, teamId: acmeTeam.id, ...extra })).body]).toEqual([path, expect.objectContaining({ code: 'not_found' })])
        // And under the other organization's id: not a member there.
        expect([path, (await attacker.post(path).send({ organizationId: acme.id, teamId: acmeTeam.id, ...extra })).body.code]).toEqual([path, 'not_found'])
      }
      expect((await attacker.get('/teams/members').query({ organizationId: evil.id, teamId: acmeTeam.id })).body.code).toBe('not_found')
      expect((await attacker.get('/teams').query({ organizationId: acme.id })).body.code).toBe('not_found')
      expect(await adapter.getTeam(acme.id, acmeTeam.id)).toMatchObject({ name: 'Secret' })
    })
  })
}
