/**
 * docs/configuration.md's logging recipes (pino, winston), run as written: each block is compiled
 * and imported by a small app in a process of its own (their loggers write to stdout), which
 * signs in, fails a sign-in whose `authorize` throws, and signs out. The lines must carry the code,
 * the request's fields and the events, and none of the password, the secret or a cookie.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'

const root = fileURLToPath(new URL('../..', import.meta.url))
const SECRET = 'recipe-secret-0123456789abcdef-0123456789'
const PASSWORD = 'recipe-password-hunter2'

/** The ```ts block of configuration.md that imports `name`. */
function recipe(name: string): string {
  const blocks = [...readFileSync(join(root, 'docs/configuration.md'), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
  const found = blocks.filter((block) => block.includes(`import ${name} from '${name}'`))
  expect(found).toHaveLength(1)
  return found[0]!
}

// Signs in (events signIn), fails a sign-in whose authorize throws (an error line), signs out (signOut).
const driver = `
import { createServer } from 'node:http'
import Portcullis from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { logging } from './recipe.mjs'

const { handlers } = Portcullis({
  secret: ${JSON.stringify(SECRET)},
  providers: [Credentials({ authorize: async ({ username, password }) => {
    if (username === 'boom') throw new Error('the user directory is down')
    return password === ${JSON.stringify(PASSWORD)} ? { id: 'user-1', name: 'Ada' } : null
  } })],
  ...logging,
})
const server = createServer((req, res) => handlers(req, res))
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const base = 'http://127.0.0.1:' + server.address().port + '/api/auth'
const csrf = await fetch(base + '/csrf')
let cookie = csrf.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
const { csrfToken } = await csrf.json()
const post = (path, fields, headers = {}) => fetch(base + path, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers }, body: new URLSearchParams({ csrfToken, ...fields }) })
await post('/callback/credentials', { username: 'boom', password: ${JSON.stringify(PASSWORD)} }, { 'x-request-id': 'req-42' })
const signIn = await post('/callback/credentials', { username: 'ada', password: ${JSON.stringify(PASSWORD)} })
cookie += '; ' + signIn.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
process.stderr.write('COOKIES ' + cookie + '\\n')
await post('/signout', {})
server.close()
`

describe.each(['pino', 'winston'])('the %s recipe', (name) => {
  let dir: string
  let lines: Record<string, unknown>[]
  let output: string
  let cookies: string

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `portcullis-${name}-recipe-`))
    mkdirSync(join(dir, 'node_modules'))
    symlinkSync(root, join(dir, 'node_modules/portcullis'), 'dir')
    symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir')
    const compiled = ts.transpileModule(recipe(name), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true } })
    writeFileSync(join(dir, 'recipe.mjs'), compiled.outputText)
    writeFileSync(join(dir, 'app.mjs'), driver)
    const run = spawnSync(process.execPath, ['app.mjs'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'development' } })
    expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' })
    output = run.stdout
    cookies = /^COOKIES (.*)$/m.exec(run.stderr)?.[1] ?? ''
    lines = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  const messageOf = (line: Record<string, unknown>) => line['msg'] ?? line['message']

  it("writes the failed sign-in as one line with its code, message and the request's fields", () => {
    const failure = lines.filter((line) => line['code'] === 'CallbackRouteError')
    expect(failure).toHaveLength(1)
    expect(failure[0]).toMatchObject({ requestId: 'req-42', method: 'POST', route: '/api/auth/callback/credentials', provider: 'credentials' })
    expect(messageOf(failure[0]!)).toMatch(/the user directory is down/)
    expect(failure[0]!['level']).toBe(name === 'pino' ? 50 : 'error')
  })

  it("writes each event through '*' with its identifiers", () => {
    const events = lines.filter((line) => 'event' in line)
    expect(events.map((line) => [line['event'], line['userId'], line['provider']])).toEqual([
      ['signIn', 'user-1', 'credentials'],
      ['signOut', 'user-1', undefined],
    ])
    expect(events[0]).toMatchObject({ isNewUser: false })
    expect(messageOf(events[0]!)).toBe('auth event signIn')
  })

  it('writes no password, secret or cookie', () => {
    expect(cookies).toMatch(/authjs\.session-token=/)
    const values = [PASSWORD, SECRET, ...cookies.split('; ').map((pair) => pair.slice(pair.indexOf('=') + 1))].filter((value) => value.length >= 8)
    expect(values.length).toBeGreaterThanOrEqual(4)
    for (const value of values) expect(output).not.toContain(value)
  })
})
