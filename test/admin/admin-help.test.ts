/**
 * The admin API's help for a user and its end: resetUserTwoFactor (a lost authenticator app),
 * sendPasswordResetLink (a lost password, or none yet) and deleteUser (every row of the user gone,
 * their sessions ended), over real HTTP with real sessions and real mail. Each refuses a user
 * without the permission and a visitor, and a forged post. SQLite, PostgreSQL, MariaDB.
 */
import { expect, it } from '@jest/globals'
import express from 'express'
import { Secret, TOTP } from 'otpauth'
import { adminStatements, defineAccess, type PortcullisConfig } from 'portcullis'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, csrfOf, GOOD_PASSWORD, mountPasswordApp, nextLink, post, signIn, verifiedUser } from '../password/password-app.js'

const rig = useEmailRig()
const access = defineAccess({ statements: { ...adminStatements }, roles: { support: { user: ['list'] } } })

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `the admin API's help for a user on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url

    const mount = (extra: Partial<PortcullisConfig> = {}) => {
      const auth = mountPasswordApp(rig.app, db.knex, rig.smtp, { roles: access, admin: true, account: true, twoFactor: { issuer: 'Example' }, rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } }, ...extra })
      const answer = (run: (req: express.Request) => Promise<unknown>) => async (req: express.Request, res: express.Response) => {
        try {
          res.json({ done: (await run(req)) ?? null })
        } catch (error) {
          res.status(403).json({ type: (error as { type?: string }).type, code: (error as { code?: string }).code })
        }
      }
      auth.app.use(auth.auth)
      auth.app.use(express.urlencoded({ extended: false }))
      const csrf = (req: express.Request) => ({ csrfToken: req.body.csrfToken as string | undefined })
      auth.app.get('/admin/users/:id', answer((req) => auth.getUserDetails(req, String(req.params.id))))
      auth.app.post('/admin/users/:id/reset-two-factor', answer((req) => auth.resetUserTwoFactor(req, String(req.params.id), csrf(req))))
      auth.app.post('/admin/users/:id/reset-link', answer((req) => auth.sendPasswordResetLink(req, String(req.params.id), csrf(req))))
      auth.app.post('/admin/users', answer((req) => auth.createUser(req, { email: req.body.email, name: req.body.name, ...csrf(req) })))
      auth.app.post('/admin/users/:id/delete', answer((req) => auth.deleteUser(req, String(req.params.id), csrf(req))))
      auth.app.post('/me/totp/enroll', answer((req) => auth.enrollTotp(req)))
      auth.app.post('/me/totp/verify', answer((req) => auth.verifyTotp(req, { code: String(req.body.code), ...csrf(req) })))
      return auth
    }
    const idOf = async (email: string) => ((await db.knex('User').where({ email }).first('id')) as { id: string } | undefined)?.id
    const json = async (browser: Browser, path: string, body?: Record<string, string>) => {
      const response = await browser.request(`${url()}${path}`, body ? { body: new URLSearchParams(body) } : {})
      return { status: response.status, body: (await response.json()) as { done?: unknown; code?: string; type?: string } }
    }
    const withCsrf = async (browser: Browser) => ({ csrfToken: await csrfOf(browser, url()) })
    /** root (an administrator), ada (support: may only look) and bob, each signed in in their own browser. */
    const people = async (auth: ReturnType<typeof mount>, tag: string) => {
      const [root, ada, bob] = [new Browser(), new Browser(), new Browser()]
      await verifiedUser(root, url(), rig.smtp, `root.${tag}@example.com`)
      await verifiedUser(ada, url(), rig.smtp, `ada.${tag}@example.com`)
      await verifiedUser(bob, url(), rig.smtp, `bob.${tag}@example.com`)
      await auth.setRoles((await idOf(`root.${tag}@example.com`))!, ['admin'])
      await auth.setRoles((await idOf(`ada.${tag}@example.com`))!, ['support'])
      return { root, ada, bob, bobId: (await idOf(`bob.${tag}@example.com`))! }
    }

    it('refuses each to a user without the permission, to a visitor and to a forged post, and changes nothing', async () => {
      const auth = mount()
      const { root, ada, bobId } = await people(auth, 'refused')
      for (const action of ['reset-two-factor', 'reset-link', 'delete']) {
        expect((await json(ada, `/admin/users/${bobId}/${action}`, await withCsrf(ada))).body).toMatchObject({ type: 'Admin', code: 'forbidden' })
        expect((await json(new Browser(), `/admin/users/${bobId}/${action}`, {})).body.type).toBe('MissingCSRF')
        const visitor = new Browser()
        expect((await json(visitor, `/admin/users/${bobId}/${action}`, await withCsrf(visitor))).body).toMatchObject({ type: 'Admin', code: 'not_signed_in' })
        expect((await json(root, `/admin/users/${bobId}/${action}`, {})).body.type).toBe('MissingCSRF')
      }
      expect((await json(ada, '/admin/users', { email: 'new.refused@example.com', ...(await withCsrf(ada)) })).body).toMatchObject({ code: 'forbidden' })
      expect((await json(root, '/admin/users', { email: 'new.refused@example.com' })).body.type).toBe('MissingCSRF')
      expect(await idOf('new.refused@example.com')).toBeUndefined()
      expect(await idOf('bob.refused@example.com')).toBe(bobId)
      expect((await json(root, '/admin/users/nobody/reset-link', await withCsrf(root))).body).toMatchObject({ code: 'not_found' })
    })

    it('removes a user’s second factor: their password alone signs them in again', async () => {
      const auth = mount()
      const { root, bob, bobId } = await people(auth, 'totp')
      const { secret } = (await json(bob, '/me/totp/enroll', await withCsrf(bob))).body.done as { secret: string }
      const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate()
      expect((await json(bob, '/me/totp/verify', { code, ...(await withCsrf(bob)) })).status).toBe(200)
      expect((await json(root, `/admin/users/${bobId}`)).body.done).toMatchObject({ twoFactor: true })
      // The password is no longer enough: the sign-in asks for the code.
      expect((await signIn(new Browser(), url(), 'bob.totp@example.com')).headers.get('location')).toMatch(/two-factor/)

      expect((await json(root, `/admin/users/${bobId}/reset-two-factor`, await withCsrf(root))).body).toEqual({ done: true })
      expect((await json(root, `/admin/users/${bobId}`)).body.done).toMatchObject({ twoFactor: false })
      expect(new URL((await signIn(new Browser(), url(), 'bob.totp@example.com')).headers.get('location')!).pathname).toBe('/')
      expect((await json(root, `/admin/users/${bobId}/reset-two-factor`, await withCsrf(root))).body).toEqual({ done: false })
    })

    it('mails a user a reset link that sets a new password; the administrator never sees it', async () => {
      const auth = mount()
      const { root, bobId } = await people(auth, 'link')
      const answer = await json(root, `/admin/users/${bobId}/reset-link`, await withCsrf(root))
      expect(new Date(answer.body.done as string).getTime()).toBeGreaterThan(Date.now())
      expect(JSON.stringify(answer.body)).not.toMatch(/token/)
      const { link } = await nextLink(rig.smtp, 'bob.link@example.com')
      const reset = new URL(link)
      expect(reset.pathname).toBe('/api/auth/reset-password')
      const owner = new Browser()
      const done = await post(owner, url(), 'reset-password', { token: reset.searchParams.get('token')!, email: reset.searchParams.get('email')!, password: 'a brand new passphrase' })
      expect(done.status).toBe(302)
      expect(new URL((await signIn(new Browser(), url(), 'bob.link@example.com', 'a brand new passphrase')).headers.get('location')!).searchParams.get('error')).toBeNull()
      expect(new URL((await signIn(new Browser(), url(), 'bob.link@example.com', GOOD_PASSWORD)).headers.get('location')!).searchParams.get('error')).toBe('CredentialsSignin')
    })

    it('says mail_failed when the reset link cannot be mailed, the link kept out of the log', async () => {
      const auth = mount()
      const { root, bobId } = await people(auth, 'mailfail')
      // The same app, its mail now going to a port where nothing listens.
      const lines: string[] = []
      const broken = mountPasswordApp(rig.app, db.knex, { url: 'smtp://127.0.0.1:9' }, {
        roles: access,
        admin: true,
        rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
        logger: { error: (...line: unknown[]) => void lines.push(line.map(String).join(' ')), warn: () => {}, debug: () => {} },
      })
      broken.app.use(broken.auth)
      broken.app.use(express.urlencoded({ extended: false }))
      broken.app.post('/admin/users/:id/reset-link', async (req, res) => {
        try {
          res.json({ done: await broken.sendPasswordResetLink(req, String(req.params.id), { csrfToken: req.body.csrfToken }) })
        } catch (error) {
          res.status(403).json({ code: (error as { code?: string }).code })
        }
      })
      expect((await json(root, `/admin/users/${bobId}/reset-link`, await withCsrf(root))).body).toEqual({ code: 'mail_failed' })
      expect(lines.length).toBeGreaterThan(0)
      expect(lines.join('\n')).not.toMatch(/token=/)
    })

    it('creates a user, who sets their own password from the mailed link; an address taken is refused', async () => {
      const auth = mount()
      const { root } = await people(auth, 'create')
      const created = (await json(root, '/admin/users', { email: ' New.Create@Example.com ', name: 'Nora', ...(await withCsrf(root)) })).body.done as { user: { id: string; email: string; emailVerified: unknown }; linkExpires: string }
      expect(created.user).toMatchObject({ email: 'new.create@example.com', emailVerified: null })
      expect(new Date(created.linkExpires).getTime()).toBeGreaterThan(Date.now())
      expect((await json(root, `/admin/users/${created.user.id}`)).body.done).toMatchObject({ name: 'Nora', roles: ['user'], signInMethods: [] })
      expect((await json(root, '/admin/users', { email: 'new.create@example.com', ...(await withCsrf(root)) })).body).toMatchObject({ code: 'email_taken' })

      const reset = new URL((await nextLink(rig.smtp, 'new.create@example.com')).link)
      const nora = new Browser()
      expect((await post(nora, url(), 'reset-password', { token: reset.searchParams.get('token')!, email: reset.searchParams.get('email')!, password: 'nora sets her own passphrase' })).status).toBe(302)
      expect(new URL((await signIn(new Browser(), url(), 'new.create@example.com', 'nora sets her own passphrase')).headers.get('location')!).searchParams.get('error')).toBeNull()
      // The link proved the address.
      expect((await json(root, `/admin/users/${created.user.id}`)).body.done).toMatchObject({ signInMethods: ['password'], emailVerified: expect.any(String) })
    })

    it('deletes a user at once: their sessions end and no row of theirs stays; nobody deletes themselves', async () => {
      const auth = mount()
      const { root, bob, bobId } = await people(auth, 'delete')
      const rootId = (await idOf('root.delete@example.com'))!
      const session = async (browser: Browser) => ((await (await browser.request(`${url()}/api/auth/session`)).json()) as { user?: { email?: string } } | null)?.user?.email
      expect(await session(bob)).toBe('bob.delete@example.com')
      expect((await json(root, `/admin/users/${rootId}/delete`, await withCsrf(root))).body).toMatchObject({ code: 'own_roles' })

      const { secret } = (await json(bob, '/me/totp/enroll', await withCsrf(bob))).body.done as { secret: string }
      await json(bob, '/me/totp/verify', { code: new TOTP({ secret: Secret.fromBase32(secret) }).generate(), ...(await withCsrf(bob)) })
      const tables = ['Account', 'Session', 'Password', 'TwoFactor', 'RecoveryCode', 'Authenticator']
      const rowsOf = async () => (await Promise.all(tables.map(async (table) => ((await db.knex.schema.hasTable(table)) ? (await db.knex(table).where({ userId: bobId })).length : 0)))).reduce((a, b) => a + b, 0)
      // Bob's password, second factor and recovery codes (and database sessions, when they are) are there first.
      expect(await rowsOf()).toBeGreaterThanOrEqual(3)

      expect((await json(root, `/admin/users/${bobId}/delete`, await withCsrf(root))).body).toEqual({ done: null })
      expect(await session(bob)).toBeUndefined()
      expect(await idOf('bob.delete@example.com')).toBeUndefined()
      expect(await rowsOf()).toBe(0)
      expect((await json(root, `/admin/users/${bobId}`)).body).toEqual({ done: null })
      expect(await session(root)).toBe('root.delete@example.com')
    })
  })
}
