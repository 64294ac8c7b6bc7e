/**
 * The admin API (`admin` option, on the roles option): listUsers (search by id, address or name,
 * paged, with each user's ways in, sessions, roles and second factor), getUserDetails, setUserRoles
 * and revokeUserSessions, over real HTTP with real sessions. Every function refuses a user without
 * the permission and a visitor; the changes are CSRF-checked; nobody changes their own roles.
 * SQLite, PostgreSQL, MariaDB, database sessions.
 */
import { expect, it } from '@jest/globals'
import express from 'express'
import Portcullis, { adminStatements, defineAccess, type PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { recordingLogger } from '../support/logger.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, csrfOf, GOOD_PASSWORD, mountPasswordApp, signIn, verifiedUser } from '../password/password-app.js'

const rig = useEmailRig()
const access = defineAccess({ statements: { ...adminStatements, post: ['create'] }, roles: { support: { user: ['list'] } } })

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `the admin API on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url

    /** The app, with a JSON route per admin function (its AdminError as 403 { code }). */
    const mount = (extra: Partial<PortcullisConfig> = {}) => {
      const auth = mountPasswordApp(rig.app, db.knex, rig.smtp, { roles: access, admin: true, apiKeys: { rateLimit: false, cacheSeconds: 60 }, rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } }, ...extra })
      const answer = (run: (req: express.Request) => Promise<unknown>) => async (req: express.Request, res: express.Response) => {
        try {
          res.json({ done: (await run(req)) ?? null })
        } catch (error) {
          res.status(403).json({ type: (error as { type?: string }).type, code: (error as { code?: string }).code })
        }
      }
      // As an app mounts it: every request goes through auth (req.auth set, the request known to what it emits).
      auth.app.use(auth.auth)
      auth.app.use(express.urlencoded({ extended: false }))
      auth.app.get('/admin/users', answer((req) => auth.listUsers(req, { search: req.query.q as string | undefined, limit: Number(req.query.limit ?? 50), offset: Number(req.query.offset ?? 0) })))
      auth.app.get('/admin/users/:id', answer((req) => auth.getUserDetails(req, String(req.params.id))))
      auth.app.get('/admin/users/:id/sessions', answer((req) => auth.listUserSessions(req, String(req.params.id))))
      auth.app.post('/admin/users/:id/roles', answer((req) => auth.setUserRoles(req, String(req.params.id), req.body.role ? [req.body.role] : null, { csrfToken: req.body.csrfToken })))
      auth.app.post('/admin/users/:id/sign-out', answer((req) => auth.revokeUserSessions(req, String(req.params.id), { csrfToken: req.body.csrfToken })))
      auth.app.post('/admin/users/:id/ban', answer((req) => auth.banUser(req, String(req.params.id), { reason: req.body.reason, ...(req.body.expiresIn && { expiresIn: Number(req.body.expiresIn) }), csrfToken: req.body.csrfToken })))
      auth.app.post('/admin/users/:id/unban', answer((req) => auth.unbanUser(req, String(req.params.id), { csrfToken: req.body.csrfToken })))
      auth.app.get('/api/me', auth.requireScopes(), (req, res) => void res.json({ user: (req as { auth?: { user?: unknown } }).auth?.user }))
      return auth
    }
    const idOf = async (email: string) => ((await db.knex('User').where({ email }).first('id')) as { id: string }).id
    const json = async (browser: Browser, path: string, body?: Record<string, string>) => {
      const response = await browser.request(`${url()}${path}`, body ? { body: new URLSearchParams(body) } : {})
      return { status: response.status, body: (await response.json()) as { done?: unknown; code?: string; type?: string } }
    }
    /** Three users (root an administrator, each signed in in their own browser). */
    const people = async (auth: ReturnType<typeof mount>, tag: string) => {
      const root = new Browser()
      await verifiedUser(root, url(), rig.smtp, `root.${tag}@example.com`)
      const ada = new Browser()
      await verifiedUser(ada, url(), rig.smtp, `ada.${tag}@example.com`)
      const bob = new Browser()
      await verifiedUser(bob, url(), rig.smtp, `bob_${tag}@example.com`)
      await auth.setRoles(await idOf(`root.${tag}@example.com`), ['admin'])
      return { root, ada, bob }
    }

    it('is refused at init without the roles option, or with statements lacking the admin actions', () => {
      const base = { secret: 'a'.repeat(32), providers: [], adapter: KnexAdapter(db.knex), admin: true, logger: recordingLogger() }
      expect(() => Portcullis(base)).toThrow(/needs the roles option/)
      expect(() => Portcullis({ ...base, roles: defineAccess({ statements: { user: ['list'] } }) })).toThrow(/'set-role', 'revoke-sessions'/)
    })

    it('refuses every function to a user without the permission and to a visitor, and changes nothing', async () => {
      const auth = mount()
      const { ada } = await people(auth, 'refused')
      const bobId = await idOf('bob_refused@example.com')
      const token = await csrfOf(ada, url())
      for (const [path, body] of [
        ['/admin/users', undefined],
        [`/admin/users/${bobId}`, undefined],
        [`/admin/users/${bobId}/roles`, { role: 'admin', csrfToken: token }],
        [`/admin/users/${bobId}/sign-out`, { csrfToken: token }],
      ] as const) {
        expect(await json(ada, path, body)).toEqual({ status: 403, body: { type: 'Admin', code: 'forbidden' } })
        const visitor = new Browser()
        expect(await json(visitor, path, body && { ...body, csrfToken: await csrfOf(visitor, url()) })).toEqual({ status: 403, body: { type: 'Admin', code: 'not_signed_in' } })
      }
      // Ada cannot raise her own role either.
      expect((await json(ada, `/admin/users/${await idOf('ada.refused@example.com')}/roles`, { role: 'admin', csrfToken: token })).body.code).toBe('forbidden')
      expect(await auth.getRoles(await idOf('ada.refused@example.com'))).toEqual(['user'])
      expect(await auth.getRoles(bobId)).toEqual(['user'])
    })

    it('lists and searches users by part of an address or a name and by id, paged, with their ways in, sessions and roles', async () => {
      const auth = mount()
      const { root } = await people(auth, 'list')
      const bobId = await idOf('bob_list@example.com')
      const list = async (query: Record<string, string>) => (await json(root, `/admin/users?${new URLSearchParams(query)}`)).body.done as { users: { id: string; email: string; signInMethods: string[]; sessions: number; roles: string[]; twoFactor: boolean }[]; total: number }

      const found = await list({ q: '.LIST@example' })
      expect(found.users.map((user) => user.email)).toEqual(['ada.list@example.com', 'root.list@example.com'])
      expect(found.total).toBe(2)
      expect(found.users[1]).toMatchObject({ roles: ['admin'], signInMethods: ['password'], sessions: 1, twoFactor: false })
      // LIKE's wildcards are the characters themselves: `_` matches only bob_list.
      expect((await list({ q: '_list' })).users.map((user) => user.email)).toEqual(['bob_list@example.com'])
      expect((await list({ q: '%' })).total).toBe(0)
      expect((await list({ q: bobId })).users.map((user) => user.id)).toEqual([bobId])
      const first = await list({ q: 'list@', limit: '2' })
      const second = await list({ q: 'list@', limit: '2', offset: '2' })
      expect([first.total, second.total]).toEqual([3, 3])
      expect([...first.users, ...second.users].map((user) => user.email)).toEqual(['ada.list@example.com', 'bob_list@example.com', 'root.list@example.com'])

      expect((await json(root, `/admin/users/${bobId}`)).body.done).toMatchObject({ id: bobId, email: 'bob_list@example.com', sessions: 1, signInMethods: ['password'] })
      expect((await json(root, '/admin/users/no-such-user')).body).toEqual({ done: null })
    })

    it('sets another user’s roles (CSRF-checked, reaching their session at once), never one’s own; the audit log names who did it', async () => {
      const auth = mount({ audit: true, prune: { everyMinutes: 60, signal: AbortSignal.abort() } })
      const { root, ada } = await people(auth, 'roles')
      const adaId = await idOf('ada.roles@example.com')
      const rootId = await idOf('root.roles@example.com')
      expect((await json(root, `/admin/users/${adaId}/roles`, { role: 'support' })).body.type).toBe('MissingCSRF')
      expect(await auth.getRoles(adaId)).toEqual(['user'])
      expect((await json(root, `/admin/users/${rootId}/roles`, { role: 'user', csrfToken: await csrfOf(root, url()) })).body.code).toBe('own_roles')
      expect(await auth.getRoles(rootId)).toEqual(['admin'])

      expect((await json(root, `/admin/users/${adaId}/roles`, { role: 'support', csrfToken: await csrfOf(root, url()) })).body.done).toMatchObject({ found: true, changed: true })
      // Her session (database) carries the new role at once: she may list users now.
      expect((await json(ada, '/admin/users')).status).toBe(200)
      expect((await json(ada, `/admin/users/${rootId}/sign-out`, { csrfToken: await csrfOf(ada, url()) })).body.code).toBe('forbidden')
      expect((await json(root, '/admin/users/nobody/roles', { role: 'support', csrfToken: await csrfOf(root, url()) })).body.code).toBe('not_found')
      let change: Record<string, unknown> | undefined
      for (let tries = 0; tries < 200 && !change; tries++) {
        change = (await db.knex('AuditEvent').where({ type: 'role-changed', userId: adaId }).first()) as Record<string, unknown> | undefined
        if (!change) await new Promise((resolve) => setTimeout(resolve, 10))
      }
      expect(change).toMatchObject({ userId: adaId, actorId: rootId, outcome: 'success' })
      expect(JSON.parse(String(change!.details))).toEqual({ roles: 'support', previous: '' })
    })

    it('bans a user: sessions ended, a password sign-in and an API key refused by name, an expired ban lifting itself; unban lets them in', async () => {
      const auth = mount({ audit: true, prune: { everyMinutes: 60, signal: AbortSignal.abort() } })
      const { root, bob } = await people(auth, 'ban')
      const bobId = await idOf('bob_ban@example.com')
      const rootId = await idOf('root.ban@example.com')
      const created = await bob.request(`${url()}/api/auth/api-keys`, { body: new URLSearchParams({ csrfToken: await csrfOf(bob, url()), name: 'ci' }), headers: { accept: 'application/json' } })
      const { key } = (await created.json()) as { key: string }
      const withKey = () => fetch(`${url()}/api/me`, { headers: { authorization: `Bearer ${key}` } })
      expect((await withKey()).status).toBe(200)
      const session = async (browser: Browser) => ((await (await browser.request(`${url()}/api/auth/session`)).json()) as { user?: { email?: string } } | null)?.user?.email

      expect((await json(root, `/admin/users/${bobId}/ban`, { reason: 'spam' })).body.type).toBe('MissingCSRF')
      expect((await json(bob, `/admin/users/${rootId}/ban`, { csrfToken: await csrfOf(bob, url()) })).body.code).toBe('forbidden')
      expect((await json(root, `/admin/users/${rootId}/ban`, { csrfToken: await csrfOf(root, url()) })).body.code).toBe('own_roles')
      expect((await json(root, `/admin/users/${bobId}/ban`, { reason: 'spam', csrfToken: await csrfOf(root, url()) })).status).toBe(200)

      expect(await session(bob)).toBeUndefined()
      const refused = await signIn(new Browser(), url(), 'bob_ban@example.com', GOOD_PASSWORD)
      expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('UserBanned')
      expect(refused.headers.get('set-cookie') ?? '').not.toContain('authjs.session-token=')
      const keyAnswer = await withKey()
      expect(keyAnswer.status).toBe(401)
      expect(keyAnswer.headers.get('www-authenticate')).toContain('banned')
      expect((await json(root, `/admin/users/${bobId}`)).body.done).toMatchObject({ ban: { reason: 'spam', expiresAt: null } })

      // Lifted: the same password signs in again, and the key works again.
      expect((await json(root, `/admin/users/${bobId}/unban`, { csrfToken: await csrfOf(root, url()) })).body).toEqual({ done: true })
      expect(new URL((await signIn(new Browser(), url(), 'bob_ban@example.com', GOOD_PASSWORD)).headers.get('location')!).searchParams.get('error')).toBeNull()
      expect((await withKey()).status).toBe(200)

      // A ban that has expired lifts itself.
      await db.knex('User').where({ id: bobId }).update({ bannedAt: new Date(Date.now() - 7_200_000), banExpiresAt: new Date(Date.now() - 3_600_000), banReason: 'old' })
      expect(new URL((await signIn(new Browser(), url(), 'bob_ban@example.com', GOOD_PASSWORD)).headers.get('location')!).searchParams.get('error')).toBeNull()
      expect((await json(root, `/admin/users/${bobId}`)).body.done).toMatchObject({ ban: null })
    })

    it('signs a user out everywhere (CSRF-checked), their other browsers too', async () => {
      const auth = mount()
      const { root, bob } = await people(auth, 'out')
      const bobId = await idOf('bob_out@example.com')
      const session = async (browser: Browser) => ((await (await browser.request(`${url()}/api/auth/session`)).json()) as { user?: { email?: string } } | null)?.user?.email
      expect(await session(bob)).toBe('bob_out@example.com')
      // Listed first: when and from where, none of them the administrator's "current" one; bob may not list them.
      const listed = (await json(root, `/admin/users/${bobId}/sessions`)).body.done as { id: string; current: boolean; userAgent: string | null }[]
      expect(listed.length).toBeGreaterThanOrEqual(1)
      expect(listed.every((entry) => entry.current === false && typeof entry.id === 'string')).toBe(true)
      expect((await json(bob, `/admin/users/${bobId}/sessions`)).body).toMatchObject({ code: 'forbidden' })
      expect((await json(root, `/admin/users/${bobId}/sign-out`, {})).body.type).toBe('MissingCSRF')
      expect(await session(bob)).toBe('bob_out@example.com')
      expect((await json(root, `/admin/users/${bobId}/sign-out`, { csrfToken: await csrfOf(root, url()) })).body).toEqual({ done: 1 })
      expect(await session(bob)).toBeUndefined()
      expect((await json(root, `/admin/users/${bobId}/sessions`)).body).toEqual({ done: [] })
      expect(await session(root)).toBe('root.out@example.com')
    })
  })
}
