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
  // Jest's default is one worker fewer than the cores: a single worker on a 2-core machine, which
  // leaves a core idle while suites wait on databases, child processes and sockets. Two at least.
  maxWorkers: Math.max(2, availableParallelism() - 1),
}

export default config
