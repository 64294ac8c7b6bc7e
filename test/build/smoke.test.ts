/**
 * The built package, as users get it: plain `node` imports dist/ through package.json `exports`
 * (ESM `import` and CommonJS `require`), and TypeScript apps of both kinds type-check against the
 * emitted declarations. Jest's own module loading is looser than Node's, so only this catches a
 * broken `exports` map or a CommonJS interop mistake.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, beforeAll } from '@jest/globals'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url))
// stderr piped, not inherited: the fixtures' apps log UntrustedHost (no AUTH_URL), expected here; a failure's
// error still carries it.
const node = (file: string) => execFileSync(process.execPath, [`${fixtures}${file}`], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] })

describe('built package', () => {
  beforeAll(() => {
    // `npm test` builds first; building here too keeps `npx jest test/build` honest on its own.
    if (!existsSync(`${root}dist/cjs/index.cjs`)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
  }, 120_000)

  it('signs in from an ESM app run by plain node', () => {
    expect(node('app.mjs')).toContain('esm: signed in as Smoke')
  })

  it('signs in from a CommonJS app run by plain node', () => {
    expect(node('app.cjs')).toContain('cjs: signed in as Smoke')
  })

  it('stores a user through portcullis/adapters/knex from ESM and CommonJS apps run by plain node', () => {
    expect(node('adapter.mjs')).toContain('esm adapter: stored Smoke')
    expect(node('adapter.cjs')).toContain('cjs adapter: stored Smoke')
  })

  it('loads nothing of OAuth (openid-client, src/oauth) to serve pages and read sessions; the first OAuth sign-in loads it', () => {
    const result = JSON.parse(node('lazy-oauth.mjs')) as { beforeSignIn: string[]; afterSignIn: number; rateLimitAfterCredentials: number; signInStatus: number; location: string }
    // Nor the sign-in rate limiter (rate-limiter-flexible).
    expect(result.beforeSignIn).toEqual([])
    // The positive control: the hook sees the OAuth modules once a sign-in needs them.
    expect(result.afterSignIn).toBeGreaterThan(0)
    // And the rate limiter once a credentials attempt needs it.
    expect(result.rateLimitAfterCredentials).toBeGreaterThan(0)
    expect(result).toMatchObject({ signInStatus: 302, location: 'https://github.com/login/oauth/authorize' })
  })

  it('loads nothing of e-mail sign-in (nodemailer, the sending and link code) to serve pages and read sessions; the first e-mail sign-in loads it', () => {
    const result = JSON.parse(node('lazy-email.mjs')) as { beforeSignIn: string[]; nodemailerAfterSignIn: number; callbackLoaded: boolean; signInLocation: string; callbackStatus: number; callbackAsks: boolean }
    expect(result.beforeSignIn).toEqual([])
    // The positive controls: the hook sees nodemailer once an e-mail is sent (here to a server that
    // is down), and the link's code once a link is opened (here an unknown one, in a browser that did
    // not ask for it: the confirmation page).
    expect(result.nodemailerAfterSignIn).toBeGreaterThan(0)
    expect(result.callbackLoaded).toBe(true)
    expect(result.signInLocation).toBe('/api/auth/signin?error=EmailSignInError')
    expect(result).toMatchObject({ callbackStatus: 200, callbackAsks: true })
  })

  it('loads nothing of passkey verification (@simplewebauthn/server, the passkey callback) to serve pages, the passkey script and session reads; the first passkey options load it', () => {
    const result = JSON.parse(node('lazy-passkey.mjs')) as { beforeOptions: string[]; afterOptions: number; optionsStatus: number; button: boolean }
    expect(result.beforeOptions).toEqual([])
    // The positive control: the hook sees the library once a ceremony needs it.
    expect(result.afterOptions).toBeGreaterThan(0)
    expect(result).toMatchObject({ optionsStatus: 200, button: true })
  })

  it('loads nothing of the password accounts code (policy, common passwords, mails) at init, for its pages or session reads; the first sign-up loads it', () => {
    const result = JSON.parse(node('lazy-password.mjs')) as { beforeSignUp: string[]; afterSignUp: number; signUpStatus: number; pageStatus: number; link: boolean }
    expect(result.beforeSignUp).toEqual([])
    expect(result.afterSignUp).toBeGreaterThan(0)
    expect(result).toMatchObject({ signUpStatus: 302, pageStatus: 200, link: true })
  })

  it('loads nothing of the second factor (otpauth, qrcode, its operations) at init, for a first factor without enrolment or session reads; the settings page loads it', () => {
    const result = JSON.parse(node('lazy-two-factor.mjs')) as { beforeSetup: string[]; afterSetup: number; signInStatus: number; signedIn: string; setupStatus: number; qr: boolean }
    expect(result.beforeSetup).toEqual([])
    expect(result.afterSetup).toBeGreaterThan(0)
    expect(result).toMatchObject({ signInStatus: 302, signedIn: 'lazy@example.com', setupStatus: 200, qr: true })
  })

  it('loads nothing of the API key read (lookup, cache, limiter) at init or for requests without a key; the first request with a key loads it', () => {
    const result = JSON.parse(node('lazy-api-keys.mjs')) as { beforeKey: string[]; afterKey: number; signedOut: unknown; withKey: unknown }
    expect(result.beforeKey).toEqual([])
    expect(result.afterKey).toBeGreaterThan(0)
    expect(result).toMatchObject({ signedOut: null, withKey: null })
  })

  it('loads nothing of OpenTelemetry with telemetry off, nor at init or for session reads with it on; the first traced sign-in loads it', () => {
    const result = JSON.parse(node('lazy-telemetry.mjs')) as { beforeTraced: string[]; afterTraced: number; signedIn: string }
    expect(result.beforeTraced).toEqual([])
    // The positive control: the hook sees the API once a sign-in attempt is traced.
    expect(result.afterTraced).toBeGreaterThan(0)
    expect(result.signedIn).toBe('Lazy')
  })

  it('bundles each module once across the entry points (one class per error) and keeps the error classes\' names', () => {
    // dist/ is bundled (scripts/bundle.mjs): code that two entry points share must sit in one chunk, or
    // an error thrown by one entry point's copy fails `instanceof` against the class another exports.
    const files = readdirSync(`${root}dist`, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    const defining = files.filter((entry) => /\bclass AuthError\b|\bAuthError = class\b/.test(readFileSync(`${entry.parentPath}/${entry.name}`, 'utf8')))
    expect(defining).toHaveLength(1)
    // `error.name` is the class's own name (new.target.name), which a bundler may rename on a clash.
    const script = "const m = await import('portcullis'); console.log(JSON.stringify(Object.entries(m).filter(([k, v]) => typeof v === 'function' && /Error$/.test(k)).map(([k, v]) => [k, v.name, new v('x', {}).name])))"
    const names = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })) as [string, string, string][]
    expect(names.length).toBeGreaterThan(20)
    expect(names.filter(([exported, name, instance]) => name !== exported || instance !== exported)).toEqual([])
  })

  // The TypeScript consumers (consumer-*.mts/cts, augment.mts) are type-checked against the
  // installed tarball, with exactOptionalPropertyTypes on, in package.test.ts.
})
