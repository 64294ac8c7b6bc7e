/**
 * The JavaScript code blocks of the guides, run as written (the TypeScript ones are type-checked by
 * snippets.test.ts): the CommonJS entry points with plain `node`, and the rate-limit table's
 * migration on MariaDB, the database its collation is written for.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { RateLimiterMySQL } from 'rate-limiter-flexible'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The ```js blocks of a guide, in order. */
function jsBlocks(guide: string): string[] {
  return [...readFileSync(join(root, 'docs', guide), 'utf8').matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
}

describe('the ```js blocks', () => {
  it('are the two this test runs (a new one needs a test too)', () => {
    const guides = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'))
    const counts = Object.fromEntries(guides.map((guide) => [guide, jsBlocks(guide).length]).filter(([, count]) => count !== 0))
    expect(counts).toEqual({ 'getting-started.md': 1, 'rate-limits.md': 1 })
    expect(readFileSync(join(root, 'README.md'), 'utf8')).not.toMatch(/^```js$/m)
  })
})

describe('getting-started.md: CommonJS', () => {
  let dir: string
  beforeAll(() => {
    // An app of its own, with this checkout installed as `portcullis` (and express beside it).
    dir = mkdtempSync(join(tmpdir(), 'portcullis-cjs-'))
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(root, join(dir, 'node_modules/portcullis'), 'dir')
    symlinkSync(join(root, 'node_modules/express'), join(dir, 'node_modules/express'), 'dir')
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('runs with plain node: the init function, a provider factory and portcullis/jwt from require()', () => {
    const [block] = jsBlocks('getting-started.md')
    const file = join(dir, 'app.cjs')
    writeFileSync(file, `${block}\nif (typeof handlers !== 'function' || typeof auth !== 'function' || typeof encode !== 'function' || typeof decode !== 'function' || typeof getToken !== 'function') process.exit(3)\nconsole.log('ok')\n`)
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8', env: { ...process.env, AUTH_SECRET: 'a-test-secret-that-is-at-least-32-chars', NODE_ENV: 'development' } })
    expect({ status: run.status, stdout: run.stdout.trim(), stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stdout: 'ok', stderr: '' })
  })
})

await describeWithDatabase('mariadb', 'rate-limits.md: the rate-limit table on MariaDB', (server) => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await server.createDatabase()
  })
  afterAll(() => db?.destroy())

  it('creates a table rate-limiter-flexible counts in, with the expiry index pruning uses', async () => {
    const [block] = jsBlocks('rate-limits.md')
    await new Function('knex', `return (async () => {\n${block}\n})()`)(db.knex)
    const limiter = new RateLimiterMySQL({ storeClient: db.knex, storeType: 'knex', dbName: db.knex.client.database(), tableName: 'portcullis_rate_limit', tableCreated: true, points: 2, duration: 60 })
    await limiter.consume('ip:192.0.2.1')
    expect((await limiter.get('ip:192.0.2.1'))?.consumedPoints).toBe(1)
    const [indexes] = (await db.knex.raw("show index from portcullis_rate_limit where Key_name = 'portcullis_rate_limit_expire_index'")) as [unknown[]]
    expect(indexes).toHaveLength(1)
  })
})
