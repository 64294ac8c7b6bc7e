/**
 * Database errors carry the query's values: Knex writes the SQL with its bound values into the
 * message (`where "sessionToken" = '…'`), mysql2 keeps the SQL in `sql`, pg the row in `detail`
 * (`Key ("sessionToken")=(…) already exists`). None of that may reach a log line or an error the app
 * receives, not even through `cause`: the logger and the app's error handler here print every
 * argument to the bottom (`cause`, non-enumerable properties, stacks). What stays is what an operator
 * needs: the driver's code and the table.
 *
 * The database is broken for real, on SQLite, PostgreSQL and MariaDB: a table renamed away (the
 * session read with a live token, and an `authorize` that calls the adapter as the README shows),
 * and a duplicate session token (createSession).
 */
import { randomBytes } from 'node:crypto'
import { inspect } from 'node:util'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import express from 'express'
import request from 'supertest'
import Portcullis, { type PortcullisConfig } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { describeWithDatabase, type DatabaseKind, type TestDatabase } from '../support/databases.js'
import { SECRET, setCookie, signInWithPassword } from '../support/flow.js'
import { describeError, redactError } from '../../src/events.js'

const EMAIL = 'ada@example.com'
const PASSWORD = 'correct-horse-battery-staple'
const SESSION_COOKIE = 'authjs.session-token'

/** The drivers' codes for the two failures. */
const CODES: Record<DatabaseKind, { missingTable: string; duplicate: string }> = {
  sqlite: { missingTable: 'SQLITE_ERROR', duplicate: 'SQLITE_CONSTRAINT_UNIQUE' },
  postgres: { missingTable: '42P01', duplicate: '23505' },
  mariadb: { missingTable: 'ER_NO_SUCH_TABLE', duplicate: 'ER_DUP_ENTRY' },
}

