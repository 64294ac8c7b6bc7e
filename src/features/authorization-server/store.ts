/**
 * oidc-provider's storage (its `adapter` option: one object per model with upsert, find, consume,
 * destroy, …) on the authorization server's record store (the adapter's OAuthRecord methods, or Redis). Ending a grant here also tells this process's bearer read at once (`grantEnded`), and a
 * code or refresh token is consumed once even by requests that race.
 */
import type { OAuthRecordStore } from './types.js'

/** What oidc-provider calls on each model's storage. */
export interface ModelStore {
  upsert(id: string, payload: Record<string, unknown>, expiresIn?: number): Promise<void>
  find(id: string): Promise<Record<string, unknown> | undefined>
  findByUid(uid: string): Promise<Record<string, unknown> | undefined>
  findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined>
  consume(id: string): Promise<void>
  destroy(id: string): Promise<void>
  revokeByGrantId(grantId: string): Promise<void>
}

/** The found record as oidc-provider reads it: its payload, with `consumed` (seconds) when it was. */
function asPayload(found: { payload: Record<string, unknown>; consumedAt: Date | null } | null): Record<string, unknown> | undefined {
  if (!found) return undefined
  return found.consumedAt ? { ...found.payload, consumed: Math.floor(found.consumedAt.getTime() / 1000) } : found.payload
}

/** oidc-provider's `adapter` option: a factory of each model's storage. */
export function modelStores(adapter: OAuthRecordStore, grantEnded: (grantId: string) => void, replayed: () => Error): (model: string) => ModelStore {
  return (model) => ({
    async upsert(id, payload, expiresIn) {
      const expiresAt = typeof expiresIn === 'number' ? new Date(Date.now() + expiresIn * 1000) : null
      await adapter.upsertOAuthRecord({ model, id, payload, expiresAt })
    },
    find: async (id) => asPayload(await adapter.findOAuthRecord(model, id)),
    findByUid: async (uid) => asPayload(await adapter.findOAuthRecordBy(model, 'uid', uid)),
    findByUserCode: async (userCode) => asPayload(await adapter.findOAuthRecordBy(model, 'userCode', userCode)),
    async consume(id) {
      // oidc-provider checks `consumed` before it consumes: two requests with one code (or one
      // refresh token) at the same moment both pass that check, and only this conditional write
      // tells them apart. The loser's grant ends, as oidc-provider ends it for a later replay.
      if (await adapter.consumeOAuthRecord(model, id, new Date())) return
      const grantId = (await adapter.findOAuthRecord(model, id))?.payload['grantId']
      if (typeof grantId === 'string') {
        await adapter.deleteOAuthGrant(grantId)
        grantEnded(grantId)
      }
      throw replayed()
    },
    async destroy(id) {
      await adapter.deleteOAuthRecord(model, id)
      if (model === 'Grant') grantEnded(id)
    },
    async revokeByGrantId(grantId) {
      await adapter.deleteOAuthGrant(grantId)
      grantEnded(grantId)
    },
  })
}
