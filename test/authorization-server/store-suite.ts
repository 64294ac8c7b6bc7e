/**
 * The authorization server's records on one database (store-sqlite/-postgres/-mariadb.test.ts run
 * it): KnexAdapter's OAuthRecord methods (a payload's round trip, the consumed mark kept across a
 * save, expiry, the lookups by uid and user code, a consume raced by three, a grant's and a user's
 * records deleted, the prune, deleteUser), then a short flow end to end on that database: a native
 * app's code exchanged, its token read by `auth()`, the refresh token rotated and replayed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { closeAll } from '../support/app-rig.js'
import { migratedDatabase, type DatabaseServer } from '../support/databases.js'
import { authorize, oauth, pkce, relyingParty, signedInBrowser, startServerApp, type ServerApp } from './as-app.js'

const soon = () => new Date(Date.now() + 3_600_000)

export function runRecordStoreSuite(server: DatabaseServer): void {
  const db = migratedDatabase(server)
  const adapter = () => KnexAdapter(db.knex)

  describe('the OAuthRecord methods', () => {
    it('stores a payload and finds it; a second save keeps the consumed mark; an expired record is not found', async () => {
      const store = adapter()
      await store.upsertOAuthRecord({ model: 'AuthorizationCode', id: 'code-1', payload: { grantId: 'g1', accountId: 'u1', nested: { a: [1, 'ü'] } }, expiresAt: soon() })
      expect(await store.findOAuthRecord('AuthorizationCode', 'code-1')).toEqual({ payload: { grantId: 'g1', accountId: 'u1', nested: { a: [1, 'ü'] } }, consumedAt: null })
      expect(await store.consumeOAuthRecord('AuthorizationCode', 'code-1', new Date())).toBe(true)
      await store.upsertOAuthRecord({ model: 'AuthorizationCode', id: 'code-1', payload: { grantId: 'g1', accountId: 'u1', again: true }, expiresAt: soon() })
      const found = await store.findOAuthRecord('AuthorizationCode', 'code-1')
      expect(found?.payload).toMatchObject({ again: true })
      expect(found?.consumedAt).toBeInstanceOf(Date)
      // The same id in another model is another record.
      expect(await store.findOAuthRecord('RefreshToken', 'code-1')).toBeNull()
      await store.upsertOAuthRecord({ model: 'Interaction', id: 'old', payload: {}, expiresAt: new Date(Date.now() - 1000) })
      expect(await store.findOAuthRecord('Interaction', 'old')).toBeNull()
    })

    it('finds a session by uid and a device code by its user code, case-sensitively', async () => {
      const store = adapter()
      await store.upsertOAuthRecord({ model: 'Session', id: 's-1', payload: { uid: 'Uid-ABC', accountId: 'u1' }, expiresAt: soon() })
      await store.upsertOAuthRecord({ model: 'DeviceCode', id: 'd-1', payload: { userCode: 'WDJB-MJHT' }, expiresAt: soon() })
      expect((await store.findOAuthRecordBy('Session', 'uid', 'Uid-ABC'))?.payload).toMatchObject({ accountId: 'u1' })
      expect(await store.findOAuthRecordBy('Session', 'uid', 'uid-abc')).toBeNull()
      expect((await store.findOAuthRecordBy('DeviceCode', 'userCode', 'WDJB-MJHT'))?.payload).toMatchObject({ userCode: 'WDJB-MJHT' })
      expect(await store.findOAuthRecordBy('DeviceCode', 'userCode', 'wdjb-mjht')).toBeNull()
    })

    it('consumes a record once when three ask at the same moment', async () => {
      const store = adapter()
      await store.upsertOAuthRecord({ model: 'RefreshToken', id: 'rt-race', payload: { grantId: 'g2' }, expiresAt: soon() })
      const answers = await Promise.all([1, 2, 3].map(() => store.consumeOAuthRecord('RefreshToken', 'rt-race', new Date())))
      expect(answers.filter(Boolean)).toHaveLength(1)
    })

    it('deletes a grant with its records, a user\'s records, the expired ones, and the user\'s with deleteUser', async () => {
      const store = adapter()
      const user = await store.createUser({ email: 'records@example.com', emailVerified: null })
      const other = await store.createUser({ email: 'other@example.com', emailVerified: null })
      const id255 = 'x'.repeat(255)
      await store.upsertOAuthRecord({ model: 'Grant', id: 'g3', payload: { accountId: user.id, clientId: 'cli' }, expiresAt: soon() })
      await store.upsertOAuthRecord({ model: 'RefreshToken', id: id255, payload: { grantId: 'g3', accountId: user.id }, expiresAt: soon() })
      await store.upsertOAuthRecord({ model: 'Grant', id: 'g4', payload: { accountId: user.id, clientId: 'web' }, expiresAt: soon() })
      await store.upsertOAuthRecord({ model: 'Grant', id: 'g5', payload: { accountId: other.id, clientId: 'cli' }, expiresAt: soon() })
      expect((await store.listOAuthRecords(user.id, 'Grant')).map((grant) => grant.id).sort()).toEqual(['g3', 'g4'])
      await store.deleteOAuthGrant('g3')
      expect(await store.findOAuthRecord('Grant', 'g3')).toBeNull()
      expect(await store.findOAuthRecord('RefreshToken', id255)).toBeNull()
      expect(await store.findOAuthRecord('Grant', 'g4')).not.toBeNull()
      await store.upsertOAuthRecord({ model: 'Interaction', id: 'gone', payload: {}, expiresAt: new Date(Date.now() - 1000) })
      expect(await store.pruneOAuthRecords(new Date())).toBe(1)
      await store.deleteUser(user.id)
      expect(await store.findOAuthRecord('Grant', 'g4')).toBeNull()
      expect(await store.findOAuthRecord('Grant', 'g5')).not.toBeNull()
      expect(await store.deleteOAuthAccount(other.id)).toBe(1)
      expect(await store.listOAuthRecords(other.id, 'Grant')).toEqual([])
    })
  })

  describe('a flow on this database', () => {
    afterAll(closeAll)
    let app: ServerApp
    beforeAll(async () => {
      app = await startServerApp(db.knex)
    })

    it('exchanges a native app\'s code, reads its token, rotates its refresh token, and ends the grant on a replay', async () => {
      const config = await relyingParty(app, 'cli')
      const { verifier, challenge } = await pkce()
      const url = oauth.buildAuthorizationUrl(config, { redirect_uri: 'http://127.0.0.1:61000/callback', scope: 'openid reports:read', code_challenge: challenge, code_challenge_method: 'S256' })
      const tokens = await oauth.authorizationCodeGrant(config, await authorize(await signedInBrowser(app, 'ada@example.com'), url), { pkceCodeVerifier: verifier })
      expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200)
      const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token!)
      await expect(oauth.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
      await expect(oauth.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' })
      expect((await fetch(`${app.origin}/api/reports`, { headers: { authorization: `Bearer ${refreshed.access_token}` } })).status).toBe(401)
    })
  })
}