/** Everything a value holds, as text: nested objects, causes, non-enumerable properties, stacks. */
function deepText(value: unknown): string {
  const seen = new Set<unknown>()
  const parts = [inspect(value, { depth: Infinity, showHidden: true, getters: true, maxArrayLength: Infinity, maxStringLength: Infinity })]
  const walk = (item: unknown): void => {
    if (item === null || typeof item !== 'object') return void parts.push(String(item))
    if (seen.has(item)) return
    seen.add(item)
    if (item instanceof Error) parts.push(item.name, item.message, item.stack ?? '')
    for (const key of Reflect.ownKeys(item)) walk((item as Record<PropertyKey, unknown>)[key])
  }
  walk(value)
  return parts.join('\n')
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `database errors in logs and causes (${kind})`, (server) => {
    let db: TestDatabase
    beforeAll(async () => {
      db = await server.createDatabase()
      await db.knex.migrate.latest({ migrationSource: migrationSource() })
      await KnexAdapter(db.knex).createUser({ id: crypto.randomUUID(), name: 'Ada Lovelace', email: EMAIL, emailVerified: null })
    })
    afterAll(() => db?.destroy())

    /** Everything the logger and the app's error handler printed. */
    let output: string[]
    beforeEach(() => void (output = []))
    const printed = () => output.join('\n')

    /**
     * The README's credentials setup (authorize checks the password, then asks the adapter for the
     * user), a logger and an error handler that print everything, `/me` (auth()) and `/login` (the
     * server-side signIn).
     */
    function createApp(config: Partial<PortcullisConfig> = {}) {
      const print = (...args: unknown[]) => void output.push(deepText(args))
      const adapter = KnexAdapter(db.knex)
      const credentials = Credentials({
        credentials: { email: { label: 'E-mail' }, password: { label: 'Password', type: 'password' } },
        authorize: async ({ email, password }) => (password === PASSWORD ? adapter.getUserByEmail(String(email)) : null),
      })
      const { handlers, auth, signIn } = Portcullis({ secret: SECRET, adapter, providers: [credentials], debug: true, logger: { error: print, warn: print, debug: print }, ...config })
      const app = express()
      app.use('/api/auth', handlers)
      app.get('/me', async (req, res, next) => {
        try {
          res.json(await auth(req, res))
        } catch (error) {
          next(error)
        }
      })
      app.post(
        '/login',
        express.urlencoded({ extended: false }),
        auth(async (req: express.Request, res: express.Response, next: express.NextFunction) => {
          try {
            res.json({ url: await signIn('credentials', { ...req.body, redirect: false, skipCsrfCheck: true }) })
          } catch (error) {
            next(error)
          }
        }),
      )
      app.use((error: Error & { type?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        print('error handler', error)
        res.status(500).json({ type: error.type })
      })
      return app
    }

    /** Renames `table` away while `run` runs, so every query on it fails. */
    async function withoutTable(table: string, run: () => Promise<void>): Promise<void> {
      await db.knex.schema.renameTable(table, `${table}_away`)
      try {
        await run()
      } finally {
        await db.knex.schema.renameTable(`${table}_away`, table)
      }
    }

    it('a failing session read: no live session token in the log or in the AdapterError the app gets, but the code and the table', async () => {
      const app = createApp()
      const agent = request.agent(app)
      const token = setCookie(await signInWithPassword(agent, { email: EMAIL, password: PASSWORD }), SESSION_COOKIE)!.split(';')[0]!.split('=')[1]!
      expect(token).toMatch(/^[0-9a-f]{64}$/)

      await withoutTable('Session', async () => {
        expect((await agent.get('/api/auth/session').expect(503)).body).toMatchObject({ error: 'AdapterError' })
        expect((await agent.get('/me').expect(500)).body).toEqual({ type: 'AdapterError' })
      })
      expect(printed()).toContain('getSessionAndUser')
      expect(printed()).toContain(CODES[kind].missingTable)
      expect(printed()).toContain('Session')
      expect(printed()).not.toContain(token)
    })

    it('an authorize that calls the adapter on a broken database: no e-mail or password in the log or in the CallbackRouteError, but the code and the table', async () => {
      const app = createApp()
      await withoutTable('User', async () => {
        const agent = request.agent(app)
        const failed = await signInWithPassword(agent, { email: EMAIL, password: PASSWORD })
        expect(failed.headers.location).toMatch(/\/api\/auth\/error\?error=Configuration$/)
        expect((await request(app).post('/login').type('form').send({ email: EMAIL, password: PASSWORD }).expect(500)).body).toEqual({ type: 'CallbackRouteError' })
      })
      expect(printed()).toContain('authorize()')
      expect(printed()).toContain(CODES[kind].missingTable)
      expect(printed()).toContain('User')
      expect(printed()).not.toContain(EMAIL)
      expect(printed()).not.toContain(PASSWORD)
    })

    it('a failing createSession (a duplicate session token): no token in the log or in the AdapterError, but the code and the table', async () => {
      const token = `${'ab'.repeat(31)}${kind.slice(0, 2)}`
      const app = createApp({ session: { generateSessionToken: () => token } })
      const first = await signInWithPassword(request.agent(app), { email: EMAIL, password: PASSWORD })
      expect(setCookie(first, SESSION_COOKIE)).toContain(token)

      const agent = request.agent(app)
      const second = await signInWithPassword(agent, { email: EMAIL, password: PASSWORD })
      expect(second.headers.location).toMatch(/\/api\/auth\/error\?error=AdapterError$/)
      expect((await request(app).post('/login').type('form').send({ email: EMAIL, password: PASSWORD }).expect(500)).body).toEqual({ type: 'AdapterError' })
      expect(printed()).toContain('createSession')
      expect(printed()).toContain(CODES[kind].duplicate)
      expect(printed()).toContain('Session')
      expect(printed()).not.toContain(token)
      await db.knex('Session').where({ sessionToken: token }).delete()
    })
  })
}

/**
 * redactError's two layers, each on its own, on the errors the drivers really throw through Knex
 * (better-sqlite3, pg, mysql2): the SQL that Knex writes into the message with its bound values,
 * and the quoted literals of the driver's own message, go whatever the caller passes as `values`;
 * and a value the caller names is blanked wherever else it appears (a raw query that wrote it into
 * the SQL text instead of binding it). Each layer must hold when the other would miss.
 */
