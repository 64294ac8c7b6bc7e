/**
 * Invitations to organizations end to end, on SQLite, PostgreSQL and MariaDB, over a listening
 * Express app, the mail through a real SMTP server: invite, the mailed link, the accept page (which
 * accepts nothing by itself), accept (a member, the session's active organization), decline, cancel,
 * resend's limit, "invitations for me"; and the attacks: a token used twice or by two racing requests,
 * by another address, after cancel or expiry; a member without the permission; another
 * organization's invitations by id; and no route an outsider reaches saying who is a member.
 */
import express from 'express'
import request from 'supertest'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals'
import Portcullis, { type PortcullisConfig, type Session } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import Nodemailer from 'portcullis/providers/nodemailer'
import type { Knex } from 'knex'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { fetchCsrfToken, SECRET, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'
import { linkOf, startSmtpServer, type TestSmtpServer } from '../support/smtp.js'

type Strategy = 'database' | 'jwt'

let smtp: TestSmtpServer
beforeAll(async () => {
  smtp = await startSmtpServer()
})
afterAll(() => smtp.close())

/** An app on `knex` whose users (`<name>@example.com`, password `lovelace`) sign in with credentials, invitations mailed to `smtp`. */
async function invitationApp(knex: Knex, strategy: Strategy, organizations: Record<string, unknown> = {}, config: Partial<PortcullisConfig> = {}) {
  const adapter = KnexAdapter(knex)
  const events: { name: string; message: unknown }[] = []
  const record = (name: string) => (message: unknown) => void events.push({ name, message })
  const portcullis = Portcullis({
    secret: SECRET,
    logger: recordingLogger(),
    adapter,
    session: { strategy },
    organizations: { server: smtp.url, from: 'Acme <auth@example.test>', ...organizations },
    events: {
      memberAdded: record('memberAdded'),
      invitationCreated: record('invitationCreated'),
      invitationAccepted: record('invitationAccepted'),
      invitationDeclined: record('invitationDeclined'),
      invitationCanceled: record('invitationCanceled'),
    },
    ...config,
    providers: [
      ...(config.providers ?? []),
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: async ({ username, password }) => (password === 'lovelace' ? await adapter.getUserByEmail(`${String(username)}@example.com`) : null),
      }),
    ],
  })
  const app = express()
  app.use('/api/auth', portcullis.handlers)
  app.get('/me', async (req, res) => res.json(await portcullis.auth(req, res)))
  // The app's own page that calls the server-side function (no route): the JWT cookie goes on res.
  app.post('/accept', express.json(), async (req, res) => {
    try {
      res.json(await portcullis.acceptInvitation({ req, res }, { token: req.body.token, csrfToken: req.body.csrfToken }))
    } catch (error) {
      res.status(400).json({ code: (error as { code?: string }).code })
    }
  })
  // Listening before the first request: every request reaches one origin, as the callbackUrl it carries.
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  return { ...portcullis, app: server, adapter, events }
}

type App = Awaited<ReturnType<typeof invitationApp>>

async function createUser(knex: Knex, name: string, verified = true): Promise<string> {
  return (await KnexAdapter(knex).createUser({ name, email: `${name}@example.com`, emailVerified: verified ? new Date() : null, image: null })).id
}

async function signedIn(app: App, name: string): Promise<request.Agent> {
  const agent = request.agent(app.app)
  const response = await signInWithPassword(agent, { username: name, password: 'lovelace' })
  expect(response.status).toBe(302)
  return agent
}

const me = async (agent: request.Agent): Promise<Session | null> => (await agent.get('/me').expect(200)).body as Session | null

/** Invites `email` as the agent's user, through the JSON route. */
async function invite(agent: request.Agent, organizationId: string, email: string, roles?: string[]) {
  const csrfToken = await fetchCsrfToken(agent)
  return agent.post('/api/auth/organizations/invitations').set('Accept', 'application/json').send({ csrfToken, organizationId, email, ...(roles ? { roles } : {}) })
}

/** `invite`, which must answer 201. */
async function invited(agent: request.Agent, organizationId: string, email: string, roles?: string[]) {
  const response = await invite(agent, organizationId, email, roles)
  expect([response.status, response.body.code]).toEqual([201, undefined])
  return response
}

