/**
 * Jest's node environment, plus: the log lines a test recorded (test/support/logger.ts) are printed
 * when that test fails, after its name, so a failure comes with the log of what happened and a
 * green run prints nothing of them.
 */
'use strict'
const { inspect } = require('node:util')
const { TestEnvironment } = require('jest-environment-node')

const CURRENT_TEST_LINES = '__portcullisTestLogLines'

class PortcullisEnvironment extends TestEnvironment {
  handleTestEvent(event) {
    if (event.name === 'test_start' || event.name === 'run_describe_start') this.global[CURRENT_TEST_LINES] = []
    if (event.name === 'test_done' && event.test.errors.length > 0) {
      const lines = this.global[CURRENT_TEST_LINES] ?? []
      if (lines.length > 0) {
        const title = []
        for (let block = event.test; block && block.name !== 'ROOT_DESCRIBE_BLOCK'; block = block.parent) title.unshift(block.name)
        const body = lines.map(({ level, code, message }) => `  [${level}] ${code} ${message.map((part) => (typeof part === 'string' ? part : inspect(part, { depth: 4 }))).join(' ')}`)
        process.stderr.write(`\nLog of the failed test "${title.join(' › ')}":\n${body.join('\n')}\n`)
      }
    }
  }
}

module.exports = PortcullisEnvironment
