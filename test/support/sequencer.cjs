/**
 * The order Jest starts test files in. Jest starts the slowest first when it knows their times
 * from an earlier run; a fresh clone (CI) has none, and Jest then goes by file size, which can
 * leave the longest suites (the packed-package install, the three-database suites, the browser
 * ones) to start last and run on alone at the end. These start first; the rest keep Jest's order.
 */
const Sequencer = require('@jest/test-sequencer').default

const SLOW_FIRST = [
  'test/build/package.test.ts',
  'test/sessions/database.test.ts',
  'test/migrations/knex-cli.test.ts',
  'test/password/flow.test.ts',
  'test/password/browser.test.ts',
  'test/examples/spa.test.ts',
  'test/passkey/browser.test.ts',
  'test/email/flow.test.ts',
  'test/scale/scale-out.test.ts',
  'test/password/attacks.test.ts',
  'test/oauth/refresh-database.test.ts',
  'test/adapters/knex-postgres.test.ts',
  'test/browser/email-signin.test.ts',
  'test/providers/discovery.test.ts',
  'test/build/smoke.test.ts',
  'test/prune/knex-prune.test.ts',
  'test/adapters/knex-mariadb.test.ts',
  'test/sessions/revocation.test.ts',
]

class SlowFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests)
    const rank = (test) => {
      const at = SLOW_FIRST.findIndex((path) => test.path.endsWith(path))
      return at === -1 ? SLOW_FIRST.length : at
    }
    // Array#sort is stable: files outside the list keep Jest's order.
    return [...sorted].sort((a, b) => rank(a) - rank(b))
  }
}

module.exports = SlowFirst
