/**
 * The authorization server's records in Redis (`store: { redis }`): the record store's contract as
 * KnexAdapter's methods keep it (store-suite.ts), on ioredis 6 and 5, with records expiring by
 * Redis's TTL; and a flow end to end with its records in Redis (the users in SQLite), the user's
 * records deleted when they sign out everywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Redis } from 'ioredis'
import { redisRecords } from '../../src/features/authorization-server/redis.js'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { describeWithRedis } from '../support/redis.js'
import { csrfOf } from '../password/password-app.js'
import { authorize, oauth, pkce, relyingParty, signedInBrowser, startServerApp, type ServerApp } from './as-app.js'

const sqlite = await findDatabaseServer('sqlite')
const soon = () => new Date(Date.now() + 3_600_000)

await describeWithRedis('the authorization server\'s records in Redis', (redis) => {
  afterAll(() => redis.cleanUp())

  for (const [version, connect] of [['ioredis 6', () => redis.connect()], ['ioredis 5', () => redis.connectIoredis5() as unknown as Redis]] as const) {
    describe(version, () => {
      let client: Redis
      let store: ReturnType<typeof redisRecords>
      let prefix: string
      beforeAll(() => {
        client = connect()
        prefix = redis.uniqueKeyPrefix()
        store = redisRecords(client, prefix)
      })

      it('stores, finds, keeps the consumed mark across a save, and lets Redis expire a record', async () => {
        await store.upsertOAuthRecord({ model: 'AuthorizationCode', id: 'code-1', payload: { grantId: 'g1', accountId: 'u1', nested: { a: [1, 'ü'] } }, expiresAt: soon() })
        expect(await store.findOAuthRecord('AuthorizationCode', 'code-1')).toEqual({ payload: { grantId: 'g1', accountId: 'u1', nested: { a: [1, 'ü'] } }, consumedAt: null })
        expect(await store.consumeOAuthRecord('AuthorizationCode', 'code-1', new Date())).toBe(true)
        await store.upsertOAuthRecord({ model: 'AuthorizationCode', id: 'code-1', payload: { grantId: 'g1', again: true }, expiresAt: soon() })
        expect((await store.findOAuthRecord('AuthorizationCode', 'code-1'))?.consumedAt).toBeInstanceOf(Date)
        const ttl = await client.pttl(`${prefix}:r:AuthorizationCode:code-1`)
        expect(ttl).toBeGreaterThan(3_500_000)
        await store.upsertOAuthRecord({ model: 'Interaction', id: 'short', payload: {}, expiresAt: new Date(Date.now() + 50) })
        await new Promise((resolve) => setTimeout(resolve, 120))
        expect(await store.findOAuthRecord('Interaction', 'short')).toBeNull()
      })

      it('finds by uid and user code; consumes once under a race of three', async () => {
        await store.upsertOAuthRecord({ model: 'Session', id: 's-1', payload: { uid: 'Uid-ABC', accountId: 'u1' }, expiresAt: soon() })
        await store.upsertOAuthRecord({ model: 'DeviceCode', id: 'd-1', payload: { userCode: 'WDJB-MJHT' }, expiresAt: soon() })
        expect((await store.findOAuthRecordBy('Session', 'uid', 'Uid-ABC'))?.payload).toMatchObject({ accountId: 'u1' })
        expect(await store.findOAuthRecordBy('Session', 'uid', 'uid-abc')).toBeNull()
        expect((await store.findOAuthRecordBy('DeviceCode', 'userCode', 'WDJB-MJHT'))?.payload).toMatchObject({ userCode: 'WDJB-MJHT' })
        await store.upsertOAuthRecord({ model: 'RefreshToken', id: 'rt-race', payload: { grantId: 'g2' }, expiresAt: soon() })
        const answers = await Promise.all([1, 2, 3].map(() => store.consumeOAuthRecord('RefreshToken', 'rt-race', new Date())))
        expect(answers.filter(Boolean)).toHaveLength(1)
      })

      it('lists a user\'s grants, deletes a grant with its records and a user\'s records', async () => {
        await store.upsertOAuthRecord({ model: 'Grant', id: 'g3', payload: { accountId: 'u3', clientId: 'cli' }, expiresAt: soon() })
        await store.upsertOAuthRecord({ model: 'RefreshToken', id: 'rt-3', payload: { grantId: 'g3', accountId: 'u3' }, expiresAt: soon() })
        await store.upsertOAuthRecord({ model: 'Grant', id: 'g4', payload: { accountId: 'u3', clientId: 'web' }, expiresAt: null })
        await store.upsertOAuthRecord({ model: 'Grant', id: 'g5', payload: { accountId: 'u4', clientId: 'cli' }, expiresAt: soon() })
        const listed = await store.listOAuthRecords('u3', 'Grant')
        expect(listed.map((grant) => grant.id).sort()).toEqual(['g3', 'g4'])
        expect(listed.find((grant) => grant.id === 'g4')?.expiresAt).toBeNull()
        await store.deleteOAuthGrant('g3')
        expect(await store.findOAuthRecord('Grant', 'g3')).toBeNull()
        expect(await store.findOAuthRecord('RefreshToken', 'rt-3')).toBeNull()
        expect((await store.listOAuthRecords('u3', 'Grant')).map((grant) => grant.id)).toEqual(['g4'])
        expect(await store.deleteOAuthAccount('u3')).toBe(1)
        expect(await store.findOAuthRecord('Grant', 'g4')).toBeNull()
        expect(await store.findOAuthRecord('Grant', 'g5')).not.toBeNull()
      })
    })
  }

  describe('a flow with its records in Redis', () => {
    const db = migratedDatabase(sqlite)
    afterAll(closeAll)
    let app: ServerApp
    let client: Redis
    let prefix: string
    beforeAll(async () => {
      client = redis.connect()
      prefix = redis.uniqueKeyPrefix()
      app = await startServerApp(db.knex, { authorizationServer: { scopes: ['reports:read'], store: { redis: client, keyPrefix: prefix }, clients: [{ client_id: 'cli', application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/callback'] }] } })
    })

    it('signs a native app in, its records in Redis and none in the table; refresh replay ends the grant; deleting the user deletes its records', async () => {
      const config = await relyingParty(app, 'cli')
      const { verifier, challenge } = await pkce()
      const url = oauth.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:61000/callback', scope: 'openid reports:read', code_challenge: challenge, code_challenge_method: 'S256' })
      const tokens = await oauth.authorizationCodeGrant(config, await authorize(await signedInBrowser(app, 'ada@example.com'), url), { pkceCodeVerifier: verifier })
      expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)
      expect(await db.knex('OAuthRecord').count({ n: '*' }).first()).toMatchObject({ n: 0 })
      expect((await client.keys(`${prefix}:r:Grant:*`)).length).toBe(1)
      const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!)
      await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
      expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status).toBe(401)

      // A second grant, then the user signs out everywhere: the wing's hook deletes the user's records in Redis.
      const browser = await signedInBrowser(app, 'ada@example.com')
      const again = await pkce()
      const second = await oauth.authorizationCodeGrant(config, await authorize(browser, oauth.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:61000/callback', scope: 'openid reports:read', code_challenge: again.challenge, code_challenge_method: 'S256' })), { pkceCodeVerifier: again.verifier })
      const ada = await app.adapter.getUserByEmail('ada@example.com')
      expect((await client.smembers(`${prefix}:a:${ada!.id}`)).length).toBeGreaterThan(0)
      await browser.request(`${app.origin}/api/auth/sessions/signout-everywhere`, { body: new URLSearchParams({ csrfToken: await csrfOf(browser, app.origin) }) })
      expect(await client.exists(`${prefix}:a:${ada!.id}`)).toBe(0)
      expect(await client.keys(`${prefix}:r:Grant:*`)).toEqual([])
      expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${second.access_token}` } })).status).toBe(401)
    })
  })
})