for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `redactError on ${kind} errors`, (server) => {
    let db: TestDatabase
    beforeAll(async () => {
      db = await server.createDatabase()
      await db.knex.migrate.latest({ migrationSource: migrationSource() })
    })
    afterAll(() => db?.destroy())

    /** A value that only this test could have put into the error. */
    const secretValue = () => `tok${randomBytes(12).toString('hex')}`
    const failure = (query: PromiseLike<unknown>) => Promise.resolve(query).then(() => { throw new Error('the query was expected to fail') }, (error: unknown) => error as Error & Record<string, unknown>)

    describe('the SQL and its literals go without any values given', () => {
      // Knex writes the bound values into the message on SQLite and MariaDB (PostgreSQL keeps `$1`
      // there); PostgreSQL's own message quotes a value its column type refuses.
      const leakingQueries: Record<DatabaseKind, { what: string; run: (token: string) => PromiseLike<unknown>; code: string; names: string }> = {
        sqlite: { what: 'a query on a missing table', run: (token) => db.knex('Session_away').where({ sessionToken: token }).first(), code: 'SQLITE_ERROR', names: 'Session_away' },
        mariadb: { what: 'a query on a missing table', run: (token) => db.knex('Session_away').where({ sessionToken: token }).first(), code: 'ER_NO_SUCH_TABLE', names: 'Session_away' },
        postgres: { what: 'a value its column type refuses', run: (token) => db.knex('Session').where({ expires: token }).first(), code: '22007', names: 'timestamp' },
      }
      const leaking = leakingQueries[kind]

      it(`${leaking.what}: the token leaves the message, the code and the names stay`, async () => {
        const token = secretValue()
        const error = await failure(leaking.run(token))
        expect(deepText(error)).toContain(token) // the premise: the driver's error holds it
        const redacted = redactError(error)
        expect(deepText(redacted)).not.toContain(token)
        expect(describeError(error)).not.toContain(token)
        expect(redacted.code).toBe(leaking.code)
        expect(redacted.message).toContain(leaking.names)
        expect(redacted.message).not.toMatch(/^\s*select\b/i)
      })

      it('a duplicate key: the token leaves the message and every property, the code and the constraint stay', async () => {
        const user = crypto.randomUUID()
        await db.knex('User').insert({ id: user, email: `${user}@example.com` })
        const token = secretValue()
        const row = { sessionToken: token, userId: user, expires: new Date(Date.now() + 60_000) }
        await db.knex('Session').insert({ id: crypto.randomUUID(), ...row })
        const error = await failure(db.knex('Session').insert({ id: crypto.randomUUID(), ...row }))
        expect(deepText(error)).toContain(token)
        const redacted = redactError(error)
        expect(deepText(redacted)).not.toContain(token)
        expect(describeError(error)).not.toContain(token)
        expect(redacted.code).toBe(CODES[kind].duplicate)
        expect(describeError(error)).toMatch(/session_?token/i)
      })
    })

    describe('the values given go wherever they are, SQL or not', () => {
      it('a raw query that wrote the token into its SQL text instead of binding it', async () => {
        const token = secretValue()
        const error = await failure(db.knex.raw(`select * from ?? where ?? = ${token}`, ['User', 'email']))
        expect(deepText(error)).toContain(token)
        for (const values of [[token], [{ sessionToken: token, userId: 'u1' }]]) {
          const redacted = redactError(error, values)
          expect(deepText(redacted)).not.toContain(token)
          expect(redacted.message).toContain('[redacted]')
          expect(describeError(redactError(error, values))).not.toContain(token)
        }
      })

      it('an error of the app’s own adapter code, with no SQL at all', () => {
        const email = 'ada.lovelace@example.com'
        const redacted = redactError(new Error(`no user with address ${email} in the directory`), [{ email, id: 'abc' }])
        expect(redacted.message).toBe('no user with address [redacted] in the directory')
      })
    })
  })
}