/** The accept page's path and token of the next mail, which must be to `to`. */
async function mailedLink(to: string): Promise<{ path: string; token: string }> {
  const mail = await smtp.nextMessage()
  expect(mail.to).toEqual([to])
  const url = new URL(linkOf(mail))
  expect(url.pathname).toBe('/api/auth/organizations/invitation')
  return { path: url.pathname + url.search, token: url.searchParams.get('token')! }
}

async function post(agent: request.Agent, path: string, fields: Record<string, unknown>, json = true) {
  const csrfToken = await fetchCsrfToken(agent)
  const call = agent.post(`/api/auth${path}`)
  return json ? call.set('Accept', 'application/json').send({ csrfToken, ...fields }) : call.type('form').send({ csrfToken, ...fields })
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `organization invitations on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    let apps: App[] = []
    let acme: string
    let globex: string

    beforeEach(async () => {
      for (const table of ['TeamMember', 'Team', 'Invitation', 'Member', 'Organization']) await db.knex(table).del()
      smtp.skipReceived()
      const ada = await createUser(db.knex, 'ada')
      const bob = await createUser(db.knex, 'bob')
      await createUser(db.knex, 'grace')
      await createUser(db.knex, 'eve')
      const adapter = KnexAdapter(db.knex)
      acme = (await adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: ada, roles: ['owner'] }))!.organization.id
      globex = (await adapter.createOrganization({ name: 'Globex', slug: 'globex', logo: null, metadata: null }, { userId: await createUser(db.knex, 'hank'), roles: ['owner'] }))!.organization.id
      await adapter.addMember({ organizationId: acme, userId: bob, roles: ['member'] })
    })

    afterEach(async () => {
      for (const app of apps) await new Promise((resolve) => app.app.close(resolve))
      apps = []
    })

    const appOf = async (strategy: Strategy = 'database', organizations?: Record<string, unknown>, config?: Partial<PortcullisConfig>) => {
      const app = await invitationApp(db.knex, strategy, organizations, config)
      apps.push(app)
      return app
    }

    for (const strategy of ['database', 'jwt'] as Strategy[]) {
      it(`invites by mail; the invited user opens the link, accepts, and is a member with the role, the organization their session's active one (${strategy} sessions)`, async () => {
        const app = await appOf(strategy)
        const ada = await signedIn(app, 'ada')
        const created = await invite(ada, acme, ' Grace@Example.com ', ['admin'])
        expect(created.status).toBe(201)
        expect(created.body.invitation).toMatchObject({ organizationId: acme, email: 'grace@example.com', roles: ['admin'], status: 'pending', mailed: true })
        expect(JSON.stringify(created.body)).not.toMatch(/token/i)
        const { path, token } = await mailedLink('grace@example.com')
        // Stored as its SHA-256 only.
        expect(JSON.stringify(await db.knex('Invitation').select())).not.toContain(token)

        const grace = await signedIn(app, 'grace')
        const page = await grace.get(path).expect(200)
        expect(page.text).toContain('Join Acme')
        expect(page.text).toContain('action="/api/auth/organizations/invitation/accept"')
        expect(page.headers['cache-control']).toBe('no-store')
        const csrfToken = /name="csrfToken" value="([^"]+)"/.exec(page.text)![1]!
        const accepted = await grace.post('/api/auth/organizations/invitation/accept').type('form').send({ csrfToken, token })
        expect(accepted.status).toBe(302)

        const graceId = (await app.adapter.getUserByEmail('grace@example.com'))!.id
        expect((await app.adapter.getMember(acme, graceId))?.roles).toEqual(['admin'])
        expect((await me(grace))?.user.activeOrganization).toEqual({ id: acme, roles: ['admin'] })
        expect((await app.adapter.getInvitation(created.body.invitation.id))?.status).toBe('accepted')
        expect(app.events.map((event) => event.name)).toEqual(['invitationCreated', 'memberAdded', 'invitationAccepted'])
        expect(JSON.stringify(app.events)).not.toContain(token)
      })
    }

    it('uses a token once: a second accept, and of two racing accepts exactly one wins', async () => {
      const app = await appOf()
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'grace@example.com')
      const { token } = await mailedLink('grace@example.com')
      const grace = await signedIn(app, 'grace')
      const csrfToken = await fetchCsrfToken(grace)
      const accept = () => grace.post('/api/auth/organizations/invitation/accept').set('Accept', 'application/json').send({ csrfToken, token })
      const answers = await Promise.all([accept(), accept(), accept()])
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400, 400])
      for (const refused of answers.filter((answer) => answer.status === 400)) expect(refused.body.code).toBe('invalid_invitation')
      const again = await accept()
      expect(again.status).toBe(400)
      expect(again.body).toMatchObject({ error: 'Organization', code: 'invalid_invitation' })
      expect(app.events.filter((event) => event.name === 'invitationAccepted')).toHaveLength(1)
    })

    it('refuses the token to a user signed in with another address, after cancel and after expiry, with one and the same message', async () => {
      const app = await appOf()
      const ada = await signedIn(app, 'ada')
      const messages = new Set<string>()

      await invited(ada, acme, 'grace@example.com')
      const first = await mailedLink('grace@example.com')
      const eve = await signedIn(app, 'eve')
      const stolen = await post(eve, '/organizations/invitation/accept', { token: first.token })
      expect(stolen.status).toBe(400)
      messages.add(stolen.body.message)
      // Its page says as little to eve, and the token still works for grace.
      const evePage = await eve.get(first.path)
      expect(evePage.status).toBe(400)
      expect(evePage.text).not.toContain('Acme')

      const pending = (await app.adapter.listInvitations(acme))[0]!
      expect((await post(ada, '/organizations/invitations/cancel', { invitationId: pending.id })).status).toBe(200)
      const grace = await signedIn(app, 'grace')
      const canceled = await post(grace, '/organizations/invitation/accept', { token: first.token })
      expect(canceled.status).toBe(400)
      messages.add(canceled.body.message)

      await invited(ada, acme, 'grace@example.com')
      const second = await mailedLink('grace@example.com')
      // Eight days on: past the default seven.
      const now = Date.now()
      const clock = jest.spyOn(Date, 'now').mockReturnValue(now + 8 * 86400_000)
      try {
        const expired = await post(grace, '/organizations/invitation/accept', { token: second.token })
        expect(expired.status).toBe(400)
        messages.add(expired.body.message)
      } finally {
        clock.mockRestore()
      }
      const unknown = await post(grace, '/organizations/invitation/accept', { token: 'not-a-token' })
      messages.add(unknown.body.message)
      expect(messages.size).toBe(1)
      expect(app.events.filter((event) => event.name === 'invitationCanceled')).toHaveLength(1)
      expect(await app.adapter.getMember(acme, (await app.adapter.getUserByEmail('grace@example.com'))!.id)).toBeNull()
    })

    it('declines: the token is used, nobody joins', async () => {
      const app = await appOf()
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'grace@example.com')
      const { token } = await mailedLink('grace@example.com')
      const grace = await signedIn(app, 'grace')
      const declined = await post(grace, '/organizations/invitation/decline', { token }, false)
      expect(declined.status).toBe(200)
      expect(declined.text).toContain('Invitation declined')
      expect((await post(grace, '/organizations/invitation/accept', { token })).body.code).toBe('invalid_invitation')
      expect(app.events.map((event) => event.name)).toEqual(['invitationCreated', 'invitationDeclined'])
    })

    it('resends with a new link (the old one stops working), at most 3 mails an hour: then 429 with Retry-After', async () => {
      const app = await appOf()
      const ada = await signedIn(app, 'ada')
      const created = await invited(ada, acme, 'grace@example.com')
      const first = await mailedLink('grace@example.com')
      const resent = await post(ada, '/organizations/invitations/resend', { invitationId: created.body.invitation.id })
      expect(resent.status).toBe(200)
      const second = await mailedLink('grace@example.com')
      expect(second.token).not.toBe(first.token)
      // A second invitation to the address refreshes the pending one (and counts as a mail of it).
      const again = await invite(ada, acme, 'GRACE@example.com')
      expect(again.status).toBe(201)
      expect(again.body.invitation.id).toBe(created.body.invitation.id)
      const third = await mailedLink('grace@example.com')
      expect(await app.adapter.listInvitations(acme)).toHaveLength(1)
      const limited = await post(ada, '/organizations/invitations/resend', { invitationId: created.body.invitation.id })
      expect(limited.status).toBe(429)
      expect(limited.body.code).toBe('rate_limited')
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)

      const grace = await signedIn(app, 'grace')
      for (const old of [first, second]) expect((await post(grace, '/organizations/invitation/accept', { token: old.token })).body.code).toBe('invalid_invitation')
      expect((await post(grace, '/organizations/invitation/accept', { token: third.token })).status).toBe(200)
    })

    it("lists a user's own pending invitations only, for a verified address, as JSON and as a page", async () => {
      const app = await appOf()
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'grace@example.com')
      await invited(ada, acme, 'eve@example.com')
      smtp.skipReceived()
      const grace = await signedIn(app, 'grace')
      const mine = await grace.get('/api/auth/invitations').set('Accept', 'application/json').expect(200)
      expect(mine.body.invitations).toEqual([{ id: expect.any(String), organization: { id: acme, name: 'Acme', slug: 'acme', logo: null }, roles: ['member'], expiresAt: expect.any(String) }])
      const page = await grace.get('/api/auth/invitations').expect(200)
      expect(page.text).toContain('Acme')
      expect(page.text).not.toContain('eve@example.com')
      // An address typed but never verified proves no mailbox: no list.
      await db.knex('User').update({ emailVerified: null }).where({ email: 'grace@example.com' })
      expect((await grace.get('/api/auth/invitations').set('Accept', 'application/json')).body.invitations).toEqual([])
    })

    it("refuses to invite a member's address, to the inviter only; no route an outsider reaches says who is a member", async () => {
      const app = await appOf()
      const ada = await signedIn(app, 'ada')
      const mails = smtp.messages.length
      // Stored by a provider in another letter case, typed in a third.
      await db.knex('User').update({ email: 'Bob@Example.com' }).where({ email: 'bob@example.com' })
      const refused = await invite(ada, acme, 'BOB@example.COM')
      expect(refused.status).toBe(409)
      expect(refused.body.code).toBe('already_member')
      expect(smtp.messages.length).toBe(mails)
      expect(await app.adapter.listInvitations(acme)).toEqual([])

      // An outsider (eve, of no organization) learns nothing: she cannot invite, list or see anything of Acme's.
      const eve = await signedIn(app, 'eve')
      const hers = [await invite(eve, acme, 'bob@example.com'), await invite(eve, acme, 'nobody@example.com'), await eve.get(`/api/auth/organizations/invitations?organizationId=${acme}`)]
      for (const answer of hers) {
        expect(answer.status).toBe(404)
        expect(answer.body.code).toBe('not_found')
      }
      expect(hers[0]!.body.message).toBe(hers[1]!.body.message)
      // A visitor: every route is sign in first.
      const visitor = request.agent(app.app)
      expect((await visitor.get('/api/auth/invitations').set('Accept', 'application/json')).status).toBe(401)
      expect((await visitor.get('/api/auth/organizations/invitation?token=x').set('Accept', 'application/json')).status).toBe(401)
    })

    it('sends a visitor who is not signed in to sign in, and back to the page; the page and HEAD use nothing up', async () => {
      const app = await appOf()
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'grace@example.com')
      const { path, token } = await mailedLink('grace@example.com')
      const visitor = request.agent(app.app)
      const away = await visitor.get(path).expect(302)
      const signIn = new URL(away.headers.location!)
      expect(signIn.pathname).toBe('/api/auth/signin')
      const callbackUrl = signIn.searchParams.get('callbackUrl')!
      expect(new URL(callbackUrl).pathname + new URL(callbackUrl).search).toBe(path)
      await visitor.head(path)

      const csrfToken = await fetchCsrfToken(visitor)
      const back = await visitor.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'grace', password: 'lovelace', callbackUrl })
      expect(back.status).toBe(302)
      expect(back.headers.location).toBe(callbackUrl)
      // Opened twice, and HEAD: still pending.
      await visitor.get(path).expect(200)
      await visitor.head(path).expect(200)
      expect((await app.adapter.listInvitations(acme))[0]?.status).toBe('pending')
      const accepted = await post(visitor, '/organizations/invitation/accept', { token })
      expect(accepted.status).toBe(200)
      expect(accepted.body.organization).toMatchObject({ id: acme, name: 'Acme', roles: ['member'] })
      expect((await me(visitor))?.user.activeOrganization).toEqual({ id: acme, roles: ['member'] })
    })

    it('lets a newcomer sign up by a mailed sign-in link, come back, accept and land in the organization (the mail through the e-mail provider\'s server)', async () => {
      const app = await appOf('database', { server: undefined, from: undefined }, { providers: [Nodemailer({ server: smtp.url, from: 'Acme <auth@example.test>' })] })
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'newcomer@example.com')
      const { path, token } = await mailedLink('newcomer@example.com')
      const visitor = request.agent(app.app)
      const callbackUrl = new URL((await visitor.get(path).expect(302)).headers.location!).searchParams.get('callbackUrl')!
      const csrfToken = await fetchCsrfToken(visitor)
      await visitor.post('/api/auth/signin/nodemailer').type('form').send({ csrfToken, email: 'newcomer@example.com', callbackUrl }).expect(302)
      const signInLink = new URL(linkOf(await smtp.nextMessage()))
      const signedUp = await visitor.get(signInLink.pathname + signInLink.search).expect(302)
      expect(signedUp.headers.location).toBe(callbackUrl)
      await visitor.get(path).expect(200)
      expect((await post(visitor, '/organizations/invitation/accept', { token })).status).toBe(200)
      const newcomer = await app.adapter.getUserByEmail('newcomer@example.com')
      expect((await app.adapter.getMember(acme, newcomer!.id))?.roles).toEqual(['member'])
      expect((await me(visitor))?.user.activeOrganization).toEqual({ id: acme, roles: ['member'] })
      // Signed up by the link, the address is verified: the invitation is gone from their list.
      expect((await visitor.get('/api/auth/invitations').set('Accept', 'application/json')).body.invitations).toEqual([])
    })

    it("refuses a member without invitation: ['create'] (403), and only an owner invites an owner", async () => {
      const app = await appOf()
      const bob = await signedIn(app, 'bob')
      const refused = await invite(bob, acme, 'grace@example.com')
      expect(refused.status).toBe(403)
      expect(refused.body.code).toBe('forbidden')
      const ada = await signedIn(app, 'ada')
      const adapter = app.adapter
      await adapter.updateMemberRoles(acme, (await adapter.getUserByEmail('bob@example.com'))!.id, ['admin'], 'owner')
      expect((await invite(bob, acme, 'grace@example.com', ['owner'])).status).toBe(403)
      expect((await invite(ada, acme, 'grace@example.com', ['owner'])).status).toBe(201)
    })

    it("does not let a member of one organization list, cancel or resend another's invitations by id (404 not_found)", async () => {
      const app = await appOf()
      const hank = await signedIn(app, 'hank')
      const theirs = await invited(hank, globex, 'grace@example.com')
      const id = theirs.body.invitation.id as string
      const ada = await signedIn(app, 'ada')
      const answers = [
        await ada.get(`/api/auth/organizations/invitations?organizationId=${globex}`).set('Accept', 'application/json'),
        await post(ada, '/organizations/invitations/cancel', { invitationId: id }),
        await post(ada, '/organizations/invitations/resend', { invitationId: id }),
        await post(ada, '/organizations/invitations/cancel', { invitationId: 'no-such-id' }),
      ]
      for (const answer of answers) expect([answer.status, answer.body.code]).toEqual([404, 'not_found'])
      expect(answers[1]!.body.message).toBe(answers[3]!.body.message)
      expect((await app.adapter.getInvitation(id))?.status).toBe('pending')
      const listed = await hank.get(`/api/auth/organizations/invitations?organizationId=${globex}`).set('Accept', 'application/json').expect(200)
      expect(listed.body.invitations.map((invitation: { id: string }) => invitation.id)).toEqual([id])
      expect(JSON.stringify(listed.body)).not.toMatch(/tokenHash/)
    })

    it('accepts through the server-side acceptInvitation, its JWT cookie on the response', async () => {
      const app = await appOf('jwt')
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'grace@example.com')
      const { token } = await mailedLink('grace@example.com')
      const grace = await signedIn(app, 'grace')
      const csrfToken = await fetchCsrfToken(grace)
      const answer = await grace.post('/accept').send({ token, csrfToken }).expect(200)
      expect(answer.body).toMatchObject({ id: acme, roles: ['member'] })
      expect((await me(grace))?.user.activeOrganization).toEqual({ id: acme, roles: ['member'] })
    })

    it('counts pending invitations in membersPerOrganization, and checks organizationsPerUser before the token is used', async () => {
      // Acme has two members (ada, bob): room for two more, members or invitations.
      const app = await appOf('database', { membersPerOrganization: 4, organizationsPerUser: 1 })
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'grace@example.com')
      await invited(ada, acme, 'hank@example.com')
      smtp.skipReceived()
      const full = await invite(ada, acme, 'eve@example.com')
      expect([full.status, full.body.code]).toEqual([409, 'limit_reached'])
      // A refresh of a pending one adds nobody: allowed.
      await invited(ada, acme, 'hank@example.com')
      const { token } = await mailedLink('hank@example.com')
      // Hank owns Globex and may belong to one organization: refused, the token left for later.
      const hank = await signedIn(app, 'hank')
      const refused = await post(hank, '/organizations/invitation/accept', { token })
      expect([refused.status, refused.body.code]).toEqual([409, 'limit_reached'])
      expect((await app.adapter.listInvitations(acme)).map((invitation) => invitation.status)).toEqual(['pending', 'pending'])
    })

    it("escapes the organization's name on the accept page and in the mail", async () => {
      const app = await appOf()
      await app.adapter.updateOrganization(acme, { name: '<img src=x onerror=alert(1)>' })
      const ada = await signedIn(app, 'ada')
      await invited(ada, acme, 'grace@example.com')
      const mail = await smtp.nextMessage()
      expect(String(mail.parsed.html)).not.toContain('<img src=x')
      const url = new URL(linkOf(mail))
      const grace = await signedIn(app, 'grace')
      const page = await grace.get(url.pathname + url.search).expect(200)
      expect(page.text).not.toContain('<img src=x')
      expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;')
    })

    it('warns at init when invitations cannot be mailed', () => {
      const logger = recordingLogger()
      Portcullis({ secret: SECRET, logger, adapter: KnexAdapter(db.knex), organizations: true, providers: [] })
      expect(logger.codes('warn')).toContain('OrganizationMailNotConfigured')
    })

    it('the adapter settles an invitation once: a compare-and-set on its status', async () => {
      const adapter = KnexAdapter(db.knex)
      const created = await adapter.createInvitation({ organizationId: acme, email: 'grace@example.com', roles: ['member', 'admin'], teamId: null, tokenHash: 'a'.repeat(64), inviterId: null, expiresAt: new Date(Date.now() + 60_000), sentAt: new Date() })
      expect(await adapter.getInvitationByTokenHash('a'.repeat(64))).toMatchObject({ id: created.id, roles: ['member', 'admin'], status: 'pending' })
      expect((await adapter.listInvitationsForEmail('grace@example.com')).map((invitation) => invitation.id)).toEqual([created.id])
      const results = await Promise.all([adapter.settleInvitation(created.id, 'accepted', { expect: 'pending' }), adapter.settleInvitation(created.id, 'declined', { expect: 'pending' })])
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await adapter.updateInvitationToken(created.id, 'b'.repeat(64), new Date(), new Date())).toBe(false)
      expect(await adapter.listInvitations(acme)).toEqual([])
      expect(await adapter.listInvitationsForEmail('grace@example.com')).toEqual([])
      // Dates round-trip exactly (MariaDB stores UTC text).
      const expiresAt = new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 678))
      const other = await adapter.createInvitation({ organizationId: acme, email: 'eve@example.com', roles: ['member'], teamId: null, tokenHash: 'c'.repeat(64), inviterId: null, expiresAt, sentAt: expiresAt })
      expect((await adapter.getInvitation(other.id))?.expiresAt.toISOString()).toBe(expiresAt.toISOString())
    })
  })
}
