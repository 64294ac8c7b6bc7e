/** @jest-config-loader esbuild-register */
import { availableParallelism } from 'node:os'
import type { Config } from 'jest'

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
  testTimeout: 20000,
  // The known slow files first, so none of them is left running alone at the end (a fresh clone has no timings).
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  // Jest's default is one worker fewer than the cores: a single worker on a 2-core machine, which
  // leaves a core idle while suites wait on databases, browsers, child processes and sockets. Three
  // at least: on this 2-core machine (npx jest --maxWorkers=N, warm cache, nothing else running) the
  // whole suite took 221 s with two, 205-219 s with three and 223 s with four, the machine's cores
  // 96% busy with three (PostgreSQL and MariaDB included); a fourth worker only adds CPU time.
  maxWorkers: Math.max(3, availableParallelism()),
}

export default config
