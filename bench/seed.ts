/**
 * Database sessions for the benches (bench/database.ts, and the HTTP bench's database apps in
 * bench/http-apps.ts): user `i` and one session for it, for i = 0 … count - 1, created through the
 * adapter as sign-ins create them. Eight transactions run side by side, each creating its share in
 * turn: on PostgreSQL the round trips of one connection were most of the seeding (5,000 users and
 * sessions in one transaction: 4.75 s on a slow machine). SQLite's one connection takes them in turn.
 */
import type { Knex } from 'knex'
import type { Adapter, AdapterUser } from '../src/types.js'

const TRANSACTIONS = 8

export interface SeededSession {
  user: Omit<AdapterUser, 'id'>
  sessionToken: string
}

export async function seedSessions(db: Knex, adapterOf: (trx: Knex) => Adapter, count: number, expires: Date, session: (i: number) => SeededSession): Promise<void> {
  const share = Math.ceil(count / TRANSACTIONS)
  await Promise.all(
    Array.from({ length: TRANSACTIONS }, (_, t) =>
      db.transaction(async (trx) => {
        const adapter = adapterOf(trx)
        for (let i = t * share; i < Math.min(count, (t + 1) * share); i++) {
          const { user, sessionToken } = session(i)
          const created = await adapter.createUser!(user)
          await adapter.createSession!({ sessionToken, userId: created.id, expires })
        }
      }),
    ),
  )
}
