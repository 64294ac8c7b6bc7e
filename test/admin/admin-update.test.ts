/**
 * The admin API's updateUser: an administrator corrects a user's name or address, over real HTTP
 * with real sessions. It refuses a user without the permission, a visitor and a forged post; a new
 * address is unverified unless vouched for, and one another user has is refused. SQLite,
 * PostgreSQL, MariaDB, database sessions.
 */
import { expect, it } from '@jest/globals'
import express from 'express'
import { adminStatements, defineAccess, type PortcullisConfig } from 'portcullis'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, csrfOf, mountPasswordApp, signIn, verifiedUser } from '../password/password-app.js'

const rig = useEmailRig()
const access = defineAccess({ statements: { ...adminStatements }, roles: { support: { user: ['list'] } } })

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `the admin API's updateUser on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url

    const mount = (extra: Partial<PortcullisConfig> = {}) => {
      const updated: string[] = []
      const changed: string[] = []
      const auth = mountPasswordApp(rig.app, db.knex, rig.smtp, {
        roles: access,
        admin: true,
        rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
        events: { updateUser: ({ user }) => void updated.push(String(user.email)), emailChanged: ({ user, previousEmail }) => void changed.push(`${previousEmail} -> ${user.email}`) },
        ...extra,
      })
      auth.app.use(auth.auth)
      auth.app.use(express.urlencoded({ extended: false }))
      auth.app.post('/admin/users/:id', async (req, res) => {
        const { name, email, emailVerified, csrfToken } = req.body as Record<string, string | undefined>
        try {
          res.json({ done: await auth.updateUser(req, String(req.params.id), { name, email, emailVerified: emailVerified === 'yes', csrfToken }) })
        } catch (error) {
          res.status(403).json({ type: (error as { type?: string }).type, code: (error as { code?: string }).code })
        }
      })
      return { auth, updated, changed }
    }
    const userRow = async (email: string) => (await db.knex('User').where({ email }).first('id', 'name', 'email', 'emailVerified')) as { id: string; name: string | null; emailVerified: unknown } | undefined
    const update = async (browser: Browser, id: string, body: Record<string, string>) => {
      const response = await browser.request(`${url()}/admin/users/${id}`, { body: new URLSearchParams(body) })
      return { status: response.status, body: (await response.json()) as { done?: Record<string, unknown>; code?: string; type?: string } }
    }
    const withCsrf = async (browser: Browser) => ({ csrfToken: await csrfOf(browser, url()) })
    /** root (an administrator), ada (support: may only look) and bob, each signed in in their own browser. */
    const people = async ({ auth, updated }: ReturnType<typeof mount>, tag: string) => {
      const [root, ada, bob] = [new Browser(), new Browser(), new Browser()]
      await verifiedUser(root, url(), rig.smtp, `root.${tag}@example.com`)
      await verifiedUser(ada, url(), rig.smtp, `ada.${tag}@example.com`)
      await verifiedUser(bob, url(), rig.smtp, `bob.${tag}@example.com`)
      await auth.setRoles((await userRow(`root.${tag}@example.com`))!.id, ['admin'])
      await auth.setRoles((await userRow(`ada.${tag}@example.com`))!.id, ['support'])
      // The sign-ups' verifications were updates too: the tests count the administrator's.
      updated.length = 0
      return { root, ada, bob, bobId: (await userRow(`bob.${tag}@example.com`))!.id }
    }

    it('refuses a user without the permission, a visitor and a forged post, and changes nothing', async () => {
      const app = mount()
      const { updated } = app
      const { root, ada, bob, bobId } = await people(app, 'refused')
      const change = { name: 'Mallory', email: 'mallory.refused@example.com' }
      expect((await update(ada, bobId, { ...change, ...(await withCsrf(ada)) })).body).toMatchObject({ type: 'Admin', code: 'forbidden' })
      expect((await update(bob, bobId, { ...change, ...(await withCsrf(bob)) })).body).toMatchObject({ type: 'Admin', code: 'forbidden' })
      const visitor = new Browser()
      expect((await update(visitor, bobId, { ...change, ...(await withCsrf(visitor)) })).body).toMatchObject({ type: 'Admin', code: 'not_signed_in' })
      expect((await update(root, bobId, change)).body.type).toBe('MissingCSRF')
      // Another browser's token is no token of root's.
      expect((await update(root, bobId, { ...change, ...(await withCsrf(new Browser())) })).body.type).toBe('MissingCSRF')
      expect(await userRow('bob.refused@example.com')).toMatchObject({ id: bobId, name: null })
      expect(await userRow('mallory.refused@example.com')).toBeUndefined()
      expect(updated).toEqual([])
      expect((await update(root, 'nobody', { name: 'X', ...(await withCsrf(root)) })).body).toMatchObject({ code: 'not_found' })
    })

    it('changes a name, and removes it', async () => {
      const app = mount()
      const { updated } = app
      const { root, bobId } = await people(app, 'name')
      const done = (await update(root, bobId, { name: 'Robert Tables', ...(await withCsrf(root)) })).body.done
      expect(done).toMatchObject({ id: bobId, name: 'Robert Tables', email: 'bob.name@example.com', emailVerified: expect.any(String), roles: ['user'], signInMethods: ['password'] })
      expect(await userRow('bob.name@example.com')).toMatchObject({ name: 'Robert Tables' })
      expect(updated).toEqual(['bob.name@example.com'])
      expect((await update(root, bobId, { name: '', ...(await withCsrf(root)) })).body.done).toMatchObject({ name: null })
      expect((await update(root, bobId, { name: 'x'.repeat(201), ...(await withCsrf(root)) })).status).toBe(403)
      expect(await userRow('bob.name@example.com')).toMatchObject({ name: null })
    })

    it('changes an address, normalised and unverified unless vouched for; the user signs in with it', async () => {
      const app = mount()
      const { updated } = app
      const { root, bobId } = await people(app, 'email')
      const done = (await update(root, bobId, { email: ' Robert.Email@Example.COM ', ...(await withCsrf(root)) })).body.done
      expect(done).toMatchObject({ email: 'robert.email@example.com', emailVerified: null })
      expect(await userRow('bob.email@example.com')).toBeUndefined()
      expect(updated).toEqual(['robert.email@example.com'])
      // A changed address, as the account wing's change emits it (the audit log's email-changed).
      expect(app.changed).toEqual(['bob.email@example.com -> robert.email@example.com'])
      // The password signs in with the new address, and no longer with the old one.
      expect(new URL((await signIn(new Browser(), url(), 'robert.email@example.com')).headers.get('location')!).searchParams.get('error')).toBeNull()
      expect(new URL((await signIn(new Browser(), url(), 'bob.email@example.com')).headers.get('location')!).searchParams.get('error')).toBe('CredentialsSignin')

      const vouched = (await update(root, bobId, { email: 'rob.email@example.com', emailVerified: 'yes', ...(await withCsrf(root)) })).body.done
      expect(vouched).toMatchObject({ email: 'rob.email@example.com', emailVerified: expect.any(String) })
      expect((await update(root, bobId, { email: 'not an address', ...(await withCsrf(root)) })).status).toBe(403)
      expect((await userRow('rob.email@example.com'))?.id).toBe(bobId)
    })

    it('refuses an address another user has (email_taken), letter case aside', async () => {
      const app = mount()
      const { updated } = app
      const { root, bobId } = await people(app, 'taken')
      expect((await update(root, bobId, { email: 'ADA.taken@example.com', name: 'Bob', ...(await withCsrf(root)) })).body).toMatchObject({ type: 'Admin', code: 'email_taken' })
      expect(await userRow('bob.taken@example.com')).toMatchObject({ id: bobId, name: null })
      expect(updated).toEqual([])
      // Their own address again is no change.
      expect((await update(root, bobId, { email: 'bob.taken@example.com', ...(await withCsrf(root)) })).body.done).toMatchObject({ email: 'bob.taken@example.com', emailVerified: expect.any(String) })
      expect(updated).toEqual([])
    })
  })
}
