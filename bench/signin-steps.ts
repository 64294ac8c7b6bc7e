/**
 * The steps of a sign-in, timed (`BENCH_SIGNIN_STEPS=1 npx tsx bench/signin.ts`): the sign-in bench
 * then runs a build of src/ made as dist/ is (scripts/bundle.mjs; in bench/.signin-steps/, rebuilt
 * each run) in which each function of STEPS adds its time to the sign-in being timed: from its call
 * until it returns, or until its promise settles, so an async step includes what it awaits (the token
 * and userinfo steps: the provider's answer). A nested step is part of the one above it. The timing
 * costs about 1 µs a call in a loop (more when cold), and a sign-in makes 20 timed calls. Not part of
 * `npm run bench`: it changes the code it measures.
 */
import { readFileSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Plugin } from 'esbuild'
// @ts-expect-error: a plain ESM script without declarations
import { bundleServer } from '../scripts/bundle.mjs'

/** A step: the src/ module, the exported function (or `oidc.<call>` inside the module), and its label. */
type Step = readonly [module: string, fn: string, label: string]

/** The steps, in the order a sign-in runs them. */
export const STEPS: readonly Step[] = [
  ['http/request.ts', 'sessionRequestFor', 'both: the request read (cookies, origin), 2 a sign-in'],
  ['http/body.ts', 'readBody', 'POST /signin: the form body read'],
  ['security/csrf.ts', 'verifyCsrf', 'POST /signin: the CSRF check'],
  ['features/oauth/authorize.ts', 'authorizationRequest', 'POST /signin: the authorization request'],
  ['features/oauth/checks.ts', 'startChecks', '  of which the three checks made and sealed'],
  ['features/oauth/checks.ts', 'verifyChecks', 'callback: the three checks opened and verified'],
  ['features/oauth/callback.ts', 'oidc.authorizationCodeGrant', 'callback: token request, ID token checked (openid-client)'],
  ['features/oauth/routes/oidc-callback.ts', 'oidc.fetchUserInfo', 'callback: userinfo request (openid-client)'],
  ['features/oauth/complete-sign-in.ts', 'completeProviderSignIn', 'callback: the sign-in (user, account, session)'],
  ['session/strategy.ts', 'startSession', '  of which the session started'],
  ['http/respond.ts', 'sendResponse', 'both: the response written, 2 a sign-in'],
  ['session/token.ts', 'sealSessionToken', 'any: a token sealed (3 checks, the JWT session)'],
  ['session/token.ts', 'openSessionToken', 'any: a token opened (3 checks)'],
]

const TIMER = '__portcullisBenchStep'

/** `source` with step `fn` timed. @throws Error when `fn` is no longer in it (renamed or moved). */
function timeStep(source: string, module: string, fn: string, label: string): string {
  const wrapped = `globalThis.${TIMER}(${JSON.stringify(label)}, `
  let timed: string
  if (fn.startsWith('oidc.')) {
    timed = source.replace(`${fn}(`, `${wrapped}${fn})(`)
  } else {
    // The export becomes a timed wrapper of the renamed function (the module's own calls go through it too).
    timed = source.replace(new RegExp(`export (async )?function ${fn}\\(`), (_, async: string | undefined) => `${async ?? ''}function ${fn}$untimed(`)
    timed += `\nexport const ${fn} = ${wrapped}${fn}$untimed);\n`
  }
  if (timed === source) throw new Error(`bench/signin-steps.ts: ${fn} is not in src/${module} any more`)
  return timed
}

/**
 * Builds src/ into bench/.signin-steps/dist/ as scripts/build.mjs builds dist/, with STEPS timed,
 * each call's nanoseconds passed to `record`, and returns that directory's URL.
 */
export async function timedDist(record: (label: string, ns: number) => void): Promise<URL> {
  const src = fileURLToPath(new URL('../src/', import.meta.url))
  // Inside the project, so that the build resolves its packages from node_modules/.
  const out = new URL('.signin-steps/dist/', import.meta.url)
  rmSync(out, { recursive: true, force: true })
  const timing: Plugin = {
    name: 'signin-steps',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const module = args.path.startsWith(src) ? args.path.slice(src.length) : undefined
        const steps = STEPS.filter(([file]) => file === module)
        if (steps.length === 0) return undefined
        let source = readFileSync(args.path, 'utf8')
        for (const [, fn, label] of steps) source = timeStep(source, module!, fn, label)
        return { contents: source, loader: 'ts' }
      })
    },
  }
  await bundleServer({ outdir: fileURLToPath(out), plugins: [timing] })
  ;(globalThis as Record<string, unknown>)[TIMER] = timer(record)
  return out
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
