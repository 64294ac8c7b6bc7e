/**
 * The environment switches every bench honours (bench/README.md lists them):
 *
 *   BENCH_QUICK=1          fewer and shorter rounds: checks that a bench runs, not figures to quote
 *   BENCH_SQLITE=0 / =1    skip / force the rows that need better-sqlite3 (default: run them when it loads)
 *   BENCH_CPU_PROF=dir     the HTTP bench's servers write V8 CPU profiles (.cpuprofile) into dir
 *   BENCH_FLOOR=objects    the floor with a node:crypto object per token (bench/floor.ts)
 *   BENCH_ROUNDS=n         rounds per row, in every bench that repeats its measurements
 *   BENCH_ROUND_SECONDS=s  the HTTP bench's round length
 *   BENCH_SERVERS=n        the HTTP bench's server processes per row (default 2; PostgreSQL's row: 1)
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const QUICK = process.env.BENCH_QUICK === '1'

/** Where the HTTP bench's servers write their CPU profiles (`node --cpu-prof`), or undefined. */
export const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROF || undefined

/** A positive number from the environment, or `fallback` when unset; anything else is an error. */
export function numberSetting(name: string, fallback: number): number {
  const value = process.env[name]
  if (value === undefined || value === '') return fallback
  const parsed = Number(value)
  if (!(parsed > 0)) throw new TypeError(`${name}=${value}: expected a positive number`)
  return parsed
}

/** Rounds per row: BENCH_ROUNDS, else `fallback` (fewer under BENCH_QUICK=1). */
export const rounds = (fallback: number) => numberSetting('BENCH_ROUNDS', QUICK ? Math.min(3, fallback) : fallback)

/**
 * Why the rows that open a better-sqlite3 database cannot run here, or undefined when they can.
 *
 * The better-sqlite3 in node_modules is compiled for one Node ABI (the Node 20 the project is
 * installed with). On another major it either fails to load (ABI mismatch: caught here) or, for
 * better-sqlite3 12 rebuilt on Node 24+, loads and aborts the whole process later, when V8 collects
 * a Database (scripts/test-node-versions.sh explains it). So on Node 24+ with 12 the rows are skipped
 * unless BENCH_SQLITE=1, and BENCH_SQLITE=0 skips them anywhere. node_modules is never touched.
 */
export function sqliteUnavailable(): string | undefined {
  const setting = process.env.BENCH_SQLITE
  if (setting === '0') return 'BENCH_SQLITE=0'
  if (setting === '1') return undefined
  const require = createRequire(import.meta.url)
  const version = (require('better-sqlite3/package.json') as { version: string }).version
  const nodeMajor = Number(process.versions.node.split('.')[0])
  if (nodeMajor >= 24 && version.startsWith('12.')) {
    return `better-sqlite3 ${version} aborts on Node ${nodeMajor} (set BENCH_SQLITE=1 to run it anyway)`
  }
  try {
    const Database = require('better-sqlite3') as new (filename: string) => { close(): void }
    new Database(':memory:').close()
    return undefined
  } catch (error) {
    return `better-sqlite3 ${version} does not load on Node ${process.versions.node} (${(error as Error).message.split('\n')[0]})`
  }
}

const root = fileURLToPath(new URL('..', import.meta.url))

/**
 * How to start another bench file in a child Node. Under `npm run bench` the benches run as the
 * bundles bench/run.mjs wrote to .bench/, so the child is the bundle beside this one, in plain Node;
 * run with tsx, it is the .ts file under tsx's loader.
 */
export function benchFile(name: string): { path: string; execArgv: string[] } {
  if (import.meta.url.endsWith('.ts')) return { path: fileURLToPath(new URL(`${name}.ts`, import.meta.url)), execArgv: ['--import', 'tsx'] }
  return { path: fileURLToPath(new URL(`${name}.js`, import.meta.url)), execArgv: [] }
}
const newest = (dir: string): number =>
  Math.max(...readdirSync(dir, { withFileTypes: true }).map((entry) => (entry.isDirectory() ? newest(join(dir, entry.name)) : statSync(join(dir, entry.name)).mtimeMs)))

/**
 * Makes sure dist/ holds the current code: the cold-start, HTTP and memory benches measure the
 * built package, what an app installs (tsx's compiled src/ is not the same code: it keeps function
 * names, which costs on closures made per call). Runs `npm run build` when dist/ is missing or older
 * than src/.
 */
export function ensureBuilt(): void {
  const entry = join(root, 'dist', 'index.js')
  if (existsSync(entry) && newest(join(root, 'src')) <= statSync(entry).mtimeMs) return
  console.log(existsSync(entry) ? 'src/ has changed since dist/ was built: npm run build' : 'dist/ is missing: npm run build')
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
}
