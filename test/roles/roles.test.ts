/**
 * Roles and permissions end to end, on SQLite, PostgreSQL and MariaDB, with database sessions and
 * with JWT sessions (with a session store, and without): the roles stored on the users table and
 * carried in the session, `requirePermission`'s 401 and 403 over HTTP, `hasPermission`, a role
 * change reaching the user's sessions, and a session's roles that no client update can forge.
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import Portcullis, { defineAccess, type JWT, type PortcullisConfig, type Session } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import type { Knex } from 'knex'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { fetchCsrfToken, SECRET, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

const access = defineAccess({
  statements: { post: ['create', 'delete'], user: ['ban'] },
  roles: { editor: { post: ['create'] } },
})

type Strategy = 'database' | 'jwt+store' | 'jwt'

/** An app on `knex` whose user `ada` signs in with credentials, with the checks mounted on routes. */
function rolesApp(knex: Knex, strategy: Strategy, config: Partial<PortcullisConfig> = {}) {
  const adapter = KnexAdapter(knex)
  const events: { name: string; message: unknown }[] = []
  const portcullis = Portcullis({
    secret: SECRET,
    logger: recordingLogger(),
    adapter,
    roles: access,
    session: strategy === 'database' ? { strategy: 'database' } : strategy === 'jwt+store' ? { strategy: 'jwt', store: 'memory' } : { strategy: 'jwt' },
    providers: [
      Credentials({
        credentials: { username: {}, password: { type: 'password' } },
        authorize: async ({ username, password }) => (password === 'lovelace' ? await adapter.getUserByEmail(`${String(username)}@example.com`) : null),
      }),
    ],
    events: {
      roleChanged: (message) => void events.push({ name: 'roleChanged', message }),
      sessionRevoked: (message) => void events.push({ name: 'sessionRevoked', message }),
    },
    ...config,
  })
  const app = express()
  app.use('/api/auth', portcullis.handlers)
  app.get('/me', async (req, res) => res.json(await portcullis.auth(req, res)))
  app.post('/posts', portcullis.requirePermission({ post: ['create'] }), (_req, res) => res.status(201).json({ created: true }))
  app.delete('/posts/1', portcullis.requirePermission({ post: ['delete'] }), (_req, res) => res.status(204).end())
  app.get('/can-ban', async (req, res) => res.json({ can: await portcullis.hasPermission(req, { user: ['ban'] }) }))
  return { ...portcullis, app, adapter, events }
}

async function createAda(knex: Knex): Promise<string> {
  return (await KnexAdapter(knex).createUser({ name: 'Ada', email: 'ada@example.com', emailVerified: null, image: null })).id
}

const me = async (agent: request.Agent): Promise<Session | null> => (await agent.get('/me').expect(200)).body as Session | null

