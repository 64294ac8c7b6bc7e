/**
 * The steps of a sign-in, timed (`BENCH_SIGNIN_STEPS=1 npx tsx bench/signin.ts`): the sign-in bench
 * then runs a copy of dist/ (in bench/.signin-steps/, rebuilt each run) in which each function of
 * STEPS adds its time to the sign-in being timed: from its call until it returns, or until its
 * promise settles, so an async step includes what it awaits (the token and userinfo steps: the
 * provider's answer). A nested step is part of the one above it. The timing costs about 1 µs a call
 * in a loop (more when cold), and a sign-in makes 20 timed calls. Not part of `npm run bench`: it
 * changes the code it measures.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** A step: the dist/ module, the exported function (or `oidc.<call>` inside the module), and its label. */
type Step = readonly [module: string, fn: string, label: string]

/** The steps, in the order a sign-in runs them. */
export const STEPS: readonly Step[] = [
  ['http/request.js', 'sessionRequestFor', 'both: the request read (cookies, origin), 2 a sign-in'],
  ['http/body.js', 'readBody', 'POST /signin: the form body read'],
  ['security/csrf.js', 'verifyCsrf', 'POST /signin: the CSRF check'],
  ['oauth/authorize.js', 'authorizationRequest', 'POST /signin: the authorization request'],
  ['security/checks.js', 'startChecks', '  of which the three checks made and sealed'],
  ['security/checks.js', 'verifyChecks', 'callback: the three checks opened and verified'],
  ['oauth/callback.js', 'oidc.authorizationCodeGrant', 'callback: token request, ID token checked (openid-client)'],
  ['actions/callback/oidc.js', 'oidc.fetchUserInfo', 'callback: userinfo request (openid-client)'],
  ['actions/callback/provider-sign-in.js', 'completeProviderSignIn', 'callback: the sign-in (user, account, session)'],
  ['session/strategy.js', 'startSession', '  of which the session started'],
  ['http/respond.js', 'sendResponse', 'both: the response written, 2 a sign-in'],
  ['session/token.js', 'sealSessionToken', 'any: a token sealed (3 checks, the JWT session)'],
  ['session/token.js', 'openSessionToken', 'any: a token opened (3 checks)'],
]

const TIMER = '__portcullisBenchStep'

/**
 * Copies dist/ to bench/.signin-steps/dist/ with STEPS timed, each call's nanoseconds passed to
 * `record`, and returns the copy's directory URL.
 * @throws Error when a step's function is no longer in its module (renamed or moved).
 */
export function timedDist(record: (label: string, ns: number) => void): URL {
  const dist = new URL('../dist/', import.meta.url)
  // Inside the project, so that the copy resolves its packages from node_modules/.
  const copy = new URL('.signin-steps/dist/', import.meta.url)
  rmSync(copy, { recursive: true, force: true })
  cpSync(dist, copy, { recursive: true })
  ;(globalThis as Record<string, unknown>)[TIMER] = timer(record)
  for (const [module, fn, label] of STEPS) {
    const path = fileURLToPath(new URL(module, copy))
    const source = readFileSync(path, 'utf8')
    const wrapped = `globalThis.${TIMER}(${JSON.stringify(label)}, `
    let timed: string
    if (fn.startsWith('oidc.')) {
      timed = source.replace(`${fn}(`, `${wrapped}${fn})(`)
    } else {
      // The export becomes a timed wrapper of the renamed function; the module's own calls stay untimed.
      timed = source.replace(new RegExp(`export (async )?function ${fn}\\(`), (_, async: string | undefined) => `${async ?? ''}function ${fn}$untimed(`)
      timed += `\nexport const ${fn} = ${wrapped}${fn}$untimed);\n`
    }
    if (timed === source) throw new Error(`bench/signin-steps.ts: ${fn} is not in dist/${module} any more`)
    writeFileSync(path, timed)
  }
  return copy
}

function timer(record: (label: string, ns: number) => void) {
  return (label: string, fn: (...args: unknown[]) => unknown) =>
    function (this: unknown, ...args: unknown[]): unknown {
      const start = process.hrtime.bigint()
      const done = () => record(label, Number(process.hrtime.bigint() - start))
      const result = fn.apply(this, args)
      if (result instanceof Promise) return result.finally(done)
      done()
      return result
    }
}
