/**
 * The built-in admin pages (`/admin`, `/admin/user`) and their forms, over real HTTP with real
 * sessions and real mail: every page and action refuses a user without the permission (403) and a
 * visitor (to sign in, or 401 for a script); every form is CSRF-checked and refused from another
 * site; HEAD runs no action; the raw spellings of a path reach what the router gives them
 * elsewhere; each action works end to end through its form. SQLite, PostgreSQL, MariaDB, database
 * sessions; one JWT case.
 */
import { expect, it } from '@jest/globals'
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http'
import { adminStatements, defineAccess, type PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, csrfOf, mountPasswordApp, nextLink, signIn, verifiedUser } from '../password/password-app.js'

const rig = useEmailRig()
const access = defineAccess({ statements: { ...adminStatements, audit: ['read'] }, roles: { support: { user: ['list'] } } })
const HTML = { accept: 'text/html,application/xhtml+xml' }
/** Every action's path below /api/auth/admin/user/, with the fields its form adds to the token and id. */
const ACTIONS: Record<string, Record<string, string>> = {
  update: { name: 'Mallory', email: 'mallory@example.com' },
  roles: { 'role:admin': 'yes' },
  sessions: {},
  ban: { reason: 'forged' },
  unban: {},
  'two-factor': {},
  'reset-link': {},
  delete: { confirm: 'yes' },
}