const deletePost = (agent: request.Agent) => agent.delete('/posts/1').set('Accept', 'application/json')

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `roles on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    describe('the adapter', () => {
      it('stores a user\'s roles in the users table, comma-separated, and reads them back; none stored is null', async () => {
        const id = await createAda(db.knex)
        const adapter = KnexAdapter(db.knex)
        expect(await adapter.getUserRoles(id)).toBeNull()
        expect(await adapter.setUserRoles(id, ['editor', 'admin'])).toBe(true)
        expect(await adapter.getUserRoles(id)).toEqual(['editor', 'admin'])
        expect((await db.knex('User').select('roles').where({ id }).first()).roles).toBe('editor,admin')
        expect(await adapter.setUserRoles(id, null)).toBe(true)
        expect(await adapter.getUserRoles(id)).toBeNull()
        expect(await adapter.setUserRoles('no-such-user', ['admin'])).toBe(false)
        expect(await adapter.getUserRoles('no-such-user')).toBeNull()
        // The user the adapter returns elsewhere carries no roles: only the session join asks for them.
        expect(await adapter.getUser(id)).not.toHaveProperty('roles')
      })
    })

    for (const strategy of ['database', 'jwt+store'] as Strategy[]) {
      describe(`${strategy} sessions`, () => {
        it('carries the default role in the session; requirePermission answers 401 signed out, 403 without the permission', async () => {
          await createAda(db.knex)
          const { app } = rolesApp(db.knex, strategy)
          const agent = request.agent(app)
          const signedOut = await deletePost(agent)
          expect(signedOut.status).toBe(401)
          expect(signedOut.body).toMatchObject({ error: 'SessionRequired' })
          // A browser goes to the sign-in page, coming back here.
          const browser = await agent.delete('/posts/1').set('Accept', 'text/html')
          expect(browser.status).toBe(302)
          expect(new URL(browser.headers.location!).searchParams.get('callbackUrl')).toContain('/posts/1')

          await signInWithPassword(agent, { username: 'ada', password: 'lovelace' })
          expect((await me(agent))?.user.roles).toEqual(['user'])
          const forbidden = await deletePost(agent)
          expect(forbidden.status).toBe(403)
          expect(forbidden.body).toEqual({ error: 'Forbidden', message: 'You do not have permission to do this.' })
          expect((await agent.delete('/posts/1').set('Accept', 'text/html')).status).toBe(403)
          expect((await agent.get('/can-ban').expect(200)).body).toEqual({ can: false })
        })

        it('a role given and a role taken away reach the signed-in session', async () => {
          const id = await createAda(db.knex)
          const { app, setRoles, events } = rolesApp(db.knex, strategy)
          const agent = request.agent(app)
          await signInWithPassword(agent, { username: 'ada', password: 'lovelace' })
          expect((await deletePost(agent)).status).toBe(403)

          const given = await setRoles(id, ['admin'])
          expect(given).toMatchObject({ found: true, changed: true })
          expect(events.find((event) => event.name === 'roleChanged')?.message).toEqual({ userId: id, roles: ['admin'], previous: null })
          if (strategy === 'database') {
            // At once: the session's join reads the column.
            expect((await me(agent))?.user.roles).toEqual(['admin'])
          } else {
            // The JWT sessions ended through the store: the user signs in again, and the new token carries the role.
            expect(given.sessionsEnded).toBe(1)
            expect(events.find((event) => event.name === 'sessionRevoked')?.message).toMatchObject({ userId: id, by: 'rolesChanged' })
            expect(await me(agent)).toBeNull()
            await signInWithPassword(agent, { username: 'ada', password: 'lovelace' })
          }
          expect((await deletePost(agent)).status).toBe(204)
          expect((await agent.get('/can-ban').expect(200)).body).toEqual({ can: true })

          // Taken away: refused at once (database), or the session ended (JWT with a store).
          await setRoles(id, ['editor'])
          const after = await deletePost(agent)
          expect(after.status).toBe(strategy === 'database' ? 403 : 401)
          if (strategy !== 'database') await signInWithPassword(agent, { username: 'ada', password: 'lovelace' })
          expect((await me(agent))?.user.roles).toEqual(['editor'])
          expect((await agent.post('/posts').set('Accept', 'application/json')).status).toBe(201)
          expect((await deletePost(agent)).status).toBe(403)
        })

        it('a client update cannot forge the roles, even through callbacks that copy what it sends', async () => {
          const id = await createAda(db.knex)
          const forgingCallbacks: PortcullisConfig['callbacks'] = {
            // The careless pattern: the client's update() data copied into the token and the session.
            jwt: ({ token, trigger, session }) => (trigger === 'update' ? ({ ...token, ...(session as JWT) } as JWT) : token),
            session: ({ session, newSession }) => ({ ...session, user: { ...session.user, ...((newSession as { user?: object } | undefined)?.user ?? {}), ...((newSession as object) ?? {}) } }) as Session,
          }
          const { app, setRoles } = rolesApp(db.knex, strategy, { callbacks: forgingCallbacks })
          const agent = request.agent(app)
          await signInWithPassword(agent, { username: 'ada', password: 'lovelace' })
          const csrfToken = await fetchCsrfToken(agent)
          const updated = await agent.post('/api/auth/session').set('Accept', 'application/json').send({ csrfToken, data: { roles: ['admin'], user: { roles: ['admin'] } } })
          expect(updated.status).toBe(200)
          expect((updated.body as Session).user.roles).toEqual(['user'])
          expect((await me(agent))?.user.roles).toEqual(['user'])
          expect((await deletePost(agent)).status).toBe(403)
          // Nothing was written either.
          expect(await KnexAdapter(db.knex).getUserRoles(id)).toBeNull()
          expect((await setRoles(id, ['user'])).changed).toBe(true)
        })
      })
    }

    describe('JWT sessions without a store', () => {
      it('keep the roles of their token until it is re-issued by a sign-in (as the docs say)', async () => {
        const id = await createAda(db.knex)
        const { app, setRoles } = rolesApp(db.knex, 'jwt')
        const agent = request.agent(app)
        await KnexAdapter(db.knex).setUserRoles(id, ['admin'])
        await signInWithPassword(agent, { username: 'ada', password: 'lovelace' })
        expect((await deletePost(agent)).status).toBe(204)
        expect((await setRoles(id, ['user'])).sessionsEnded).toBe(0)
        // Nothing on the server reaches the cookie: the old role stands in it.
        expect((await deletePost(agent)).status).toBe(204)
        await signInWithPassword(agent, { username: 'ada', password: 'lovelace' })
        expect((await deletePost(agent)).status).toBe(403)
      })
    })
  })
}

describe('setRoles', () => {
  const { setRoles } = Portcullis({
    secret: SECRET,
    logger: recordingLogger(),
    providers: [],
    roles: access,
    session: { strategy: 'jwt' },
    adapter: { getUserRoles: async () => null, setUserRoles: async () => true },
  })

  it('refuses a role the definition does not have, and a user id that is none', async () => {
    await expect(setRoles('u1', ['root' as 'admin'])).rejects.toThrow('"root" is not a defined role (admin, user, editor).')
    await expect(setRoles('', ['admin'])).rejects.toThrow(TypeError)
  })

  it('an unchanged set changes nothing and ends no session', async () => {
    expect(await setRoles('u1', [])).toEqual({ found: true, changed: false, sessionsEnded: 0 })
  })
})
