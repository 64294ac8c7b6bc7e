/**
 * KnexAdapter's API key methods, on one database (adapter-sqlite/-postgres/-mariadb.test.ts run it):
 * the lookup by hash joined to the owner, lists, revocation and expiry as conditional UPDATEs, the
 * last use written only when it is older than asked, the quota and its refill, deletion with the
 * user, and the prune.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it, jest } from '@jest/globals'
import type { AdapterApiKey } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import { migratedDatabase, type DatabaseServer } from '../support/databases.js'

const T0 = new Date(Date.UTC(2026, 11, 15, 12, 0, 0, 123))
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000)

function newKey(ownerId: string, fields: Partial<AdapterApiKey> = {}): AdapterApiKey {
  return {
    id: randomUUID(),
    keyHash: randomUUID().replace(/-/g, '').repeat(2),
    display: 'pc_live_AbCd…wXyZ',
    name: 'CI',
    owner: { type: 'user', id: ownerId },
    createdBy: ownerId,
    scopes: ['reports:read'],
    metadata: { team: 'data' },
    createdAt: T0,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    rateLimit: null,
    quota: null,
    ...fields,
  }
}

// Long: one describe of short tests, each against the same migrated database.
export function runApiKeyAdapterSuite(server: DatabaseServer): void {
  const db = migratedDatabase(server)
  const setUp = async () => {
    const adapter = KnexAdapter(db.knex)
    const user = await adapter.createUser({ email: `${randomUUID()}@example.com`, emailVerified: null, name: 'Ada', image: null })
    return { adapter, user }
  }

  describe('API keys', () => {
    it('finds a key by its hash with its owner, as stored', async () => {
      const { adapter, user } = await setUp()
      const key = newKey(user.id, { expiresAt: at(3600), rateLimit: { max: 5, windowSeconds: 60 }, quota: { remaining: 3, refillAmount: 10, refillInterval: 86400, lastRefillAt: null } })
      await adapter.createApiKey(key)
      const found = await adapter.getApiKeyByHash(key.keyHash)
      expect(found).toEqual({ key, user: { id: user.id, name: 'Ada', email: user.email, emailVerified: null, image: null } })
      expect(await adapter.getApiKeyByHash(key.keyHash.toUpperCase())).toBeNull()
      expect(await adapter.getApiKeyByHash(key.keyHash.slice(0, 63))).toBeNull()
    })

    it('refuses a duplicate hash', async () => {
      const { adapter, user } = await setUp()
      const key = newKey(user.id)
      await adapter.createApiKey(key)
      // By the driver's code, not `toThrow()`: better-sqlite3's errors can come from another realm than Jest's `Error`.
      await expect(adapter.createApiKey({ ...key, id: randomUUID() })).rejects.toHaveProperty('code', expect.stringMatching(/^(SQLITE_CONSTRAINT_UNIQUE|23505|ER_DUP_ENTRY)$/))
    })

    it('finds nothing for a key whose owner is gone, and deleteUser deletes the user’s keys', async () => {
      const { adapter, user } = await setUp()
      const key = newKey(user.id)
      await adapter.createApiKey(key)
      await db.knex('User').where({ id: user.id }).del()
      expect(await adapter.getApiKeyByHash(key.keyHash)).toBeNull()
      const other = await setUp()
      const kept = newKey(other.user.id)
      await other.adapter.createApiKey(kept)
      await other.adapter.deleteUser(other.user.id)
      expect(await db.knex('ApiKey').where({ id: kept.id }).first()).toBeUndefined()
    })

    // The lookup's SQL is built once per migration state (knex.ts): each state's SQL finds the key, and drops what it must.
    it('finds a key by its hash on a database migrated only to the API keys migration, then to the bans one, each state with its own checks', async () => {
      const own = await server.createDatabase()
      try {
        const source = { migrationSource: migrationSource() }
        // The eighth migration: no deletion mark, no bans, no organizations (an inner join on the user).
        for (let i = 0; i < 8; i++) await own.knex.migrate.up(source)
        const early = KnexAdapter(own.knex)
        const user = await early.createUser({ email: 'early@example.com', emailVerified: null, name: 'Ada', image: null })
        const key = newKey(user.id)
        await early.createApiKey(key)
        expect(await early.getApiKeyByHash(key.keyHash)).toEqual({ key, user })
        expect(await early.getApiKeyByHash(key.keyHash.toUpperCase())).toBeNull()
        // The fourteenth: the mark (eleventh) drops a marked user's key, the ban comes in the row. The
        // same adapter asks again after a minute (its clock moved on), and builds that state's SQL.
        for (let i = 8; i < 14; i++) await own.knex.migrate.up(source)
        expect(await own.knex.schema.hasTable('Organization')).toBe(false)
        const realNow = Date.now.bind(Date)
        jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 61_000)
        const later = early
        expect(await later.getApiKeyByHash(key.keyHash)).toEqual({ key, user })
        const bannedAt = new Date(Date.UTC(2026, 11, 16, 8, 0, 0, 0))
        expect(await later.banUser(user.id, { at: bannedAt, reason: 'spam', expiresAt: null })).toBe(true)
        expect((await later.getApiKeyByHash(key.keyHash))?.ownerBan).toEqual({ bannedAt, expiresAt: null })
        expect(await later.markUserDeleted(user.id, bannedAt)).toBe(true)
        expect(await later.getApiKeyByHash(key.keyHash)).toBeNull()
        expect(await later.restoreDeletedUser(user.id)).toBe(true)
        await own.knex('User').where({ id: user.id }).del()
        expect(await later.getApiKeyByHash(key.keyHash)).toBeNull()
      } finally {
        jest.restoreAllMocks()
        await own.destroy()
      }
    })

    it('lists the owner’s keys only, newest first, and gets one by id and owner', async () => {
      const { adapter, user } = await setUp()
      const other = await setUp()
      const older = newKey(user.id, { createdAt: at(-60) })
      const newer = newKey(user.id)
      await adapter.createApiKey(older)
      await adapter.createApiKey(newer)
      await adapter.createApiKey(newKey(other.user.id))
      expect((await adapter.listApiKeys({ type: 'user', id: user.id })).map((key) => key.id)).toEqual([newer.id, older.id])
      expect(await adapter.getApiKey(older.id, { type: 'user', id: user.id })).toEqual(older)
      expect(await adapter.getApiKey(older.id, { type: 'user', id: other.user.id })).toBeNull()
      expect(await adapter.getApiKey(older.id, { type: 'organization', id: user.id })).toBeNull()
    })

    it('revokes once, only the owner’s key, and a revoked key expires with it', async () => {
      const { adapter, user } = await setUp()
      const other = await setUp()
      const key = newKey(user.id)
      await adapter.createApiKey(key)
      expect(await adapter.revokeApiKey(key.id, { type: 'user', id: other.user.id }, at(1))).toBe(false)
      expect(await adapter.revokeApiKey(key.id, { type: 'user', id: user.id }, at(1))).toBe(true)
      expect(await adapter.revokeApiKey(key.id, { type: 'user', id: user.id }, at(2))).toBe(false)
      expect(await adapter.getApiKey(key.id, { type: 'user', id: user.id })).toMatchObject({ revokedAt: at(1), expiresAt: at(1) })
    })

    it('moves an expiry only sooner (rotation’s grace)', async () => {
      const { adapter, user } = await setUp()
      const key = newKey(user.id, { expiresAt: at(100) })
      await adapter.createApiKey(key)
      const owner = { type: 'user', id: user.id } as const
      expect(await adapter.expireApiKey(key.id, owner, at(200))).toBe(false)
      expect(await adapter.expireApiKey(key.id, owner, at(50))).toBe(true)
      expect((await adapter.getApiKey(key.id, owner))?.expiresAt).toEqual(at(50))
    })

    it('writes the last use only when the stored one is older than asked', async () => {
      const { adapter, user } = await setUp()
      const key = newKey(user.id)
      await adapter.createApiKey(key)
      const owner = { type: 'user', id: user.id } as const
      await adapter.touchApiKey(key.id, at(0), at(-60))
      expect((await adapter.getApiKey(key.id, owner))?.lastUsedAt).toEqual(at(0))
      await adapter.touchApiKey(key.id, at(30), at(-30))
      expect((await adapter.getApiKey(key.id, owner))?.lastUsedAt).toEqual(at(0))
      await adapter.touchApiKey(key.id, at(61), at(1))
      expect((await adapter.getApiKey(key.id, owner))?.lastUsedAt).toEqual(at(61))
    })

    it('uses the quota down to zero, concurrently exactly as many times as it has, then refills once due', async () => {
      const { adapter, user } = await setUp()
      const key = newKey(user.id, { createdAt: at(0), quota: { remaining: 3, refillAmount: 2, refillInterval: 60, lastRefillAt: null } })
      await adapter.createApiKey(key)
      const used = await Promise.all(Array.from({ length: 6 }, () => adapter.useApiKeyQuota(key.id, at(10))))
      expect(used.filter(Boolean)).toHaveLength(3)
      expect(await adapter.useApiKeyQuota(key.id, at(59))).toBe(false)
      expect(await adapter.useApiKeyQuota(key.id, at(60))).toBe(true)
      expect(await adapter.useApiKeyQuota(key.id, at(61))).toBe(true)
      expect(await adapter.useApiKeyQuota(key.id, at(62))).toBe(false)
      expect((await adapter.getApiKey(key.id, { type: 'user', id: user.id }))?.quota).toMatchObject({ remaining: 0, lastRefillAt: at(60) })
    })

    it('prunes expired and revoked keys, not valid ones', async () => {
      const { adapter, user } = await setUp()
      const expired = newKey(user.id, { expiresAt: new Date(Date.now() - 1000) })
      const valid = newKey(user.id, { expiresAt: new Date(Date.now() + 3600_000) })
      const forever = newKey(user.id)
      for (const key of [expired, valid, forever]) await adapter.createApiKey(key)
      const counts = await adapter.prune()
      expect(counts?.apiKeys).toBe(1)
      expect((await adapter.listApiKeys({ type: 'user', id: user.id })).map((key) => key.id).sort()).toEqual([valid.id, forever.id].sort())
    })
  })
}
