/**
 * The `account` option at init: off unless given (its routes then say how to turn it on), its
 * settings checked, and what it needs of the rest refused with a message saying what to change.
 */
import { describe, expect, it } from '@jest/globals'
import knexFactory from 'knex'
import request from 'supertest'
import Portcullis, { InvalidConfigurationError } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp } from '../support/app-rig.js'
import { SECRET } from '../support/flow.js'

const db = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
const providers = [Credentials({ authorize: async () => null })]
const silent = { error: () => {}, warn: () => {}, debug: () => {} }

describe('the account option', () => {
  it('is off unless given: its routes say how to turn it on', async () => {
    const { app } = authApp({ secret: SECRET, trustHost: true, providers, adapter: KnexAdapter(db) })
    const response = await request(app).get('/api/auth/account')
    expect(response.status).toBe(400)
    expect(JSON.stringify(response.body)).toContain('set account: true')
  })

  it('refuses settings that cannot work, saying what to change', () => {
    const make = (account: unknown, extra: object = {}) => () => Portcullis({ secret: SECRET, providers, adapter: KnexAdapter(db), logger: silent, account: account as never, ...extra })
    expect(make('yes')).toThrow(/account must be true or an object/)
    expect(make({ recentSignInMaxAge: 0 })).toThrow(/recentSignInMaxAge must be a whole number of seconds above 0/)
    expect(make({ recentSignInMaxAge: 1.5 })).toThrow(InvalidConfigurationError)
    expect(make({ sendMail: 'smtp://x' })).toThrow(/account.sendMail must be a function/)
    expect(() => Portcullis({ secret: SECRET, providers, logger: silent, account: true })).toThrow(/account needs an adapter with getUser, getUserByEmail, updateUser, deleteUser, getAccountsByUserId, createVerificationToken, useVerificationToken/)
    // A deleted user's JWT sessions could not be ended elsewhere without a store.
    expect(make(true, { session: { strategy: 'jwt' } })).toThrow(/JWT sessions can only do with session.store/)
    expect(make(true, { session: { strategy: 'jwt', store: 'memory' } })).not.toThrow()
    expect(make({ recentSignInMaxAge: 300 })).not.toThrow()
  })

  it('refuses a deletion grace period that could never end or mark anything', () => {
    const stop = new AbortController()
    const make = (account: unknown, extra: object = {}) => () => Portcullis({ secret: SECRET, providers, adapter: KnexAdapter(db), logger: silent, account: account as never, ...extra })
    for (const period of [-1, 1.5, '3600', 367 * 24 * 3600]) expect(make({ deletionGracePeriod: period })).toThrow(/account.deletionGracePeriod must be a whole number of seconds from 0/)
    // Without the prune, a marked account would stay for ever.
    expect(make({ deletionGracePeriod: 3600 })).toThrow(/deletionGracePeriod needs the background prune/)
    // An adapter without the marks cannot keep the rows while the period runs.
    const { markUserDeleted: _mark, ...unmarked } = KnexAdapter(db)
    expect(make({ deletionGracePeriod: 3600 }, { adapter: unmarked, prune: { everyMinutes: 60, signal: stop.signal } })).toThrow(/deletionGracePeriod needs an adapter with markUserDeleted/)
    expect(make({ deletionGracePeriod: 3600 }, { prune: { everyMinutes: 60, signal: stop.signal } })).not.toThrow()
    expect(make({ deletionGracePeriod: 0 })).not.toThrow()
    stop.abort()
  })
})
