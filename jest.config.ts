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
  // has failed to exit gracefully"); Jest's default is 500 ms. The workers Jest killed had nothing left
  // running by the environment's PORTCULLIS_LEFT_RUNNING rig (no handle, timer, worker thread or IPC
  // listener 200 ms after Jest's END) and had not reached 'exit' by the kill; one took 149 ms from END
  // to 'exit' with nothing alive, on a loaded 2-core machine. The cause is not proven (a slow exit, not
  // a leak, by all the rig sees). A handle really left open still holds a worker past this, and the
  // rig names it.
  workerGracefulExitTimeout: 5_000,
}

export default config
