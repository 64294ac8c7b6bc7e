// A Stryker test runner, `jest-by-file`: Stryker's jest runner, except that a mutant's run loads only
// the test files holding the tests that reached the mutant in the dry run.
//
// Stryker's jest runner narrows a mutant's run by test name (`testNamePattern`) and nothing else, so
// Jest still imports every test file of the scope for every mutant, and each of ours imports the
// library, Express and often oidc-provider: seconds a mutant. Here the dry run (with `perTest`
// coverage) records which file each test id came from, in a file of the sandbox that every runner
// process of the run shares, and a mutant's run hands Jest those files' paths, one at a time, as
// well as the names.
import { readFileSync, writeFileSync } from 'node:fs'
import { commonTokens, declareFactoryPlugin, PluginKind, tokens } from '@stryker-mutator/api/plugin'
import { strykerPlugins as jestPlugins } from '@stryker-mutator/jest-runner'

// In the sandbox (the runners' working directory), written by the dry run, read by mutant runs.
const TEST_FILES = '.stryker-test-files.json'

const jestFactory = jestPlugins.find((plugin) => plugin.name === 'jest').factory

class JestByFileRunner {
  /** test id → the files that define a test of that full name */
  #files = undefined

  constructor(inner) {
    this.inner = inner
  }

  capabilities() {
    return this.inner.capabilities()
  }

  init() {
    return this.inner.init()
  }

  dispose() {
    return this.inner.dispose?.()
  }

  async dryRun(options) {
    const result = await this.inner.dryRun(options)
    if (result.status === 'complete') {
      const files = {}
      for (const test of result.tests) (files[test.id] ??= []).includes(test.fileName) || files[test.id].push(test.fileName)
      writeFileSync(TEST_FILES, JSON.stringify(files))
    }
    return result
  }

  async mutantRun(options) {
    const files = this.#filesOf(options.testFilter)
    if (!files) return this.inner.mutantRun(options)
    // One file at a time, the file with the most of the mutant's tests first, and no further once
    // one file detects the mutant (Jest's own bail cannot be set through runCLI): most mutants are
    // detected by their first file, and a file is seconds of imports and servers.
    let tests = 0
    let survived
    for (const file of files) {
      const result = await this.#runIn(file, options)
      if (result.status !== 'survived') return result
      tests += result.nrOfTests
      survived = result
    }
    return { ...survived, nrOfTests: tests }
  }

  /** The mutant's run, with Jest given this one test file. */
  async #runIn(file, options) {
    // The runner's Jest wrapper is shared with its test adapter, which calls runCLI with the test
    // path patterns in `_` (empty: every file of testMatch); for this run, the file's path.
    const wrapper = this.inner.jestWrapper
    const runCLI = wrapper.runCLI
    wrapper.runCLI = (argv, projects) => runCLI.call(wrapper, { ...argv, _: [pathPattern(file)] }, projects)
    try {
      return await this.inner.mutantRun(options)
    } finally {
      wrapper.runCLI = runCLI
    }
  }

  /** The files of the tests in `testFilter`, most of them first, or undefined for every file. */
  #filesOf(testFilter) {
    if (!testFilter || testFilter.length === 0) return undefined
    this.#files ??= JSON.parse(readFileSync(TEST_FILES, 'utf8'))
    const counts = new Map()
    for (const id of testFilter) {
      const known = this.#files[id]
      if (!known) return undefined
      for (const file of known) counts.set(file, (counts.get(file) ?? 0) + 1)
    }
    return [...counts.keys()].sort((a, b) => counts.get(b) - counts.get(a))
  }
}

/** A test path pattern (a regular expression) that matches this one file. */
function pathPattern(file) {
  return `^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`
}

function jestByFileFactory(injector) {
  return new JestByFileRunner(jestFactory(injector))
}
jestByFileFactory.inject = tokens(commonTokens.injector)

export const strykerPlugins = [declareFactoryPlugin(PluginKind.TestRunner, 'jest-by-file', jestByFileFactory)]
