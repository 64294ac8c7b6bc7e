/**
 * Cold-start benchmark (`npm run bench`): `import` and init with five providers (credentials,
 * OpenID Connect, OAuth 2, GitHub, Google; dummy ids and issuers, nothing fetched) in a fresh `node`
 * process, on the BUILT package (dist/, what `npm install portcullis` gives; built first when missing or stale).
 *
 *   Portcullis       import 'portcullis' and the five providers' entry points, then Portcullis(config)
 *   @auth/express    import ExpressAuth and the same five providers, then ExpressAuth(config)
 *
 * Both processes import express first, untimed: any app using either has it loaded already, and
 * @auth/express imports it itself. Timed inside the child with performance.now(): import (the
 * library and its providers) and init (the config call). `process` is the whole child from spawn
 * to exit, Node's own start-up included; a bare `node -e ''` is printed for reference. The rows
 * take turns, 8 spawns each (BENCH_ROUNDS; BENCH_QUICK=1: 5); medians, spread (min–max) and × the first row.
 *
 * Target (issue 2): Portcullis import + init < 150 ms.
 */
import { spawn } from 'node:child_process'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { ensureBuilt, numberSetting, QUICK } from './settings.js'
import { median, printTable, spread } from './table.js'

const SPAWNS = numberSetting('BENCH_ROUNDS', QUICK ? 5 : 6)
const root = fileURLToPath(new URL('..', import.meta.url))

/** Prints `{ expressMs, importMs, initMs }` once the library is imported and initialised. */
const timed = (imports: string, init: string) => `
const before = performance.now()
await import('express')
const start = performance.now()
${imports}
const imported = performance.now()
${init}
const done = performance.now()
console.log(JSON.stringify({ expressMs: start - before, importMs: imported - start, initMs: done - imported }))
`

const credentials = 'authorize: () => null'
const oauth = `clientId: 'bench-client', clientSecret: 'bench-secret'`
const rows = [
  {
    name: 'Portcullis: import + init, 5 providers',
    script: timed(
      `const [{ default: Portcullis }, { default: Credentials }, { default: OIDC }, { default: OAuth }, { default: GitHub }, { default: Google }] = await Promise.all([
  import('portcullis'), import('portcullis/providers/credentials'), import('portcullis/providers/oidc'),
  import('portcullis/providers/oauth'), import('portcullis/providers/github'), import('portcullis/providers/google'),
])`,
      `Portcullis({ secret: 'bench-secret-0123456789abcdef0123456789abcdef', trustHost: true, providers: [
  Credentials({ ${credentials} }),
  OIDC({ id: 'corp', name: 'Corp', issuer: 'https://idp.corp.example', ${oauth} }),
  OAuth({ id: 'acme', name: 'Acme', authorization: 'https://acme.example/oauth/authorize', token: 'https://acme.example/oauth/token', userinfo: 'https://acme.example/api/me', ${oauth} }),
  GitHub({ ${oauth} }),
  Google({ ${oauth} }),
] })`,
    ),
  },
  {
    name: '@auth/express: import + init, 5 providers',
    script: timed(
      `const [{ ExpressAuth }, { default: Credentials }, { default: GitHub }, { default: Google }] = await Promise.all([
  import('@auth/express'), import('@auth/express/providers/credentials'), import('@auth/express/providers/github'), import('@auth/express/providers/google'),
])`,
      `ExpressAuth({ secret: 'bench-secret-0123456789abcdef0123456789abcdef', trustHost: true, providers: [
  Credentials({ ${credentials} }),
  { id: 'corp', name: 'Corp', type: 'oidc', issuer: 'https://idp.corp.example', ${oauth} },
  { id: 'acme', name: 'Acme', type: 'oauth', authorization: 'https://acme.example/oauth/authorize', token: 'https://acme.example/oauth/token', userinfo: 'https://acme.example/api/me', ${oauth} },
  GitHub({ ${oauth} }),
  Google({ ${oauth} }),
] })`,
    ),
  },
]

interface Spawned {
  expressMs: number
  importMs: number
  initMs: number
  processMs: number
}

/** Runs `script` as an ES module in a fresh node, from the package root (so 'portcullis' is dist/). */
function spawnNode(script: string): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => void (output += chunk))
    child.on('error', reject)
    child.on('exit', (code) => {
      const processMs = performance.now() - start
      if (code !== 0) return reject(new Error(`node exited with ${code}`))
      const timings = output.trim() ? (JSON.parse(output) as Omit<Spawned, 'processMs'>) : { expressMs: 0, importMs: 0, initMs: 0 }
      resolve({ ...timings, processMs })
    })
  })
}

ensureBuilt()

const results = rows.map(() => [] as Spawned[])
const bare: number[] = []
// One unmeasured spawn each, so the first measured one does not pay for a cold file cache.
for (const row of rows) await spawnNode(row.script)
for (let i = 0; i < SPAWNS; i++) {
  bare.push((await spawnNode('')).processMs)
  for (const [r, row] of rows.entries()) results[r]!.push(await spawnNode(row.script))
}

const ms = (value: number) => value.toFixed(1)
const first = median(results[0]!.map((s) => s.importMs + s.initMs))
console.log(`\nNode ${process.version}, dist/ build, ${SPAWNS} fresh processes per row, medians (load average ${loadavg()[0]!.toFixed(1)})\n`)
printTable(
  ['cold start', 'import + init ms', 'spread', 'import ms', 'init ms', 'process ms', 'x first'],
  rows.map(({ name }, r) => {
    const spawned = results[r]!
    const total = spawned.map((s) => s.importMs + s.initMs)
    return [
      name,
      ms(median(total)),
      spread(total, ms),
      ms(median(spawned.map((s) => s.importMs))),
      ms(median(spawned.map((s) => s.initMs))),
      ms(median(spawned.map((s) => s.processMs))),
      (median(total) / first).toFixed(2),
    ]
  }),
)
const expressMs = median(results.flat().map((s) => s.expressMs))
console.log(`\nprocess ms: from spawn to exit. Here a bare \`node -e ''\` takes ${ms(median(bare))} ms, and importing express first ${ms(expressMs)} ms (not in import + init).`)
console.log(`Portcullis import + init = ${ms(first)} ms (target < 150 ms)`)
