// What `npm run mutate` mutates, scope by scope, and the suites that cover each scope (each mutant
// of a scope is tested by those suites only, and of them only the files whose tests reach it: see
// scripts/stryker-jest-by-file.mjs). A suite more costs its dry run and the mutants it reaches, not
// every mutant; a suite that runs the built package in child processes cannot run in the sandbox.
import { readFileSync } from 'node:fs'

const ADAPTER = 'src/adapters/knex/index.ts'

/** `<ADAPTER>:<from>-<to>`: from the line of method `first` to the line before method `next`. */
function methodLines(first, next) {
  const lines = readFileSync(new URL(`../${ADAPTER}`, import.meta.url), 'utf8').split('\n')
  const at = (name) => {
    const index = lines.findIndex((line) => line.startsWith(`    async ${name}(`))
    if (index === -1) throw new Error(`scripts/mutate-scopes.mjs: no method ${name} in ${ADAPTER}`)
    return index + 1
  }
  return `${ADAPTER}:${at(first)}-${at(next) - 1}`
}

export const SCOPES = {
  email: {
    mutate: ['src/email/**/*.ts'],
    tests: ['test/email/*.test.ts', 'test/security/email-lookup.test.ts'],
  },
  'actions-callback': {
    mutate: ['src/actions/callback/**/*.ts'],
    tests: [
      'test/oauth/*.test.ts',
      'test/email/flow.test.ts',
      'test/email/link-binding.test.ts',
      'test/routes/credentials-flow.test.ts',
      'test/security/email-lookup.test.ts',
      'test/security/database-session.test.ts',
      // The passkey callback (passkey.ts) and the second factor's branches of every callback.
      'test/passkey/api.test.ts',
      'test/two-factor/api.test.ts',
      'test/two-factor/flow.test.ts',
      'test/two-factor/sign-in-methods.test.ts',
      'test/password/flow.test.ts',
    ],
  },
  security: {
    mutate: ['src/security/**/*.ts'],
    tests: [
      'test/security/*.test.ts',
      'test/oauth/attacks.test.ts',
      'test/oauth/proxy.test.ts',
      'test/oauth/flows.test.ts',
      'test/routes/credentials-flow.test.ts',
      // The passkey ceremonies' challenges (webauthn-challenge.ts). Not the suites that run the built
      // package in child processes (test/passkey/config.test.ts, and test/adapters/knex-prune.test.ts,
      // the one that covers rate-limit-prune.ts): the sandbox has no dist/, and no mutant reaches it.
      'test/passkey/api.test.ts',
    ],
  },
  session: {
    mutate: ['src/session/**/*.ts'],
    tests: ['test/session/*.test.ts', 'test/security/session-cookie.test.ts', 'test/security/cookie-chunks.test.ts', 'test/security/database-session.test.ts', 'test/security/constant-time.test.ts'],
  },
  oauth: {
    mutate: ['src/oauth/**/*.ts'],
    tests: ['test/oauth/*.test.ts', 'test/providers/discovery.test.ts'],
  },
  // The Knex adapter's user, verification-token and second-factor methods (createUser … deleteUser,
  // createVerificationToken and useVerificationToken, getTwoFactor … deleteTwoFactor), by the line
  // ranges those methods have today: found by name, so an edit elsewhere in the file cannot shift them.
  'knex-adapter': {
    mutate: [methodLines('createUser', 'linkAccount'), methodLines('createVerificationToken', 'getAccount'), methodLines('getTwoFactor', 'prune')],
    tests: ['test/adapters/knex-sqlite.test.ts', 'test/adapters/knex-postgres.test.ts', 'test/adapters/knex-mariadb.test.ts', 'test/email/flow.test.ts', 'test/security/email-lookup.test.ts'],
  },
}
