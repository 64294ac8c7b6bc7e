/** @jest-config-loader esbuild-register */
import { accessSync, constants } from 'node:fs'
import { availableParallelism } from 'node:os'
import type { Config } from 'jest'

// The suites' temporary files (SQLite databases, the packed package's app, the Knex CLI's apps,
// Chromium's profiles and screenshots) go to memory where Linux offers it, unless TMPDIR is set:
// on disk, SQLite's fsync at each commit held a worker for milliseconds a write. The workers
// inherit it, and os.tmpdir() reads it.
if (!process.env.TMPDIR && writable('/dev/shm')) process.env.TMPDIR = '/dev/shm'

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK)
    return true
  } catch {
    return false
  }
}

const config: Config = {
  // Node's, printing the recorded log lines of a failed test (test/support/logger.ts).
  testEnvironment: '<rootDir>/test/support/environment.cjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    // Tests import the package by its public names; map them onto the sources.
    '^portcullis$': '<rootDir>/src/index.ts',
    '^portcullis/(.*)$': '<rootDir>/src/$1',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.cjs',
  },
  // A bound on a hang, not on speed: a test waits for its events, each with its own limit below this one
  // (test/support/time-limits.ts, whose TEST_LIMIT_MS this must equal). 20 s ran out on a loaded machine.
  testTimeout: 120_000,
  // The known slow files first, so none of them is left running alone at the end (a fresh clone has no timings).
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  // Jest's default is one worker fewer than the cores: a single worker on a 2-core machine, which
  // leaves a core idle while suites wait on databases, browsers, child processes and sockets. Three
  // at least: on this 2-core machine (npx jest --maxWorkers=N, warm cache, nothing else running) the
  // whole suite took 221 s with two, 205-219 s with three and 223 s with four, the machine's cores
  // 96% busy with three (PostgreSQL and MariaDB included); a fourth worker only adds CPU time.
  maxWorkers: Math.max(3, availableParallelism()),
  // How long a worker may take to exit once the run is over before Jest kills it ("A worker process
  // has failed to exit gracefully"); Jest's default is 500 ms. The worker Jest killed had nothing left
  // running: the environment's PORTCULLIS_LEFT_RUNNING rig found no handle, timer, worker thread or
  // listener 200 ms after Jest's END, and the worker had not reached its 'exit' by the kill. On a
  // loaded 2-core machine (load 10-16) a worker that had run the TypeScript-compiler suites (a heap of
  // ~270 MB) took 149 ms from END to 'exit' with nothing alive; most likely Node finishing V8's
  // background tasks (GC) before it exits, which no resource list shows. It was killed in 2 of 6 runs
  // of test/docs/adapter-methods, test/architecture/function-length, test/logging/logger-forms,
  // test/docs/logging-recipes and test/security/constant-time together, and in none of 7 with this.
  // A handle really left open still holds a worker past this, and the rig names it.
  workerGracefulExitTimeout: 5_000,
}

export default config
