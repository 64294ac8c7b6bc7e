/**
 * The audit log (`audit` option): the security events of real flows stored in the AuditEvent table
 * after each response, with who, from where and when; a refused sign-in too; nothing secret in a
 * row; a table that is gone costs the request nothing (the write fails after it, and is logged);
 * the user reads their own events only; the export pages through every event as JSON lines; the
 * retention's prune; a deleted user's events stay without the user. SQLite, PostgreSQL, MariaDB.
 */
import { expect, it } from '@jest/globals'
import Portcullis, { defineAccess, type AuditEvent } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import type { Knex } from 'knex'
import { recordingLogger, type RecordingLogger } from '../support/logger.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, GOOD_PASSWORD, mountPasswordApp, post, signIn, verifiedUser } from '../password/password-app.js'

const rig = useEmailRig()
const NEW_PASSWORD = 'a brand new passphrase of mine'

/** The rows written so far, oldest first, once `count` of them are there (writes follow the responses). */
async function rowsOnceThere(knex: Knex, count: number): Promise<Record<string, unknown>[]> {
  for (let tries = 0; ; tries++) {
    const rows = (await knex('AuditEvent').select('*').orderBy([{ column: 'at' }, { column: 'id' }])) as Record<string, unknown>[]
    if (rows.length >= count || tries > 200) return rows
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `the audit log on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const url = () => rig.app.url
    const mount = (audit: object | true = true, logger: RecordingLogger = recordingLogger()) =>
      mountPasswordApp(rig.app, db.knex, rig.smtp, { audit, logger, prune: { everyMinutes: 60, signal: AbortSignal.abort() }, rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } } })

    it('is refused at init without the prune (nothing would delete old events), with a bad retention, or an adapter without its methods', () => {
      const base = { secret: 'a'.repeat(32), providers: [], adapter: KnexAdapter(db.knex), logger: recordingLogger() }
      expect(() => Portcullis({ ...base, audit: true })).toThrow(/needs the prune option/)
      expect(() => Portcullis({ ...base, audit: { retentionDays: 0 }, prune: { everyMinutes: 60, signal: AbortSignal.abort() } })).toThrow(/retentionDays must be a whole number/)
      const { writeAuditEvents: _dropped, ...adapter } = KnexAdapter(db.knex)
      expect(() => Portcullis({ ...base, adapter, audit: true, prune: { everyMinutes: 60, signal: AbortSignal.abort() } })).toThrow(/has no writeAuditEvents/)
    })

    it('records a sign-up’s verification, a refused and a good sign-in, a password change and a sign-out, with the request’s client, after each response', async () => {
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'ada@example.com')
      const userId = ((await db.knex('User').first('id')) as { id: string }).id
      const refused = await browser.request(`${url()}/api/auth/callback/password`, {
        body: new URLSearchParams({ csrfToken: await csrf(browser), email: 'ada@example.com', password: 'not the password at all' }),
        headers: { 'user-agent': 'Attacker/1.0', 'x-request-id': 'req-refused' },
      })
      expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('CredentialsSignin')
      const other = new Browser()
      await signIn(other, url(), 'ada@example.com', GOOD_PASSWORD)
      expect((await post(browser, url(), 'change-password', { currentPassword: GOOD_PASSWORD, password: NEW_PASSWORD })).status).toBe(302)
      await post(browser, url(), 'signout', {})

      const rows = await rowsOnceThere(db.knex, 9)
      const types = rows.map((row) => `${String(row.type)}:${String(row.outcome)}`)
      expect(types).toEqual(expect.arrayContaining(['user-created:success', 'email-verified:success', 'sign-in:success', 'sign-in:failure', 'password-changed:success', 'session-revoked:success', 'sign-out:success']))
      // The other browser's session, ended by the change, names what ended it.
      expect(rows.find((row) => row.type === 'session-revoked')).toMatchObject({ userId, reason: 'changePassword' })
      const failure = rows.find((row) => row.outcome === 'failure')!
      expect(failure).toMatchObject({ type: 'sign-in', userId: null, method: 'password', userAgent: 'Attacker/1.0', requestId: 'req-refused' })
      expect(String(failure.reason)).toMatch(/^CredentialsSignin/)
      expect(failure.ipAddress).toMatch(/^(127\.0\.0\.1|::1)$/)
      const good = rows.find((row) => row.type === 'sign-in' && row.outcome === 'success')!
      expect(good).toMatchObject({ userId, method: 'password' })
      expect(rows.find((row) => row.type === 'sign-out')).toMatchObject({ userId })
    })

    it('keeps no password, token, cookie or CSRF token in any row', async () => {
      mount()
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'grace@example.com')
      await signIn(new Browser(), url(), 'grace@example.com', 'a wrong password typed here')
      const token = await csrf(browser)
      await post(browser, url(), 'change-password', { currentPassword: GOOD_PASSWORD, password: NEW_PASSWORD })
      const rows = await rowsOnceThere(db.knex, 4)
      const stored = JSON.stringify(rows)
      const cookies = ['authjs.session-token', 'authjs.csrf-token'].map((name) => browser.cookie(url(), name)).filter((value): value is string => value !== undefined)
      expect(cookies).toHaveLength(2)
      for (const secret of [GOOD_PASSWORD, NEW_PASSWORD, 'a wrong password typed here', token, ...cookies, ...cookies.map((value) => value.split('|')[0]!)]) expect(stored).not.toContain(secret)
      const sessions = (await db.knex('Session').select('sessionToken')) as { sessionToken: string }[]
      for (const { sessionToken } of sessions) expect(stored).not.toContain(sessionToken)
    })

    it('a missing table costs the request nothing: the sign-in succeeds and the failed write is logged after it', async () => {
      const logger = recordingLogger()
      mount(true, logger)
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'lin@example.com')
      await db.knex.schema.renameTable('AuditEvent', 'AuditEventAway')
      try {
        const answer = await signIn(new Browser(), url(), 'lin@example.com', GOOD_PASSWORD)
        expect(answer.status).toBe(302)
        expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBeNull()
        for (let tries = 0; tries < 200 && !logger.codes('error').includes('AuditWriteFailed'); tries++) await new Promise((resolve) => setTimeout(resolve, 10))
        expect(logger.codes('error')).toContain('AuditWriteFailed')
      } finally {
        await db.knex.schema.renameTable('AuditEventAway', 'AuditEvent')
      }
    })

    it('a write that never ends holds no request: the sign-up, verification and sign-in answer while it hangs', async () => {
      const written: unknown[] = []
      const hanging = { ...KnexAdapter(db.knex), writeAuditEvents: (events: readonly unknown[]) => (written.push(...events), new Promise<void>(() => {})) }
      mountPasswordApp(rig.app, db.knex, rig.smtp, { adapter: hanging, audit: true, prune: { everyMinutes: 60, signal: AbortSignal.abort() } })
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'hang@example.com')
      const answer = await signIn(new Browser(), url(), 'hang@example.com', GOOD_PASSWORD)
      expect(new URL(answer.headers.get('location')!).searchParams.get('error')).toBeNull()
      // The rows reached the (hanging) write: they were made, and nothing waited for them.
      expect(written.length).toBeGreaterThanOrEqual(1)
    })

    it('listAuditEvents() gives the signed-in user their own events only; exportAuditEvents() pages through all as JSON lines', async () => {
      const auth = mount()
      // The function on a route of the app, as an app would serve a user's activity.
      auth.app.get('/activity', async (req, res) => {
        try {
          res.json(await auth.listAuditEvents(req, { ...(typeof req.query.userId === 'string' && { userId: req.query.userId }), ...(typeof req.query.type === 'string' && { type: req.query.type as AuditEvent['type'] }) }))
        } catch (error) {
          res.status(403).json({ type: (error as { type?: string }).type, code: (error as { code?: string }).code })
        }
      })
      const activity = async (browser: Browser, query: Record<string, string> = {}) => {
        const answer = await browser.request(`${url()}/activity?${new URLSearchParams(query)}`)
        return { status: answer.status, body: (await answer.json()) as (AuditEvent & { at: string })[] & { code?: string } }
      }
      const ada = new Browser()
      await verifiedUser(ada, url(), rig.smtp, 'ada2@example.com')
      const bob = new Browser()
      await verifiedUser(bob, url(), rig.smtp, 'bob@example.com')
      const users = (await db.knex('User').select('id', 'email')) as { id: string; email: string }[]
      const adaId = users.find((user) => user.email === 'ada2@example.com')!.id
      const bobId = users.find((user) => user.email === 'bob@example.com')!.id
      const all = await rowsOnceThere(db.knex, 6)

      const own = (await activity(ada)).body
      expect(own.length).toBeGreaterThanOrEqual(3)
      expect(own.every((event) => event.userId === adaId)).toBe(true)
      const times = own.map((event) => Date.parse(event.at))
      expect(times).toEqual([...times].sort((a, b) => b - a))
      expect((await activity(ada, { type: 'email-verified' })).body).toHaveLength(1)
      expect(await activity(ada, { userId: bobId })).toEqual({ status: 403, body: { type: 'Audit', code: 'forbidden' } })
      expect(await activity(new Browser())).toEqual({ status: 403, body: { type: 'Audit', code: 'not_signed_in' } })

      const lines: string[] = []
      for await (const line of auth.exportAuditEvents({ limit: 2 })) lines.push(line)
      expect(lines.every((line) => line.endsWith('\n'))).toBe(true)
      const exported = lines.map((line) => JSON.parse(line) as AuditEvent)
      expect(exported.map((event) => event.id).sort()).toEqual(all.map((row) => String(row.id)).sort())
    })

    it('with the roles option, audit:read lets an administrator read another user’s events and everyone’s; a user without it is refused', async () => {
      const access = defineAccess({ statements: { audit: ['read'] } })
      const auth = mountPasswordApp(rig.app, db.knex, rig.smtp, { audit: true, roles: access, prune: { everyMinutes: 60, signal: AbortSignal.abort() }, rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } } })
      auth.app.get('/activity', async (req, res) => {
        try {
          res.json(await auth.listAuditEvents(req, { userId: req.query.userId === 'all' ? null : String(req.query.userId) }))
        } catch (error) {
          res.status(403).json({ code: (error as { code?: string }).code })
        }
      })
      const carol = new Browser()
      await verifiedUser(carol, url(), rig.smtp, 'carol@example.com')
      const dave = new Browser()
      await verifiedUser(dave, url(), rig.smtp, 'dave@example.com')
      const id = async (email: string) => ((await db.knex('User').where({ email }).first('id')) as { id: string }).id
      const [carolId, daveId] = [await id('carol@example.com'), await id('dave@example.com')]
      await auth.setRoles(daveId, ['admin'])
      // A role change ends a JWT session through the store; these are database sessions: at once.
      for (let tries = 0; tries < 200 && (await db.knex('AuditEvent').where({ userId: carolId, type: 'email-verified' })).length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10))

      const asAdmin = (await (await dave.request(`${url()}/activity?userId=${carolId}`)).json()) as AuditEvent[]
      expect(asAdmin.length).toBeGreaterThanOrEqual(2)
      expect(asAdmin.every((event) => event.userId === carolId)).toBe(true)
      const everyone = (await (await dave.request(`${url()}/activity?userId=all`)).json()) as AuditEvent[]
      expect(everyone.some((event) => event.userId === carolId) && everyone.some((event) => event.userId === daveId)).toBe(true)
      const refused = await carol.request(`${url()}/activity?userId=${daveId}`)
      expect([refused.status, await refused.json()]).toEqual([403, { code: 'forbidden' }])
    })

    it('the prune deletes events past the retention; a deleted user’s events stay, naming nobody', async () => {
      mount({ retentionDays: 30 })
      const adapter = KnexAdapter(db.knex)
      const old = { id: '00000000-0000-4000-8000-000000000001', at: new Date(Date.now() - 31 * 86_400_000), type: 'sign-in', outcome: 'success', userId: null, actorId: null, target: null, method: 'password', reason: null, ipAddress: null, userAgent: null, requestId: null, details: null } as const
      await adapter.writeAuditEvents([old, { ...old, id: '00000000-0000-4000-8000-000000000002', at: new Date() }])
      expect(await adapter.pruneAuditEvents(new Date(Date.now() - 30 * 86_400_000))).toBe(1)
      const kept = (await adapter.listAuditEvents({ limit: 1000 })).map((event) => event.id)
      expect(kept).toContain('00000000-0000-4000-8000-000000000002')
      expect(kept).not.toContain('00000000-0000-4000-8000-000000000001')

      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'gone@example.com')
      const userId = ((await db.knex('User').where({ email: 'gone@example.com' }).first('id')) as { id: string }).id
      // Once the verification's events are written (they follow the responses).
      for (let tries = 0; tries < 200 && (await db.knex('AuditEvent').where({ userId, type: 'email-verified' })).length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10))
      const before = ((await db.knex('AuditEvent').where({ userId }).select('id')) as { id: string }[]).map((row) => row.id)
      expect(before.length).toBeGreaterThanOrEqual(2)
      await adapter.deleteUser(userId)
      const rows = (await db.knex('AuditEvent').whereIn('id', before).select('*')) as Record<string, unknown>[]
      expect(rows.map((row) => row.id).sort()).toEqual([...before].sort())
      expect(rows.map((row) => row.userId)).toEqual(before.map(() => null))
      expect(await db.knex('AuditEvent').where({ userId })).toEqual([])
    })
  })
}

async function csrf(browser: Browser): Promise<string> {
  return ((await (await browser.request(`${rig.app.url}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
}
