// `npm run bench`: the benchmark groups one after another, each in a fresh `node` (bench/README.md).
//
//   node bench/run.mjs              every group, in the order below
//   node bench/run.mjs http memory  only those groups (their file names without .ts)
//
// The groups and the servers and children they start are TypeScript. Under tsx every one of those
// processes pays for its loader: 1.1-1.2 s of CPU to start an HTTP bench server instead of 0.4 s,
// and the tsx command adds a process of its own. So the files are first bundled with esbuild into
// .bench/ (what tsx does to each file, `keepNames` included, without the loader), and plain `node`
// runs the bundles. `.bench/` sits beside bench/, so the bundles' paths to ../dist/ stay the same.
// Each file still runs alone with `npx tsx bench/<file>.ts`; settings.ts's benchFile() starts the
// children of whichever form is running.
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const GROUPS = ['session', 'roles', 'database', 'api-keys', 'authorization-server', 'signin', 'signin-peers', 'saml', 'password', 'http', 'startup', 'memory']
// Groups too long for the whole run (issue 68: no row may push `npm run bench` past 3 minutes on a slow VM): each
// runs when named (`npm run bench:api-keys`, `npm run bench -- api-keys`). The API key group seeds a million keys;
// the sign-ins beside the peers (`npm run bench:signin-peers`) take about 50 s.
const OWN_COMMAND = ['api-keys', 'signin-peers']
/** Files a group starts in child processes of their own (settings.ts's benchFile). */
const CHILDREN = { http: ['http-server'], 'signin-peers': ['signin-peers-apps', 'signin-peers-idp'] }

const asked = process.argv.slice(2)
const unknown = asked.filter((group) => !GROUPS.includes(group))
if (unknown.length > 0) {
  console.error(`bench/run.mjs: no group ${unknown.join(', ')}; the groups are ${GROUPS.join(', ')} (other benches: npx tsx bench/<file>.ts)`)
  process.exit(2)
}
const groups = asked.length > 0 ? GROUPS.filter((group) => asked.includes(group)) : GROUPS.filter((group) => !OWN_COMMAND.includes(group))

const bench = fileURLToPath(new URL('.', import.meta.url))
const outdir = fileURLToPath(new URL('../.bench/', import.meta.url))
rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints: groups.flatMap((group) => [group, ...(CHILDREN[group] ?? [])]).map((file) => `${bench}${file}.ts`),
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: `node${process.versions.node}`,
  packages: 'external',
  keepNames: true,
  logLevel: 'warning',
})

// The wall time of each group and of the whole run, printed last: `npm run bench` is to stay within 2 minutes
// where the machine allows, and no row may push it past 3 on a slow VM (issue 68).
const started = performance.now()
const took = []
for (const group of groups) {
  const groupStart = performance.now()
  const { status, signal } = spawnSync(process.execPath, [`${outdir}${group}.js`], { stdio: 'inherit' })
  if (status !== 0) {
    console.error(`bench/run.mjs: ${group} ${signal ? `was killed by ${signal}` : `exited with ${status}`}`)
    process.exit(status || 1)
  }
  took.push(`${group} ${((performance.now() - groupStart) / 1000).toFixed(0)} s`)
}
console.log(`\nWall time: ${((performance.now() - started) / 1000).toFixed(0)} s (${took.join(', ')})`)
