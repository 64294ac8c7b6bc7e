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
  // leaves a core idle while suites wait on databases, browsers, child processes and sockets. Four at
  // least: on this 2-core machine the whole suite took 256 s with two (cores 75% busy), 200 s with
  // three and 181 s with four (npx jest --maxWorkers=N, warm cache, nothing else running).
  maxWorkers: Math.max(4, availableParallelism()),
}

export default config
