// What `npm run mutate` mutates, scope by scope, and the suites that cover each scope (each mutant
// of a scope is tested by those suites only, and of them only the files whose tests reach it: see
// scripts/stryker-jest-by-file.mjs). A suite more costs its dry run and the mutants it reaches, not
// every mutant; a suite that runs the built package in child processes cannot run in the sandbox.
import { readFileSync } from 'node:fs'

const ADAPTER = 'src/adapters/knex/base.ts'
const TWO_FACTOR_ADAPTER = 'src/features/two-factor/knex.ts'

/** `<ADAPTER>:<from>-<to>`: from the line of method `first` to the line before method `next`. */
function methodLines(first, next, file = ADAPTER) {
  const lines = readFileSync(new URL(`../${file}`, import.meta.url), 'utf8').split('\n')
  const at = (name) => {
    const index = lines.findIndex((line) => line.startsWith(`    async ${name}(`))
    if (index === -1) throw new Error(`scripts/mutate-scopes.mjs: no method ${name} in ${file}`)
    return index + 1
  }
  // Without `next`, to the end of the part's methods (the closing of its object).
  const end = next === undefined ? lines.findIndex((line, index) => index > at(first) && line === '  }') : at(next) - 1
  return `${file}:${at(first)}-${end}`
}

/** The suites that read, write and check the session cookie: the session-token and session-jwt scopes'. */
const SESSION_COOKIE_TESTS = [
  'test/session/*.test.ts',
  // auth() on Express, Connect and node:http requests, and the session cookie as attackers send it.
  'test/auth/*.test.ts',
  'test/security/session-cookie.test.ts',
  'test/security/cookie-chunks.test.ts',
  'test/sessions/revocation.test.ts',
  // The names and attributes of the other cookies (cookies.ts): the OAuth checks, the e-mail link's
  // binding, the passkey challenge, the pending second factor.
  'test/security/oauth-check-cookies.test.ts',
  'test/email/link-binding.test.ts',
  'test/email/callback-edges.test.ts',
  'test/passkey/ceremony.test.ts',
  'test/two-factor/flow.test.ts',
  // The provider tokens a JWT session carries (jwt-strategy.ts: kept at sign-in, dropped when too
  // large, the refresh error in the session).
  'test/oauth/refresh.test.ts',
]

