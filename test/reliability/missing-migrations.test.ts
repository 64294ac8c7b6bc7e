/**
 * A database whose migrations were never run (issue 23: the visitor saw "temporarily unavailable",
 * the log said only `no such table: User`, and an app's `await auth(req, res)` reached Express's
 * stack page with the driver's error). On SQLite, PostgreSQL and MariaDB: the log line says to run
 * `npx knex migrate:latest`, and `auth(req, res)` rejects with an AdapterError that says the same.
 */
import express from 'express'
import knex, { type Knex } from 'knex'
import request from 'supertest'
import { afterAll, beforeAll, expect, it, jest } from '@jest/globals'
import Portcullis, { AdapterError, type LoggerInstance } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { SECRET, credentialsProvider } from '../support/flow.js'

const RUN_MIGRATIONS = 'Run the migrations: `npx knex migrate:latest`'

function createApp(db: Knex) {
  const logger = { error: jest.fn<LoggerInstance['error']>(), warn: jest.fn<LoggerInstance['warn']>(), debug: jest.fn<LoggerInstance['debug']>() }
  const { handlers, auth } = Portcullis({ secret: SECRET, providers: [credentialsProvider], adapter: KnexAdapter(db), logger })
  const errors: unknown[] = []
  const app = express()
  app.use('/api/auth', handlers)
  // As the README writes it: no try/catch, Express 5 passes the rejection on.
  app.get('/me', async (req, res) => {
    res.json(await auth(req, res))
  })
  app.use((error: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
    errors.push(error)
    next(error) // on to Express's own error page
  })
  return { app, logger, errors }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `an un-migrated ${kind} database`, (server) => {
    let db: TestDatabase
    beforeAll(async () => {
      db = await server.createDatabase()
    })
    afterAll(() => db?.destroy())

    it('auth(req, res) rejects with an AdapterError that says to run the migrations; the log line says it too', async () => {
      const { app, logger, errors } = createApp(db.knex)
      const page = await request(app).get('/me').set('Cookie', 'authjs.session-token=0123456789abcdef').expect(503)
      expect(errors).toHaveLength(1)
      const [error] = errors as AdapterError[]
      expect(error).toBeInstanceOf(AdapterError)
      expect(error!.method).toBe('getSessionAndUser')
      expect(error!.message).toMatch(/^The adapter's getSessionAndUser\(\) failed: its table (\S+\.)?"?(Session|User)"? does not exist\./)
      expect(error!.message).toContain(RUN_MIGRATIONS)
      // Express's page (development mode) shows that message, not the driver's.
      expect(page.text).toContain('npx knex migrate:latest')
      expect(logger.error).toHaveBeenCalledTimes(1)
      expect(logger.error).toHaveBeenCalledWith('AdapterError', expect.stringContaining(RUN_MIGRATIONS), expect.any(String))
    })

    it('a sign-in sends the visitor to the error page and logs the same advice', async () => {
      const { app, logger } = createApp(db.knex)
      const agent = request.agent(app)
      const { body } = await agent.get('/api/auth/csrf')
      const response = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken: body.csrfToken, username: 'ada', password: 'lovelace' })
      expect(response.status).toBe(302)
      expect(response.headers.location).toContain('error=')
      expect(logger.error.mock.calls.filter(([code]) => code === 'AdapterError').map(([, message]) => message)).toEqual([expect.stringContaining(RUN_MIGRATIONS)])
    })
  })
}

it('says nothing about migrations for other database errors', async () => {
  const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.destroy()
  const { app, errors } = createApp(db)
  await request(app).get('/me').set('Cookie', 'authjs.session-token=0123456789abcdef').expect(503)
  expect(errors).toEqual([expect.any(AdapterError)])
  expect((errors[0] as Error).message).toBe("The adapter's getSessionAndUser() failed.")
})
