#!/usr/bin/env node
// npm run mutate [-- scope …]: one Stryker run per scope (scripts/mutate-scopes.mjs), in sequence,
// then the score of each from its JSON report. Reports: reports/mutation/<scope>.html and .json.
// PORTCULLIS_MUTATE_CONCURRENCY sets Stryker's workers (default 2; the machine is shared).
//
// Each scope's last results are kept in the repository (mutation/<scope>.json.gz): a run starts from
// them, so on a fresh clone it tests only the mutants whose code or covering tests changed since,
// and a run that completes writes them back (commit them with the change that moved the score).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { gunzipSync, gzipSync } from 'node:zlib'
import { SCOPES } from './mutate-scopes.mjs'

// Options (`--force`: test every mutant again, see docs/development.md) go to Stryker as they are.
const strykerOptions = process.argv.slice(2).filter((arg) => arg.startsWith('--'))
const requested = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const unknown = requested.filter((name) => !(name in SCOPES))
if (unknown.length > 0) {
  console.error(`Unknown scope(s): ${unknown.join(', ')}. Known: ${Object.keys(SCOPES).join(', ')}`)
  process.exit(2)
}
const names = requested.length > 0 ? requested : Object.keys(SCOPES)

const rows = []
for (const name of names) {
  const started = Date.now()
  console.log(`\n=== mutation scope ${name}: ${SCOPES[name].mutate.join(' ')} ===`)
  restoreResults(name)
  const run = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs', ...strykerOptions], { stdio: 'inherit', env: { ...process.env, PORTCULLIS_MUTATE_SCOPE: name } })
  if (run.status === 0) keepResults(name)
  const minutes = ((Date.now() - started) / 60000).toFixed(1)
  rows.push({ name, minutes, status: run.status, ...score(`reports/mutation/${name}.json`) })
}

console.log('\nscope | killed | survived | timeout | no coverage | score (killed+timeout of covered+uncovered) | minutes')
for (const row of rows) {
  if (row.total === undefined) console.log(`${row.name} | (no report; stryker exited ${row.status}) | | | | | ${row.minutes}`)
  else console.log(`${row.name} | ${row.killed} | ${row.survived} | ${row.timeout} | ${row.noCoverage} | ${row.score}% | ${row.minutes}`)
}
process.exit(rows.every((row) => row.status === 0) ? 0 : 1)

/** Stryker's incremental file of the scope (git-ignored), and its committed copy. */
function resultFiles(name) {
  return { working: `reports/stryker-incremental-${name}.json`, kept: `mutation/${name}.json.gz` }
}

/** Starts from the committed results when this checkout has none of its own. */
function restoreResults(name) {
  const { working, kept } = resultFiles(name)
  if (existsSync(working) || !existsSync(kept)) return
  mkdirSync('reports', { recursive: true })
  writeFileSync(working, gunzipSync(readFileSync(kept)))
  console.log(`Starting from the results in ${kept}: only mutants whose code or covering tests changed since are tested.`)
}

/** Copies a completed run's results where git keeps them. */
function keepResults(name) {
  const { working, kept } = resultFiles(name)
  if (!existsSync(working)) return
  mkdirSync('mutation', { recursive: true })
  writeFileSync(kept, gzipSync(readFileSync(working), { level: 9 }))
  console.log(`Results kept in ${kept} (commit it, so the next run of ${name} on any clone is incremental).`)
}

/** Counts by status from Stryker's JSON report (mutation-testing-report-schema). */
function score(file) {
  if (!existsSync(file)) return {}
  const report = JSON.parse(readFileSync(file, 'utf8'))
  const counts = { Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0, CompileError: 0, RuntimeError: 0, Ignored: 0 }
  for (const result of Object.values(report.files)) for (const mutant of result.mutants) counts[mutant.status] = (counts[mutant.status] ?? 0) + 1
  const detected = counts.Killed + counts.Timeout
  const valid = detected + counts.Survived + counts.NoCoverage
  return {
    killed: counts.Killed,
    survived: counts.Survived,
    timeout: counts.Timeout,
    noCoverage: counts.NoCoverage,
    total: valid,
    score: valid === 0 ? '100.0' : ((100 * detected) / valid).toFixed(1),
  }
}