export const SCOPES = {
  email: {
    mutate: ['src/mail/**/*.ts', 'src/features/email/**/*.ts'],
    tests: ['test/email/*.test.ts', 'test/security/email-lookup.test.ts'],
  },
  'actions-callback': {
    mutate: ['src/actions/callback.ts', 'src/sign-in/**/*.ts', 'src/features/credentials/**/*.ts', 'src/features/oauth/{complete-sign-in,resume}.ts', 'src/features/oauth/routes/*.ts'],
    tests: [
      'test/oauth/*.test.ts',
      'test/email/flow.test.ts',
      'test/email/link-binding.test.ts',
      'test/email/callback-edges.test.ts',
      'test/credentials/flow.test.ts',
      'test/credentials/callback.test.ts',
      'test/security/email-lookup.test.ts',
      'test/security/database-session.test.ts',
      // The passkey callback (passkey.ts) and the second factor's branches of every callback.
      'test/passkey/api.test.ts',
      'test/passkey/ceremony.test.ts',
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
      'test/credentials/flow.test.ts',
      // The passkey ceremonies' challenges (webauthn-challenge.ts). Not the suites that run the built
      // package in child processes (test/passkey/config.test.ts, test/prune/knex-prune.test.ts):
      // the sandbox has no dist/, and no mutant reaches them. rate-limit-prune.ts has a source-level
      // suite of its own in test/security/ for that reason.
      'test/passkey/api.test.ts',
      // The challenges' verification: ceremonies of a software authenticator (no browser).
      'test/passkey/ceremony.test.ts',
    ],
  },
  // src/session/ in four scopes. The cookie and its token (sealing, keys, chunks), then the JWT
  // strategy and its cache: one scope of 1,061 mutants before, over two and a half hours here with its
  // TypeScript checker busy throughout (most of the project imports these modules).
  'session-token': {
    mutate: ['src/session/{cookies,iso-date,jwe,keys,token}.ts'],
    tests: SESSION_COOKIE_TESTS,
  },
  'session-jwt': {
    mutate: ['src/session/{jwt-strategy,token-cache}.ts'],
    tests: SESSION_COOKIE_TESTS,
  },
  // What a session is stored in and how it ends, in two scopes (1,213 mutants as one: over two
  // hours here): the strategies, revocation and the device list, then the session stores themselves.
  'session-store': {
    mutate: ['src/session/{database-strategy,devices,provider-tokens,revocation,strategy,types}.ts'],
    tests: [
      'test/session/database-strategy.test.ts',
      'test/session/jwt-strategy.test.ts',
      'test/session/provider-tokens.test.ts',
      // Listing and ending sessions, and revocation (devices.ts, revocation.ts).
      'test/sessions/*.test.ts',
      'test/security/database-session.test.ts',
      // The CSRF token retired at sign-in and sign-out (strategy.ts), and an account linked to the
      // signed-in user (strategy.ts's signedInUserId).
      'test/security/csrf-origin.test.ts',
      'test/oauth/accounts.test.ts',
      // The provider tokens a session carries (provider-tokens.ts) and their refresh.
      'test/oauth/refresh.test.ts',
      'test/oauth/refresh-database.test.ts',
      'test/oauth/refresh-shared.test.ts',
    ],
  },
  // The JWT session stores (memory, Knex, Redis) and how the configured one is resolved.
  'session-stores': {
    mutate: ['src/session/store/**/*.ts'],
    tests: ['test/sessions/*.test.ts', 'test/session/jwt-strategy.test.ts'],
  },
  // src/oauth/ in two scopes, so that each whole run fits in an hour here: the sign-in (authorize,
  // the callback's verification, the client and its errors), which every provider's flow reaches,
  // then the provider tokens (access tokens and their refresh, once per process and across processes).
  'oauth-flow': {
    mutate: ['src/features/oauth/{authorize,callback,checks,client,errors}.ts'],
    tests: [
      'test/oauth/*.test.ts',
      // Every built-in provider's flow (discovery, their API answers, the checks each one needs).
      'test/providers/*.test.ts',
      'test/security/oauth-check-cookies.test.ts',
      'test/security/redirect-proxy-origins.test.ts',
    ],
  },
  'oauth-tokens': {
    mutate: ['src/features/oauth/{access-token,refresh,refresh-grant,shared-refresh}.ts'],
    tests: [
      'test/oauth/*.test.ts',
      // The providers whose tokens are refreshed or read with their own rules.
      'test/providers/microsoft-entra-id.test.ts',
      'test/providers/profile-requests.test.ts',
      'test/providers/twitter.test.ts',
    ],
  },
  // Password accounts (the hashes, the policy and the reader of its list, sign-up, verification and
  // reset links, their mails); the list of common passwords itself is data (common-passwords.txt).
  password: {
    mutate: ['src/features/password/{accounts,common-passwords,hash,links,mail,policy}.ts'],
    tests: [
      'test/password/attacks.test.ts',
      'test/password/config.test.ts',
      'test/password/flow.test.ts',
      'test/password/hash.test.ts',
      'test/password/policy.test.ts',
      'test/password/send-mail.test.ts',
      'test/two-factor/flow.test.ts',
    ],
  },
  // The second factor: TOTP, recovery codes, the pending step between the factors, enrolment.
  'two-factor': {
    mutate: ['src/features/two-factor/{factor,pending,recovery,reset,totp}.ts'],
    tests: ['test/two-factor/*.test.ts', 'test/password/flow.test.ts', 'test/email/callback-edges.test.ts'],
  },
  // Passkeys: the WebAuthn options, the browser's response read strictly, its verification. The
  // browser suite (Chromium's virtual authenticator) is the only one that signs real assertions: the
  // counter rule against cloned authenticators is tested there alone. Without it the first run scored
  // 36.7%, verify.ts 21.7%.
  webauthn: {
    mutate: ['src/features/passkey/{challenge,library,options,response,verify}.ts'],
    tests: ['test/passkey/api.test.ts', 'test/passkey/ceremony.test.ts', 'test/passkey/browser.test.ts'],
  },
  // The Knex adapter's user, verification-token and second-factor methods (createUser … deleteUser,
  // createVerificationToken and useVerificationToken, getTwoFactor … deleteTwoFactor), by the line
  // ranges those methods have today: found by name, so an edit elsewhere in the file cannot shift them.
  'knex-adapter': {
    mutate: [methodLines('createUser', 'linkAccount'), methodLines('createVerificationToken', 'getAccount'), methodLines('getTwoFactor', undefined, TWO_FACTOR_ADAPTER)],
    tests: ['test/adapters/knex-sqlite.test.ts', 'test/adapters/knex-postgres.test.ts', 'test/adapters/knex-mariadb.test.ts', 'test/email/flow.test.ts', 'test/security/email-lookup.test.ts'],
  },
}
