/**
 * JWT sessions with `session.store`: the session list's contract (contract.ts) on each store:
 * memory, a Knex table on SQLite, PostgreSQL and MariaDB, and Redis.
 */
import { afterAll, beforeAll, describe } from '@jest/globals'
import type { Knex } from 'knex'
import type { SessionStoreOption } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { authApp } from '../support/app-rig.js'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { describeWithRedis } from '../support/redis.js'
import { sessionListContract, type SessionsApp } from './contract.js'

const anyone = Credentials({ authorize: async ({ username }) => ({ id: `user-${String(username)}`, name: String(username) }) })

function jwtApp(store: SessionStoreOption): SessionsApp {
  const revoked: SessionsApp['revoked'] = []
  const { app } = authApp({
    secret: SECRET,
    trustHost: true,
    providers: [anyone],
    session: { strategy: 'jwt', store },
    events: { sessionRevoked: (message) => void revoked.push(message) },
  })
  return { app, revoked, cookieName: 'authjs.session-token' }
}

describe('JWT sessions, memory store', () => {
  sessionListContract(() => jwtApp('memory'))
})

for (const kind of ['sqlite', 'postgres', 'mariadb'] as const) {
  await describeWithDatabase(kind, `JWT sessions, Knex store on ${kind}`, (server) => {
    let db: TestDatabase
    beforeAll(async () => {
      db = await server.createDatabase()
    })
    afterAll(() => db?.destroy())
    sessionListContract(async () => {
      const knex: Knex = db.knex
      if (await knex.schema.hasTable('portcullis_session_store')) await knex('portcullis_session_store').del()
      return jwtApp({ knex })
    })
  })
}

await describeWithRedis('JWT sessions, Redis store', (server) => {
  afterAll(() => server.cleanUp())
  sessionListContract(() => jwtApp({ redis: server.connect(), keyPrefix: server.uniqueKeyPrefix() }))
})
