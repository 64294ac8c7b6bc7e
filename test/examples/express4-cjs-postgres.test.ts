/**
 * Runs examples/express4-cjs-postgres as its README says (`npm start`: the Knex CLI's
 * `migrate:latest`, then `node server.js`) in a copy of the folder whose node_modules holds Express 4
 * and this repository as `portcullis` (symlinks, as `npm install` would lay them out without the
 * network), against a fresh PostgreSQL database. Then signs in with credentials, reads the
 * database session, and signs out, watching the Session table.
 *
 * PostgreSQL down: the suite skips with a line saying so, unless CI is set (test/support/databases.ts).
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Knex } from 'knex'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { startExampleProcess, type ExampleProcess } from '../support/example-process.js'
import { examplePort } from '../support/ports.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const example = join(root, 'examples/express4-cjs-postgres')

/** The example's files and a node_modules as `npm install` lays it out: Express 4 under its own name. */
function copyExample(): string {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-express4-cjs-'))
  for (const file of ['package.json', 'knexfile.js', 'app.js', 'server.js']) cpSync(join(example, file), join(dir, file))
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true })
  symlinkSync(root, join(dir, 'node_modules/portcullis'), 'dir')
  symlinkSync(join(root, 'node_modules/express4'), join(dir, 'node_modules/express'), 'dir')
  for (const dep of ['knex', 'pg']) symlinkSync(join(root, 'node_modules', dep), join(dir, 'node_modules', dep), 'dir')
  symlinkSync('../knex/bin/cli.js', join(dir, 'node_modules/.bin/knex'))
  return dir
}

function postgresUrl(config: Knex.Config): string {
  const { host, port, user, password, database } = config.connection as { host: string; port: number; user: string; password?: string; database: string }
  const auth = password ? `${encodeURIComponent(user)}:${encodeURIComponent(password)}` : encodeURIComponent(user)
  return `postgres://${auth}@${host}:${port}/${database}`
}

await describeWithDatabase('postgres', 'examples/express4-cjs-postgres (npm start on PostgreSQL)', (pg) => {
  let database: TestDatabase
  let dir: string
  let started: ExampleProcess
  const port = examplePort()
  const origin = `http://localhost:${port}`

  beforeAll(async () => {
    if (!existsSync(join(root, 'dist/cjs/index.cjs'))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
    database = await pg.createDatabase()
    dir = copyExample()
    // Its own process group, so that npm, its shell and node all stop together at the end.
    started = await startExampleProcess('npm', ['start'], {
      cwd: dir,
      detached: true,
      env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: postgresUrl(database.config), PORT: String(port), AUTH_SECRET: 'test-secret-for-the-express4-example-0123456789', AUTH_TRUST_HOST: 'true' },
      ready: 'running at',
      name: 'npm start',
    })
  })

  afterAll(async () => {
    await started?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
    await database?.destroy()
  })

  it('runs on Express 4, from CommonJS, after the Knex CLI created the tables', async () => {
    expect(execFileSync(process.execPath, ['-p', "require('express/package.json').version"], { cwd: dir, encoding: 'utf8' })).toMatch(/^4\./)
    // Every migration the package ships, in order, in one batch.
    const shipped = readdirSync(new URL('../../migrations/', import.meta.url)).filter((name) => /^\d{14}_portcullis_.*\.js$/.test(name)).sort()
    expect(shipped.length).toBeGreaterThanOrEqual(4)
    expect(started.output).toMatch(new RegExp(`Batch 1 run: ${shipped.length} migrations`))
    const migrations = await database.knex('knex_migrations').orderBy('id').pluck('name')
    expect(migrations).toEqual(shipped)
    const home = await fetch(`${origin}/`)
    expect(await home.text()).toContain('Express 4 (CommonJS) and PostgreSQL')
  })

  it('signs in with credentials into a database session, serves it, and signs out', async () => {
    const browser = new Browser()
    expect((await browser.request(`${origin}/me`)).status).toBe(401)
    const dashboard = await browser.request(`${origin}/dashboard`, { headers: { accept: 'text/html' } })
    expect(dashboard.status).toBe(302)

    const { csrfToken } = (await (await browser.request(`${origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const wrong = await browser.request(`${origin}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken, username: 'ada', password: 'wrong' }) })
    expect(new URL(wrong.headers.get('location')!).searchParams.get('error')).toBe('CredentialsSignin')

    const signIn = await browser.request(`${origin}/api/auth/callback/credentials`, {
      body: new URLSearchParams({ csrfToken, username: 'ada', password: 'lovelace', callbackUrl: `${origin}/dashboard` }),
    })
    expect(signIn.headers.get('location')).toBe(`${origin}/dashboard`)
    const me = (await (await browser.request(`${origin}/me`)).json()) as { user: { id: string; email: string } }
    expect(me.user.email).toBe('ada@example.com')
    expect(await (await browser.request(`${origin}/dashboard`)).text()).toBe('Welcome, Ada Lovelace.\n')

    // A database session: the cookie is the row's token.
    const sessions = await database.knex('Session').where({ userId: me.user.id })
    expect(sessions).toHaveLength(1)
    expect(sessions[0].sessionToken).toBe(browser.cookie(origin, 'authjs.session-token'))

    const fresh = (await (await browser.request(`${origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    const signOut = await browser.request(`${origin}/api/auth/signout`, { body: new URLSearchParams({ csrfToken: fresh.csrfToken }) })
    expect(signOut.headers.get('location')).toBe(`${origin}/`)
    expect(await database.knex('Session').where({ userId: me.user.id })).toHaveLength(0)
    expect((await browser.request(`${origin}/me`)).status).toBe(401)
  })
})
