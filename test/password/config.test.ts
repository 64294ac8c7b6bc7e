/**
 * The password provider at init: every way it cannot work fails `Portcullis()` with an error that
 * says what to change (no adapter, an adapter without the password methods, JWT sessions that could
 * not be ended by a reset, nowhere to send its mails, a policy below NIST's floor, the console
 * transport in production, two of them), and nothing of its hashing or mail code loads at init.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import Portcullis, { InvalidConfigurationError, UntrustedHostError, type Adapter, type PortcullisConfig } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Nodemailer from 'portcullis/providers/nodemailer'
import Password, { type PasswordOptions } from 'portcullis/providers/password'
import request from 'supertest'
import { authApp } from '../support/app-rig.js'
import { isolateEnv } from '../support/env.js'

isolateEnv(['NODE_ENV', 'AUTH_URL', 'AUTH_TRUST_HOST', 'AUTH_EMAIL_SERVER', 'AUTH_EMAIL_FROM'], ['NODE_ENV'])

const SECRET = 'password-config-secret-0123456789abcdef'
const silent = { error: () => {}, warn: () => {}, debug: () => {} }

let db: Knex
beforeAll(async () => {
  db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
})
afterAll(() => db?.destroy())

function init(options: PasswordOptions = { server: 'console' }, config: Partial<PortcullisConfig> = {}) {
  return () => Portcullis({ secret: SECRET, logger: silent, adapter: KnexAdapter(db), providers: [Password(options)], ...config })
}

describe('the Password provider at init', () => {
  it('needs an adapter, with the password methods; the error names the missing ones', () => {
    expect(init(undefined, { adapter: undefined, session: { strategy: 'jwt', store: 'memory' } })).toThrow(/Password provider "password" stores users and password hashes: it needs an adapter/)
    const { getUserPassword: _get, setUserPassword: _set, ...older } = KnexAdapter(db)
    expect(init(undefined, { adapter: older as Adapter })).toThrow(/the adapter has no getUserPassword, setUserPassword/)
  })

  it('refuses JWT sessions without session.store (a reset could not end them), and takes them with one', () => {
    expect(init(undefined, { session: { strategy: 'jwt' } })).toThrow(/JWT sessions can only do with session.store/)
    expect(init(undefined, { session: { strategy: 'jwt', store: 'memory' } })).not.toThrow()
  })

  it('needs somewhere to send its mails: its own server, AUTH_EMAIL_SERVER, a Nodemailer provider, or sendMail', () => {
    expect(init({})).toThrow(/has nowhere to send them: set AUTH_EMAIL_SERVER/)
    process.env.AUTH_EMAIL_SERVER = 'smtp://127.0.0.1:2525'
    expect(init({})).toThrow(/no sender: set AUTH_EMAIL_FROM/)
    process.env.AUTH_EMAIL_FROM = 'no-reply@example.com'
    expect(init({})).not.toThrow()
    delete process.env.AUTH_EMAIL_SERVER
    delete process.env.AUTH_EMAIL_FROM
    const shared = () => Portcullis({ secret: SECRET, logger: silent, adapter: KnexAdapter(db), providers: [Nodemailer({ server: 'smtp://127.0.0.1:2525', from: 'a@example.com' }), Password()] })
    expect(shared).not.toThrow()
    expect(init({ sendMail: async () => {} })).not.toThrow()
  })

  it("refuses the console transport in production, and a site URL taken from the request's Host there", () => {
    process.env.NODE_ENV = 'production'
    expect(init({ server: 'console' }, { trustHost: true })).toThrow(/server 'console' only prints the links/)
    expect(init({ sendMail: async () => {} })).toThrow(UntrustedHostError)
    expect(init({ sendMail: async () => {} }, { trustHost: true })).not.toThrow()
  })

  it('keeps the policy at or above NIST SP 800-63B: minLength 8 at least, maxLength 64 at least', () => {
    expect(init({ server: 'console', minLength: 6 })).toThrow(/minLength must be a whole number of at least 8/)
    expect(init({ server: 'console', maxLength: 32 })).toThrow(/maxLength must be a whole number from max\(minLength, 64\) to 4096/)
    expect(init({ server: 'console', minLength: 12, maxLength: 128 })).not.toThrow()
    expect(init({ server: 'console', resetMaxAge: 0 })).toThrow(/resetMaxAge must be a number of seconds above 0/)
    expect(init({ server: 'console', hashing: { hash: async () => 'x' } as never })).toThrow(/hashing must be/)
  })

  it('is one: two password providers are refused', () => {
    const two = () => Portcullis({ secret: SECRET, logger: silent, adapter: KnexAdapter(db), providers: [Password({ server: 'console' }), Password({ id: 'other', server: 'console' })] })
    expect(two).toThrow(InvalidConfigurationError)
    expect(two).toThrow(/Two password providers/)
  })

  it('shows as a credentials provider to clients (Auth.js and portcullis/client post to /callback/password)', async () => {
    const { app } = authApp({ secret: SECRET, logger: silent, adapter: KnexAdapter(db), providers: [Password({ server: 'console' })] })
    const response = await request(app).get('/api/auth/providers').expect(200)
    expect(response.body).toEqual({
      password: { id: 'password', name: 'Password', type: 'credentials', signinUrl: expect.stringMatching(/\/api\/auth\/signin\/password$/), callbackUrl: expect.stringMatching(/\/api\/auth\/callback\/password$/) },
    })
  })
})
