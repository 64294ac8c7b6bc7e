/**
 * Impersonation: an administrator signs in as a user for a limited time and back, over real HTTP
 * with real sessions (database, JWT with a store) on SQLite, PostgreSQL and MariaDB. The
 * session carries who impersonates (req.auth, the session route), ends on time (the clock moved, no
 * extension), cannot touch the user's credentials, is refused for administrators, banned users and
 * a forged post, and the audit log names the administrator.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import express from 'express'
import { adminStatements, defineAccess, type PortcullisConfig } from 'portcullis'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, csrfOf, GOOD_PASSWORD, mountPasswordApp, post, verifiedUser } from '../password/password-app.js'

const rig = useEmailRig()
const access = defineAccess({ statements: { ...adminStatements }, roles: { support: { user: ['list', 'impersonate'] } } })
// JWT sessions without a store are refused at init with the password provider (a reset ends sessions).
const strategies = { database: { strategy: 'database' }, 'jwt+store': { strategy: 'jwt', store: 'memory' } } as const

afterEach(() => {
  jest.useRealTimers()
})

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `impersonation on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url

    const mount = (strategy: keyof typeof strategies, extra: Partial<PortcullisConfig> = {}) => {
      const auth = mountPasswordApp(rig.app, db.knex, rig.smtp, {
        roles: access,
        admin: true,
        account: true,
        audit: true,
        prune: { everyMinutes: 60, signal: AbortSignal.abort() },
        twoFactor: { issuer: 'Example' },
        session: strategies[strategy],
        rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
        ...extra,
      } as Partial<PortcullisConfig>)
      const answer = (run: (req: express.Request, res: express.Response) => Promise<unknown>) => async (req: express.Request, res: express.Response) => {
        try {
          res.json({ done: (await run(req, res)) ?? null })
        } catch (error) {
          res.status(403).json({ type: (error as { type?: string }).type, code: (error as { code?: string }).code })
        }
      }
      auth.app.use(auth.auth)
      auth.app.use(express.urlencoded({ extended: false }))
      const csrf = (req: express.Request) => ({ csrfToken: req.body.csrfToken as string | undefined })
      auth.app.get('/whoami', (req, res) => void res.json(req.auth ?? null))
      auth.app.post('/admin/impersonate/:id', answer((req, res) => auth.impersonateUser({ req, res }, String(req.params.id), csrf(req))))
      auth.app.post('/admin/stop', answer((req, res) => auth.stopImpersonating({ req, res }, csrf(req))))
      auth.app.post('/admin/ban/:id', answer((req) => auth.banUser(req, String(req.params.id), csrf(req))))
      auth.app.post('/me/password', answer((req) => auth.changePassword(req, { currentPassword: 'x', newPassword: 'another long passphrase', ...csrf(req) })))
      auth.app.post('/me/totp/enroll', answer((req) => auth.enrollTotp(req)))
      return auth
    }
    const idOf = async (email: string) => ((await db.knex('User').where({ email }).first('id')) as { id: string } | undefined)?.id
    const json = async (browser: Browser, path: string, body?: Record<string, string>) => {
      const response = await browser.request(`${url()}${path}`, body ? { body: new URLSearchParams(body) } : {})
      return { status: response.status, body: (await response.json()) as { done?: unknown; code?: string; type?: string } & Record<string, unknown> }
    }
    const withCsrf = async (browser: Browser) => ({ csrfToken: await csrfOf(browser, url()) })
    const whoami = async (browser: Browser) => (await (await browser.request(`${url()}/whoami`)).json()) as { user?: { id?: string; email?: string }; impersonatedBy?: string } | null
    const people = async (auth: ReturnType<typeof mount>, tag: string) => {
      const [root, ada, bob] = [new Browser(), new Browser(), new Browser()]
      await verifiedUser(root, url(), rig.smtp, `root.${tag}@example.com`)
      await verifiedUser(ada, url(), rig.smtp, `ada.${tag}@example.com`)
      await verifiedUser(bob, url(), rig.smtp, `bob.${tag}@example.com`)
      const rootId = (await idOf(`root.${tag}@example.com`))!
      await auth.setRoles(rootId, ['admin'])
      await auth.setRoles((await idOf(`ada.${tag}@example.com`))!, ['support'])
      return { root, ada, bob, rootId, bobId: (await idOf(`bob.${tag}@example.com`))! }
    }

    for (const strategy of Object.keys(strategies) as (keyof typeof strategies)[]) {
      it(`signs an administrator in as a user and back, the session carrying who (${strategy} sessions)`, async () => {
        const auth = mount(strategy)
        const tag = `flow-${strategy.replace('+', '-')}`
        const { root, rootId, bobId } = await people(auth, tag)
        // setRoles ended root's JWT sessions with a store, or left the old roles in a plain JWT: sign in again.
        await post(root, url(), 'callback/password', { email: `root.${tag}@example.com`, password: GOOD_PASSWORD })
        expect((await whoami(root))?.user?.id).toBe(rootId)

        const started = await json(root, `/admin/impersonate/${bobId}`, await withCsrf(root))
        expect(started.status).toBe(200)
        const expires = new Date((started.body.done as { expires: string }).expires).getTime()
        expect(expires).toBeGreaterThan(Date.now() + 3590_000)
        expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000)
        expect(await whoami(root)).toMatchObject({ user: { id: bobId }, impersonatedBy: rootId })
        const session = (await (await root.request(`${url()}/api/auth/session`)).json()) as { impersonatedBy?: string; expires: string }
        expect(session.impersonatedBy).toBe(rootId)
        expect(new Date(session.expires).getTime()).toBeLessThanOrEqual(expires)
        // The built-in pages say so, with the way out.
        const page = await (await root.request(`${url()}/api/auth/account`)).text()
        expect(page).toContain('by impersonation')
        expect(page).toContain('/api/auth/admin/impersonation')

        // An impersonation is no administrator: it cannot impersonate or ban, even as an admin.
        expect((await json(root, `/admin/ban/${rootId}`, await withCsrf(root))).body).toMatchObject({ code: 'forbidden' })

        const stopped = await json(root, '/admin/stop', await withCsrf(root))
        expect(stopped.body).toEqual({ done: { userId: bobId } })
        expect(await whoami(root)).toMatchObject({ user: { id: rootId } })
        expect((await whoami(root))?.impersonatedBy).toBeUndefined()
        expect((await json(root, '/admin/stop', await withCsrf(root))).body).toMatchObject({ code: 'not_impersonating' })

        // The audit log: started and stopped, about bob, by root.
        await new Promise((resolve) => setTimeout(resolve, 300))
        const rows = (await db.knex('AuditEvent').where({ userId: bobId }).whereIn('type', ['impersonation-started', 'impersonation-stopped']).orderBy('at')) as { type: string; actorId: string }[]
        expect(rows.map((row) => [row.type, row.actorId])).toEqual([
          ['impersonation-started', rootId],
          ['impersonation-stopped', rootId],
        ])
      })
    }

    it('ends an impersonation on time, never extended (database sessions)', async () => {
      const auth = mount('database')
      const { root, rootId, bobId } = await people(auth, 'time-db')
      expect((await json(root, `/admin/impersonate/${bobId}`, await withCsrf(root))).status).toBe(200)
      const row = (await db.knex('Session').where({ userId: bobId }).whereNotNull('impersonatedBy').first()) as { impersonatedBy: string; expires: unknown }
      expect(row.impersonatedBy).toBe(rootId)
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask'] })
      // The row would be due for extension at once (it ends long before maxAge): it is not extended.
      jest.setSystemTime(Date.now() + 3_000_000)
      expect((await whoami(root))?.user?.id).toBe(bobId)
      const after = (await db.knex('Session').where({ userId: bobId }).whereNotNull('impersonatedBy').first()) as { expires: unknown }
      expect(new Date(after.expires as string).getTime()).toBe(new Date(row.expires as string).getTime())
      jest.setSystemTime(Date.now() + 700_000)
      expect(await whoami(root)).toBeNull()
    })

    it('ends an impersonation on time, never extended (JWT sessions)', async () => {
      const auth = mount('jwt+store')
      const { root, bobId } = await people(auth, 'time-jwt')
      await post(root, url(), 'callback/password', { email: 'root.time-jwt@example.com', password: GOOD_PASSWORD })
      expect((await json(root, `/admin/impersonate/${bobId}`, await withCsrf(root))).status).toBe(200)
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask'] })
      // Past updateAge (a day by default is longer; the re-issue of a read never outlives the hour).
      jest.setSystemTime(Date.now() + 3_000_000)
      expect((await whoami(root))?.user?.id).toBe(bobId)
      jest.setSystemTime(Date.now() + 700_000)
      expect(await whoami(root)).toBeNull()
    })

    it('refuses every change of the user’s credentials in an impersonation', async () => {
      const auth = mount('database')
      const { root, bobId } = await people(auth, 'creds')
      expect((await json(root, `/admin/impersonate/${bobId}`, await withCsrf(root))).status).toBe(200)
      // Server-side functions.
      expect((await json(root, '/me/password', await withCsrf(root))).body).toMatchObject({ type: 'Impersonating' })
      expect((await json(root, '/me/totp/enroll', await withCsrf(root))).body).toMatchObject({ type: 'Impersonating' })
      // The built-in routes: password, address, deletion, second factor, passkeys.
      for (const [path, fields] of [
        ['change-password', { currentPassword: 'x', newPassword: 'another long passphrase' }],
        ['account/email', { email: 'taken.over@example.com' }],
        ['account/delete', { confirm: 'yes' }],
      ] as const) {
        const answer = await post(root, url(), path, fields)
        expect([answer.status, answer.headers.get('location') ?? '']).toEqual([302, expect.stringContaining('error=Impersonating')])
      }
      const setup = await root.request(`${url()}/api/auth/two-factor/setup`)
      expect(setup.headers.get('location') ?? '').toContain('error=Impersonating')
      expect(await idOf('bob.creds@example.com')).toBe(bobId)
    })

    it('refuses a user without the permission, a forged post, oneself, a banned user and an administrator', async () => {
      const auth = mount('database')
      const { root, ada, bob, rootId, bobId } = await people(auth, 'refused')
      const adaId = (await idOf('ada.refused@example.com'))!
      expect((await json(bob, `/admin/impersonate/${adaId}`, await withCsrf(bob))).body).toMatchObject({ code: 'forbidden' })
      expect((await json(root, `/admin/impersonate/${bobId}`, {})).body).toMatchObject({ type: 'MissingCSRF' })
      expect((await json(root, `/admin/impersonate/${rootId}`, await withCsrf(root))).body).toMatchObject({ code: 'own_roles' })
      expect((await json(root, `/admin/impersonate/nobody`, await withCsrf(root))).body).toMatchObject({ code: 'not_found' })
      // ada (support, who may impersonate) cannot impersonate root, an administrator, nor another support user.
      expect((await json(ada, `/admin/impersonate/${rootId}`, await withCsrf(ada))).body).toMatchObject({ code: 'impersonate_admin' })
      expect((await json(root, `/admin/impersonate/${adaId}`, await withCsrf(root))).body).toMatchObject({ code: 'impersonate_admin' })
      expect((await json(root, `/admin/ban/${bobId}`, await withCsrf(root))).status).toBe(200)
      expect((await json(ada, `/admin/impersonate/${bobId}`, await withCsrf(ada))).body).toMatchObject({ code: 'banned' })
      expect(await whoami(ada)).toMatchObject({ user: { id: adaId } })
      expect((await whoami(ada))?.impersonatedBy).toBeUndefined()
    })

    it('works from the built-in routes: the form starts it, the page stops it; refused without the permission or the CSRF token', async () => {
      const auth = mount('database')
      const { root, bob, rootId, bobId } = await people(auth, 'routes')
      // Bob may not; a visitor may not; a post without the token changes nothing.
      const refused = await post(bob, url(), 'admin/user/impersonate', { id: rootId })
      expect(refused.status).toBe(403)
      expect(await refused.text()).toContain('Access denied')
      const visitor = await post(new Browser(), url(), 'admin/user/impersonate', { id: bobId })
      // A script's post (no Accept: text/html): 401, as requirePermission answers.
      expect(visitor.status).toBe(401)
      const forged = await root.request(`${url()}/api/auth/admin/user/impersonate`, { body: new URLSearchParams({ id: bobId }) })
      expect(forged.status).toBeGreaterThanOrEqual(300)
      expect(await whoami(root)).toMatchObject({ user: { id: rootId } })

      // The user's admin page offers it.
      expect(await (await root.request(`${url()}/api/auth/admin/user?id=${bobId}`)).text()).toContain('action="/api/auth/admin/user/impersonate"')
      const started = await post(root, url(), 'admin/user/impersonate', { id: bobId, callbackUrl: `${url()}/whoami` })
      expect([started.status, started.headers.get('location')]).toEqual([302, `${url()}/whoami`])
      expect(await whoami(root)).toMatchObject({ user: { id: bobId }, impersonatedBy: rootId })
      const page = await (await root.request(`${url()}/api/auth/admin/impersonation`)).text()
      expect(page).toContain('bob.routes@example.com')
      expect(page).toContain('action="/api/auth/admin/impersonation/stop"')
      // HEAD of the page changes nothing.
      expect((await root.request(`${url()}/api/auth/admin/impersonation`, { method: 'HEAD' })).status).toBe(200)
      expect(await whoami(root)).toMatchObject({ impersonatedBy: rootId })

      const stopped = await post(root, url(), 'admin/impersonation/stop', {})
      expect([stopped.status, stopped.headers.get('location')]).toEqual([302, `${url()}/api/auth/admin`])
      expect(await whoami(root)).toMatchObject({ user: { id: rootId } })
      expect(await (await root.request(`${url()}/api/auth/admin/impersonation`)).text()).toContain('You are not impersonating anyone.')
      // A refusal shows the user's page saying why: ada, support, may impersonate, not an administrator.
      const adminRefused = await post(root, url(), 'admin/user/impersonate', { id: (await idOf('ada.routes@example.com'))! })
      expect(adminRefused.status).toBe(400)
      expect(await adminRefused.text()).toContain('impersonating administrators is off')
      // Bob's own session was never touched.
      expect(await whoami(bob)).toMatchObject({ user: { id: bobId } })
      expect((await whoami(bob))?.impersonatedBy).toBeUndefined()
    })

    it('keeps the mark whatever the app’s callbacks return', async () => {
      const auth = mount('jwt+store', {
        callbacks: { jwt: ({ token }) => ({ sub: token.sub, email: token.email, roles: token.roles }), session: ({ session }) => ({ user: session.user, expires: session.expires }) },
      } as Partial<PortcullisConfig>)
      const { root, rootId, bobId } = await people(auth, 'callbacks')
      await post(root, url(), 'callback/password', { email: 'root.callbacks@example.com', password: GOOD_PASSWORD })
      expect((await json(root, `/admin/impersonate/${bobId}`, await withCsrf(root))).status).toBe(200)
      expect(await whoami(root)).toMatchObject({ user: { id: bobId }, impersonatedBy: rootId })
      // A re-issue (past updateAge) keeps it too.
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask'] })
      jest.setSystemTime(Date.now() + 3_000_000)
      expect(await whoami(root)).toMatchObject({ user: { id: bobId }, impersonatedBy: rootId })
      expect((await json(root, '/me/password', await withCsrf(root))).body).toMatchObject({ type: 'Impersonating' })
    })

    it('lets an administrator be impersonated with admin.impersonateAdmins', async () => {
      const auth = mount('database', { admin: { impersonateAdmins: true } } as Partial<PortcullisConfig>)
      const { root, ada, rootId } = await people(auth, 'admins')
      const adaId = (await idOf('ada.admins@example.com'))!
      expect((await json(root, `/admin/impersonate/${adaId}`, await withCsrf(root))).status).toBe(200)
      expect(await whoami(root)).toMatchObject({ user: { id: adaId }, impersonatedBy: rootId })
      // As ada, root may not impersonate: an impersonation lends no powers.
      expect((await json(root, `/admin/impersonate/${rootId}`, await withCsrf(root))).body).toMatchObject({ code: 'impersonating' })
      expect(await whoami(ada)).toMatchObject({ user: { id: adaId } })
    })
  })
}
