/**
 * The passkey provider at init: every way it cannot work fails `Portcullis()` with an
 * InvalidConfigurationError that says what to change (no adapter, an adapter without the
 * authenticator methods, @simplewebauthn/server not installed, an RP ID or origin that cannot be
 * known or that browsers would refuse), and what it resolves to when it can work.
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import request from 'supertest'
import Portcullis, { InvalidConfigurationError, type Adapter, type PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Passkey, { type PasskeyOptions } from 'portcullis/providers/passkey'
import { isolateEnv } from '../support/env.js'
import { authApp } from '../support/app-rig.js'
import { passkeyDatabase, SECRET } from './passkey-app.js'

isolateEnv(['NODE_ENV', 'AUTH_URL', 'LEGACYAUTH_URL', 'AUTH_TRUST_HOST'], ['NODE_ENV'])

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const silent = { error: () => {}, warn: () => {}, debug: () => {} }

let db: Knex
beforeAll(async () => {
  db = await passkeyDatabase()
})
afterAll(() => db?.destroy())

function init(passkey: PasskeyOptions | undefined, config: Partial<PortcullisConfig> = {}) {
  return () => Portcullis({ secret: SECRET, logger: silent, adapter: KnexAdapter(db), providers: [passkey === undefined ? Passkey : Passkey(passkey)], ...config })
}

describe('the adapter', () => {
  it('is required: passkeys and their challenges are stored', () => {
    expect(init({ relayingParty: { origin: 'https://example.com' } }, { adapter: undefined })).toThrow(InvalidConfigurationError)
    expect(init({ relayingParty: { origin: 'https://example.com' } }, { adapter: undefined })).toThrow(/Passkey provider "passkey" needs an adapter.*KnexAdapter/)
  })

  it('must have the authenticator methods (an adapter from before them has not); the error names them', () => {
    const { createAuthenticator: _create, getAuthenticator: _get, ...older } = KnexAdapter(db)
    expect(init({ relayingParty: { origin: 'https://example.com' } }, { adapter: older as Adapter })).toThrow(/needs the adapter's createAuthenticator, getAuthenticator; this adapter lacks them/)
  })
})

describe('@simplewebauthn/server', () => {
  // A child process whose require.resolve cannot find the package, as in an app that never installed
  // it; the built package is what it imports (npm run build first).
  const run = (hide: boolean) =>
    execFileSync(
      process.execPath,
      [
        ...(hide ? ['-r', './test/passkey/fixtures/hide-simplewebauthn.cjs'] : []),
        '--input-type=module',
        '-e',
        `const { default: Portcullis } = await import('portcullis')
const { default: Passkey } = await import('portcullis/providers/passkey')
try {
  Portcullis({ secret: '${SECRET}', logger: { error() {}, warn() {}, debug() {} }, providers: [Passkey({ relayingParty: { origin: 'https://example.com' } })] })
} catch (error) { console.log(error.name + ': ' + error.message) }`,
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
    )

  it('must be installed: init says to install it', () => {
    expect(run(true)).toMatch(/^InvalidConfigurationError: Passkey provider "passkey": @simplewebauthn\/server is not installed\. Run `npm install @simplewebauthn\/server`/)
  })

  it('is found when installed (the same app fails on the next check instead: no adapter)', () => {
    expect(run(false)).toMatch(/^InvalidConfigurationError: Passkey provider "passkey" needs an adapter/)
  })
})

describe('the relying party', () => {
  it('needs the site\'s origin: from AUTH_URL, or relayingParty.origin', () => {
    expect(init(undefined)).toThrow(/the site's origin is unknown, and passkeys are bound to it\. Set AUTH_URL .*or pass relayingParty: \{ origin/)
    process.env.AUTH_URL = 'https://app.example.com/api/auth'
    expect(init(undefined)).not.toThrow()
  })

  it('takes the RP ID and origin from AUTH_URL, and the options from a GET /webauthn-options answer', async () => {
    process.env.AUTH_URL = 'https://app.example.com/api/auth'
    const { app } = authApp({ secret: SECRET, adapter: KnexAdapter(db), providers: [Passkey({ relayingParty: { name: 'Example' } })] })
    const answer = await request(app).get('/api/auth/webauthn-options/passkey').set('Host', 'app.example.com')
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ action: 'authenticate', options: { rpId: 'app.example.com', userVerification: 'required', timeout: 60000 } })
    // Discoverable credentials: the browser offers whatever passkeys it has for the site.
    expect(answer.body.options.allowCredentials ?? []).toEqual([])
    expect(String(answer.headers['set-cookie'])).toMatch(/__Secure-authjs\.challenge=[^;]+; Max-Age=300; Path=\/; HttpOnly; Secure; SameSite=Lax/)
  })

  it('accepts a parent domain as RP ID, and refuses one browsers would refuse', () => {
    expect(init({ relayingParty: { id: 'example.com', origin: ['https://www.example.com', 'https://example.com'] } })).not.toThrow()
    expect(init({ relayingParty: { id: 'other.com', origin: 'https://www.example.com' } })).toThrow(/the RP ID "other.com" is not www.example.com nor a parent domain of it/)
    expect(init({ relayingParty: { id: 'ample.com', origin: 'https://example.com' } })).toThrow(/not example.com nor a parent domain/)
    expect(init({ relayingParty: { origin: 'http://127.0.0.1:3000' } })).toThrow(/plain http, where browsers offer no passkeys/)
    expect(init({ relayingParty: { origin: 'https://127.0.0.1:3000' } })).toThrow(/the RP ID "127.0.0.1" is an IP address, which browsers refuse/)
  })

  it('refuses an origin that is not one: a path, another scheme, plain http off localhost', () => {
    expect(init({ relayingParty: { origin: 'https://example.com/app' } })).toThrow(/relayingParty.origin must be an origin such as "https:\/\/example.com" \(no path\)/)
    expect(init({ relayingParty: { origin: 'ftp://example.com' } })).toThrow(/must be an origin/)
    expect(init({ relayingParty: { origin: [] } })).toThrow(/relayingParty.origin is an empty list/)
    expect(init({ relayingParty: { origin: 'http://example.com' } })).toThrow(/plain http/)
    expect(init({ relayingParty: { origin: 'http://localhost:3000' } })).not.toThrow()
  })

  it('refuses options that cannot work', () => {
    const origin = 'https://example.com'
    expect(init({ relayingParty: { origin }, userVerification: 'discouraged' as never })).toThrow(/userVerification must be "required" or "preferred"/)
    expect(init({ relayingParty: { origin }, timeout: 10 })).toThrow(/timeout must be a whole number of milliseconds, at least 1000/)
  })
})
