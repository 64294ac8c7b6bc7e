// What the first password check pays to load the common-password list: in a fresh `node` each time,
// importing dist/features/password/common-passwords.js and building its set (what policy.ts does once): wall
// time and the process's CPU time (every thread: the file is read on libuv's pool), medians of 30
// runs (BENCH_ROUNDS), the builds taking turns.
//
//   node bench/common-passwords.mjs                 the build in dist/ (npm run build first)
//   node bench/common-passwords.mjs <old module>    and, taking turns with it, another build's module
//
// A build from before the list became a data file (2026-12) exports it as one string, COMMON_PASSWORDS.
import { execFileSync } from 'node:child_process'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const RUNS = Number(process.env.BENCH_ROUNDS ?? 30)
const modules = [new URL('../dist/features/password/common-passwords.js', import.meta.url).href, ...process.argv.slice(2).map((path) => pathToFileURL(resolve(path)).href)]

// The child first imports an empty module, so that the ESM loader's own start is not counted.
const child = (url) => `
await import('data:text/javascript,export {}')
const cpu = process.cpuUsage(), start = performance.now()
const list = await import(${JSON.stringify(url)})
const set = list.readCommonPasswords ? await list.readCommonPasswords() : new Set(list.COMMON_PASSWORDS.split('\\n'))
const wall = performance.now() - start, { user, system } = process.cpuUsage(cpu)
if (set.size !== 17950 || !set.has('password')) throw new Error('not the list: ' + set.size + ' entries')
console.log(JSON.stringify({ wall, cpu: (user + system) / 1000 }))`

const samples = modules.map(() => ({ wall: [], cpu: [] }))
for (let run = 0; run < RUNS; run++) {
  for (const [index, url] of modules.entries()) {
    const { wall, cpu } = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', child(url)], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }))
    samples[index].wall.push(wall)
    samples[index].cpu.push(cpu)
  }
}
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1].toFixed(1)
const range = (values) => `${values[0].toFixed(1)}-${values.at(-1).toFixed(1)}`
console.log(`Node ${process.version}, ${RUNS} fresh processes each, load average ${(await import('node:os')).loadavg()[0].toFixed(2)}`)
for (const [index, url] of modules.entries()) {
  const { wall, cpu } = samples[index]
  console.log(`${url}\n  wall ${median(wall)} ms (${range(wall)}), CPU ${median(cpu)} ms (${range(cpu)})`)
}