/** The fields of the page's form that posts to `action` (its hidden inputs, and the text inputs' values). */
function formOf(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form method="post" action="[^"]*/admin/user/${action}">([\\s\\S]*?)</form>`).exec(html)
  if (!form) throw new Error(`the page has no ${action} form`)
  const fields: Record<string, string> = {}
  for (const input of form[1]!.matchAll(/<input ([^>]*)>/g)) {
    const name = /name="([^"]*)"/.exec(input[1]!)?.[1]
    const type = /type="([^"]*)"/.exec(input[1]!)?.[1] ?? 'text'
    if (name === undefined || ((type === 'checkbox' || type === 'radio') && !/ checked/.test(input[1]!))) continue
    fields[name] = (/value="([^"]*)"/.exec(input[1]!)?.[1] ?? '').replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>')
  }
  return fields
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `the admin pages on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    const auth = (path: string) => `${url()}/api/auth${path}`

    const mount = (extra: Partial<PortcullisConfig> = {}) =>
      mountPasswordApp(rig.app, db.knex, rig.smtp, {
        roles: access,
        admin: true,
        account: true,
        twoFactor: { issuer: 'Example' },
        audit: true,
        prune: { everyMinutes: 60, signal: AbortSignal.abort() },
        theme: { brandColor: '#0b7285' },
        rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } },
        ...extra,
      })
    const userRow = async (email: string) => (await db.knex('User').where({ email }).first('id', 'name', 'email')) as { id: string; name: string | null } | undefined
    /** root (an administrator), ada (support: may only look) and bob, each signed in in their own browser. */
    const people = async (app: ReturnType<typeof mount>, tag: string) => {
      const [root, ada, bob] = [new Browser(), new Browser(), new Browser()]
      await verifiedUser(root, url(), rig.smtp, `root.${tag}@example.com`)
      await verifiedUser(ada, url(), rig.smtp, `ada.${tag}@example.com`)
      await verifiedUser(bob, url(), rig.smtp, `bob.${tag}@example.com`)
      await app.setRoles((await userRow(`root.${tag}@example.com`))!.id, ['admin'])
      await app.setRoles((await userRow(`ada.${tag}@example.com`))!.id, ['support'])
      return { root, ada, bob, bobId: (await userRow(`bob.${tag}@example.com`))!.id, rootId: (await userRow(`root.${tag}@example.com`))!.id }
    }
    const page = async (browser: Browser, path: string, headers: Record<string, string> = HTML) => {
      const response = await browser.request(auth(path), { headers })
      return { status: response.status, location: response.headers.get('location'), text: await response.text() }
    }
    /** POSTs `fields` to /api/auth/admin/user/<action>, with the browser's CSRF token unless `fields` has one. */
    const postAction = async (browser: Browser, action: string, fields: Record<string, string>, headers: Record<string, string> = HTML) => {
      const body = new URLSearchParams({ csrfToken: await csrfOf(browser, url()), ...fields })
      const response = await browser.request(auth(`/admin/user/${action}`), { body, headers })
      return { status: response.status, location: response.headers.get('location'), text: await response.text() }
    }
    /** Fills in the form for `action` on the user's page, and follows the redirect back. */
    const submit = async (browser: Browser, userId: string, action: string, changes: Record<string, string> = {}, drop: string[] = []) => {
      const fields = { ...formOf((await page(browser, `/admin/user?id=${encodeURIComponent(userId)}`)).text, action), ...changes }
      for (const name of drop) delete fields[name]
      const response = await browser.request(auth(`/admin/user/${action}`), { body: new URLSearchParams(fields), headers: HTML })
      const location = response.headers.get('location')
      const after = location ? await browser.request(new URL(location, url()).href, { headers: HTML }) : response
      return { status: response.status, location, text: await after.text() }
    }
    const sessionOf = async (browser: Browser) => ((await (await browser.request(auth('/session'))).json()) as { user?: { email?: string; roles?: string[] } } | null)?.user
    const signInError = async (email: string) => new URL((await signIn(new Browser(), url(), email)).headers.get('location')!).searchParams.get('error')

    it('gives every page and action 403 to a signed-in user without the permission, and changes nothing', async () => {
      const app = mount()
      const { ada, bob, bobId, rootId } = await people(app, 'forbidden')
      for (const path of ['/admin', '/admin?q=root', `/admin/user?id=${rootId}`]) {
        const answer = await page(bob, path)
        expect([path, answer.status]).toEqual([path, 403])
        expect(answer.text).toContain('Access denied')
        expect(answer.text).not.toContain('root.forbidden@example.com')
      }
      for (const [action, fields] of Object.entries(ACTIONS)) {
        const answer = await postAction(bob, action, { id: rootId, ...fields })
        expect([action, answer.status]).toEqual([action, 403])
        expect(answer.text).not.toContain('root.forbidden@example.com')
        // Support may look, not act: their refusal is the user's page, saying so.
        const looked = await postAction(ada, action, { id: bobId, ...fields })
        expect([action, looked.status]).toEqual([action, 403])
        expect(looked.text).toContain('Your roles do not grant this action.')
      }
      expect(await userRow('root.forbidden@example.com')).toMatchObject({ id: rootId, name: null })
      expect(await sessionOf(bob)).toMatchObject({ email: 'bob.forbidden@example.com', roles: ['user'] })
      expect(await signInError('root.forbidden@example.com')).toBeNull()
      expect((await page(ada, '/admin')).status).toBe(200)
      // Support sees the user, and no form it may not use.
      const looked = (await page(ada, `/admin/user?id=${bobId}`)).text
      expect(looked).toContain('bob.forbidden@example.com')
      expect(looked).toContain('Your roles let you see this user, not change them.')
      expect(looked).not.toContain('method="post"')
    })

    it('sends a visitor to sign in and back (a 401 for a script), on every page and action', async () => {
      const app = mount()
      const { bobId } = await people(app, 'visitor')
      const visitor = new Browser()
      for (const path of ['/admin', `/admin/user?id=${bobId}`]) {
        const answer = await page(visitor, path)
        expect([path, answer.status]).toEqual([path, 302])
        const signInUrl = new URL(answer.location!)
        expect(signInUrl.pathname).toBe('/api/auth/signin')
        expect(signInUrl.searchParams.get('callbackUrl')).toBe(auth(path))
        const script = await page(visitor, path, { accept: '*/*' })
        expect([path, script.status]).toEqual([path, 401])
        expect(JSON.parse(script.text)).toMatchObject({ error: 'SessionRequired', url: expect.stringContaining('/api/auth/signin') })
      }
      for (const [action, fields] of Object.entries(ACTIONS)) {
        const answer = await postAction(visitor, action, { id: bobId, ...fields })
        expect([action, answer.status]).toEqual([action, 302])
        expect(new URL(answer.location!).pathname).toBe('/api/auth/signin')
        expect((await postAction(visitor, action, { id: bobId, ...fields }, { accept: '*/*' })).status).toBe(401)
      }
      expect(await userRow('bob.visitor@example.com')).toMatchObject({ id: bobId })
      expect(await signInError('bob.visitor@example.com')).toBeNull()
    })

    it('refuses every form without a CSRF token, with a wrong or another browser’s one, and from another site', async () => {
      const app = mount()
      const { root, bob, bobId } = await people(app, 'csrf')
      const other = await csrfOf(new Browser(), url())
      for (const [action, fields] of Object.entries(ACTIONS)) {
        const attempts = [
          { body: { id: bobId, ...fields }, headers: HTML },
          { body: { id: bobId, ...fields, csrfToken: 'not-a-token' }, headers: HTML },
          { body: { id: bobId, ...fields, csrfToken: other }, headers: HTML },
          { body: { id: bobId, ...fields, csrfToken: await csrfOf(root, url()) }, headers: { ...HTML, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } },
        ]
        for (const attempt of attempts) {
          const response = await root.request(auth(`/admin/user/${action}`), { body: new URLSearchParams(attempt.body), headers: attempt.headers })
          expect([action, response.status]).toEqual([action, 302])
          expect(new URL(response.headers.get('location')!).searchParams.get('error')).toBe('MissingCSRF')
        }
      }
      expect(await userRow('bob.csrf@example.com')).toMatchObject({ id: bobId, name: null })
      expect(await sessionOf(bob)).toMatchObject({ email: 'bob.csrf@example.com', roles: ['user'] })
      expect(await signInError('bob.csrf@example.com')).toBeNull()
    })

    it('runs no action on HEAD, and has no GET for an action', async () => {
      const app = mount()
      const { root, bob, bobId } = await people(app, 'head')
      for (const path of ['/admin', `/admin/user?id=${bobId}`]) {
        const response = await root.request(auth(path), { method: 'HEAD', headers: HTML })
        expect([path, response.status, await response.text()]).toEqual([path, 200, ''])
      }
      const token = await csrfOf(root, url())
      for (const [action, fields] of Object.entries(ACTIONS)) {
        const query = new URLSearchParams({ id: bobId, csrfToken: token, ...fields })
        expect((await root.request(auth(`/admin/user/${action}?${query}`), { method: 'HEAD' })).status).toBe(400)
        expect((await root.request(auth(`/admin/user/${action}?${query}`))).status).toBe(400)
      }
      expect(await userRow('bob.head@example.com')).toMatchObject({ id: bobId, name: null })
      expect(await sessionOf(bob)).toMatchObject({ roles: ['user'] })
    })

    it('answers a raw path over node:http as the router does elsewhere', async () => {
      const app = mount()
      const { root, bob, bobId } = await people(app, 'raw')
      const cookieOf = (browser: Browser) => ['authjs.session-token', 'authjs.csrf-token'].map((name) => `${name}=${browser.cookie(url(), name)}`).join('; ')
      const raw = (path: string, method: string, headers: OutgoingHttpHeaders, body?: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port: new URL(url()).port, path, method, headers }, (res) => {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => (text += chunk))
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
          })
          req.on('error', reject)
          req.end(body)
        })
      // As the router answers every route: dot segments are resolved (the URL parser's reading), a trailing slash
      // trimmed; a doubled slash, an escaped letter or another letter case is no route (400). Never a crash, and
      // never the list without the permission.
      const expected: Record<string, number> = {
        '/api/auth/admin': 200,
        '/api/auth/admin/': 200,
        '/api/auth/./admin': 200,
        '/api/auth/admin/../admin': 200,
        '/api/auth/x/../admin': 200,
        '/api/auth/x/%2e%2e/admin': 200,
        '/api/auth//admin': 400,
        '/api/auth/%61dmin': 400,
        '/api/auth/ADMIN': 400,
      }
      for (const [path, status] of Object.entries(expected)) {
        const asRoot = await raw(path, 'GET', { cookie: cookieOf(root), ...HTML })
        const asBob = await raw(path, 'GET', { cookie: cookieOf(bob), ...HTML })
        expect([path, asRoot.status, asBob.status]).toEqual([path, status, status === 200 ? 403 : 400])
        if (status === 200) expect(asRoot.body).toContain('bob.raw@example.com')
        expect(asBob.body).not.toContain('root.raw@example.com')
      }
      for (const path of ['/api/auth//admin/user/ban', '/api/auth/admin/user/%62an', '/api/auth/admin//user/ban', '/api/auth/admin/user/ban/..']) {
        await raw(path, 'POST', { cookie: cookieOf(root), origin: url(), 'content-type': 'application/x-www-form-urlencoded' }, `id=${bobId}`)
      }
      expect(await signInError('bob.raw@example.com')).toBeNull()
    })

    it('bans through the form: the user is signed out and refused at sign-in, until the ban is lifted', async () => {
      const app = mount()
      const { root, bob, bobId } = await people(app, 'ban')
      const banned = await submit(root, bobId, 'ban', { reason: 'spam <script>', expiresIn: '86400' })
      expect(banned.status).toBe(302)
      expect(new URL(banned.location!).searchParams.get('notice')).toBe('banned')
      expect(banned.text).toContain('The user is banned')
      expect(banned.text).toMatch(/Banned since [^<]* UTC, until [^<]* UTC\. Reason: spam &lt;script&gt;/)
      expect(await sessionOf(bob)).toBeUndefined()
      expect(await signInError('bob.ban@example.com')).toBe('UserBanned')
      // The list shows it too.
      expect((await page(root, '/admin?q=bob.ban')).text).toMatch(/banned until/)

      const lifted = await submit(root, bobId, 'unban')
      expect(lifted.text).toContain('The ban is lifted.')
      expect(await signInError('bob.ban@example.com')).toBeNull()
      // A reason too long is the form's mistake, shown on the page.
      const tooLong = await submit(root, bobId, 'ban', { reason: 'x'.repeat(501) })
      expect(tooLong.status).toBe(400)
      expect(tooLong.text).toContain('Give a reason of at most 500 characters')
      // Nobody bans themselves.
      const rootId = (await userRow('root.ban@example.com'))!.id
      expect((await submit(root, rootId, 'ban')).text).toContain('Nobody does this to their own account here')
    })

    it('sets roles through the checkboxes; none ticked is the default ones; nobody changes their own', async () => {
      const app = mount()
      const { root, bob, bobId, rootId } = await people(app, 'roles')
      const form = formOf((await page(root, `/admin/user?id=${bobId}`)).text, 'roles')
      expect(form).toMatchObject({ 'role:user': 'yes' })
      const changed = await submit(root, bobId, 'roles', { 'role:support': 'yes' }, ['role:user'])
      expect(changed.text).toContain('Roles saved.')
      expect(await sessionOf(bob)).toMatchObject({ roles: ['support'] })
      expect((await page(bob, '/admin')).status).toBe(200)
      await submit(root, bobId, 'roles', {}, ['role:support'])
      expect(await sessionOf(bob)).toMatchObject({ roles: ['user'] })
      const own = await submit(root, rootId, 'roles', { 'role:user': 'yes' })
      expect(own.status).toBe(400)
      expect(own.text).toContain('another administrator must')
      const unknown = await submit(root, bobId, 'roles', { 'role:wizard': 'yes' })
      expect(unknown.status).toBe(400)
      expect(await sessionOf(bob)).toMatchObject({ roles: ['user'] })
    })

    it('edits the name and address through the form; an address another user has is refused', async () => {
      const app = mount()
      const { root, bobId } = await people(app, 'edit')
      const edited = await submit(root, bobId, 'update', { name: 'Robert Tables', email: 'Robert.Edit@Example.com' })
      expect(edited.text).toContain('Name and address saved.')
      expect(await userRow('robert.edit@example.com')).toMatchObject({ id: bobId, name: 'Robert Tables' })
      expect(edited.text).toContain('robert.edit@example.com (not confirmed)')
      const taken = await submit(root, bobId, 'update', { email: 'ada.edit@example.com' })
      expect(taken.status).toBe(400)
      expect(taken.text).toContain('Another user has that address.')
      const bad = await submit(root, bobId, 'update', { email: 'not an address' })
      expect(bad.status).toBe(400)
      expect(await userRow('robert.edit@example.com')).toMatchObject({ id: bobId })
    })

    it('ends the sessions, mails a reset link, and deletes (only with the box ticked) through the forms', async () => {
      const app = mount()
      const { root, bob, bobId } = await people(app, 'help')
      const before = (await page(root, `/admin/user?id=${bobId}`)).text
      expect(before).toContain('1 session.')
      // Each session listed, with where it was signed in from.
      expect(before).toMatch(/<ul class="sessions"><li>[^<]*<small>[^<]*(127\.0\.0\.1|::1|unknown address)/)
      expect((await submit(root, bobId, 'sessions')).text).toContain('Every session of the user was ended.')
      expect(await sessionOf(bob)).toBeUndefined()

      expect((await submit(root, bobId, 'reset-link')).text).toContain('A password reset link was mailed to the user.')
      expect(new URL((await nextLink(rig.smtp, 'bob.help@example.com')).link).pathname).toBe('/api/auth/reset-password')

      const unticked = await submit(root, bobId, 'delete', {}, ['confirm'])
      expect(unticked.status).toBe(400)
      expect(unticked.text).toContain('Tick the box')
      expect(await userRow('bob.help@example.com')).toBeDefined()
      const deleted = await submit(root, bobId, 'delete', { confirm: 'yes' })
      expect(new URL(deleted.location!).pathname).toBe('/api/auth/admin')
      expect(deleted.text).toContain('The user was deleted.')
      expect(await userRow('bob.help@example.com')).toBeUndefined()
      expect((await page(root, `/admin/user?id=${bobId}`)).status).toBe(404)
    })

    it('lists users by address, searched and paged with next and previous links', async () => {
      const app = mount()
      const { root } = await people(app, 'list')
      const adapter = KnexAdapter(db.knex)
      for (let i = 0; i < 26; i++) await adapter.createUser!({ email: `member${String(i).padStart(2, '0')}.list@example.com`, name: `Member ${i}`, emailVerified: null })
      await adapter.createUser!({ email: 'member26.list@example.com', name: '<img src=x onerror=alert(1)>', emailVerified: null })
      const first = (await page(root, '/admin')).text
      expect(first).toContain('Users 1–25 of 30.')
      expect(first).toContain('ada.list@example.com')
      const next = /<a href="([^"]+)" rel="next">/.exec(first)![1]!.replace(/&amp;/g, '&')
      expect(next).toBe('/api/auth/admin?offset=25')
      const second = await (await root.request(new URL(next, url()).href, { headers: HTML })).text()
      expect(second).toContain('Users 26–30 of 30.')
      expect(second).toContain('root.list@example.com')
      expect(second).toMatch(/rel="prev"/)
      expect(second).not.toMatch(/rel="next"/)
      // What users typed is text on the page, never markup.
      expect(second).toContain('&lt;img src=x onerror=alert(1)&gt;')
      expect(second).not.toContain('<img src=x')
      const found = (await page(root, '/admin?q=MEMBER1')).text
      expect(found).toContain('Users 1–10 of 10 matching.')
      expect(found).not.toContain('ada.list@example.com')
      expect((await page(root, '/admin?q=nobody-at-all')).text).toContain('No user matches.')
      expect((await page(root, '/admin?offset=-3')).text).toContain('Users 1–25 of 30.')
      const past = (await page(root, '/admin?offset=500')).text
      expect(past).toContain('No users on this page: 30 in all.')
      expect(past).toContain('<a href="/api/auth/admin?offset=25" rel="prev">')
    })

    it('shows the user’s recent audit events to a caller who may read them', async () => {
      const app = mount()
      const { root, ada, bobId } = await people(app, 'audit')
      await submit(root, bobId, 'ban')
      await submit(root, bobId, 'unban')
      // The audit log writes after the response.
      let text = ''
      for (let tries = 0; tries < 50 && !text.includes('user-unbanned'); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        text = (await page(root, `/admin/user?id=${bobId}`)).text
      }
      expect(text).toContain('Recent events')
      expect(text).toContain('user-banned')
      expect(text).toContain('user-unbanned')
      expect(text).toContain('sign-in')
      // Support may list users, not read their events.
      expect((await page(ada, `/admin/user?id=${bobId}`)).text).toContain('needs the audit: [&#39;read&#39;] permission')
    })

    it('has no admin pages with the admin option off', async () => {
      const app = mount({ admin: false })
      const root = new Browser()
      await verifiedUser(root, url(), rig.smtp, 'root.off@example.com')
      await app.setRoles((await userRow('root.off@example.com'))!.id, ['admin'])
      const answer = await page(root, '/admin')
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.text)).toMatchObject({ error: 'UnknownAction', message: expect.stringContaining('admin: true') })
      expect((await postAction(root, 'ban', { id: 'anyone' })).status).toBe(400)
    })

    it('with JWT sessions (and the store the password provider needs): the ban ends the session and refuses the sign-in', async () => {
      const app = mount({ session: { strategy: 'jwt', store: 'memory' } })
      const { root, bob, bobId } = await people(app, 'jwt')
      // A change of roles ends the user's JWT sessions (docs/roles.md): root signs in again, an administrator.
      await signIn(root, url(), 'root.jwt@example.com')
      expect((await page(root, `/admin/user?id=${bobId}`)).text).toContain('1 session.')
      expect((await submit(root, bobId, 'ban')).text).toContain('The user is banned')
      expect(await sessionOf(bob)).toBeUndefined()
      expect(await signInError('bob.jwt@example.com')).toBe('UserBanned')
      expect((await submit(root, bobId, 'unban')).text).toContain('The ban is lifted.')
      expect(await signInError('bob.jwt@example.com')).toBeNull()
    })
  })
}
