/**
 * README recipes, run as written: the snake_case preset next to the app's own migrations. (The
 * `req.auth` augmentation recipe is type-checked by test/build/smoke.test.ts; the custom sign-in
 * form by test/auth/forms.test.ts.)
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import knex, { type Knex } from 'knex'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'

describe('snake_case tables with the app’s own migrations', () => {
  let dir: string
  let db: Knex
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'portcullis-recipe-'))
    await writeFile(
      join(dir, '20261201000000_notes.cjs'),
      `exports.up = (knex) => knex.schema.createTable('notes', (t) => { t.increments('id'); t.string('user_id').references('id').inTable('users').onDelete('CASCADE') })
exports.down = (knex) => knex.schema.dropTable('notes')
`,
    )
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  })
  afterAll(async () => {
    await db?.destroy()
    await rm(dir, { recursive: true, force: true })
  })

  it('runs both, each with its own history table, again and again', async () => {
    const naming = 'snake_case'
    for (let run = 0; run < 2; run++) {
      // As in the README: Portcullis's history apart from the app's, or each run calls the other's files missing.
      await db.migrate.latest({ migrationSource: migrationSource({ naming }), tableName: 'portcullis_migrations' })
      await db.migrate.latest({ directory: dir, loadExtensions: ['.cjs'] })
    }
    const user = await KnexAdapter(db, { naming }).createUser({ name: 'Ada', email: 'ada@example.com', emailVerified: null })
    await db('notes').insert({ user_id: user.id })
    expect(await db('notes').where({ user_id: user.id }).count({ n: '*' })).toEqual([{ n: 1 }])
  })

  it('fails with one shared history table: the reason for tableName', async () => {
    const shared = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    try {
      await shared.migrate.latest({ migrationSource: migrationSource({ naming: 'snake_case' }) })
      await expect(shared.migrate.latest({ directory: dir, loadExtensions: ['.cjs'] })).rejects.toThrow(/corrupt/)
    } finally {
      await shared.destroy()
    }
  })
})
