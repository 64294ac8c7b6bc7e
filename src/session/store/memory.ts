/**
 * `session.store: 'memory'`: the store in this process, per Portcullis instance. JWT sessions can
 * be listed and ended on a single process; several processes each see only their own.
 */
import { CHANGES_RETENTION_MS, type SessionSelection, type SessionStore, type StoredSession } from './types.js'

const SWEEP_AT = 10_000

// Long: a store is an object of eleven short methods closing over its maps; each is read on its own.
export function memoryStore(): SessionStore {
  const sessions = new Map<string, StoredSession>()
  const byUser = new Map<string, Set<string>>()
  const values = new Map<string, { value: string; until: number }>()
  const validAfter = new Map<string, { at: number; until: number }>()
  // What ended, oldest first: the number of the change, a session or a user, and when.
  const changes: Array<{ seq: number; sessionId?: string; userId?: string; at: number }> = []
  let seq = 0
  const record = (change: { sessionId: string } | { userId: string }): void => {
    const now = Date.now()
    changes.push({ ...change, seq: ++seq, at: now })
    // Never past the change just pushed: it is not that old.
    while (changes[0]!.at <= now - CHANGES_RETENTION_MS) changes.shift()
  }

  const live = (id: string, now = Date.now()): StoredSession | null => {
    const session = sessions.get(id)
    if (!session) return null
    if (session.expires > now) return session
    forget(session)
    return null
  }
  const forget = (session: StoredSession): void => {
    sessions.delete(session.id)
    const ids = byUser.get(session.userId)
    ids?.delete(session.id)
    if (ids?.size === 0) byUser.delete(session.userId)
  }
  // Leases and used refresh tokens expire unread: past this many, a write sweeps the expired ones.
  const sweep = (): void => {
    if (values.size < SWEEP_AT) return
    const now = Date.now()
    for (const [key, entry] of values) if (entry.until <= now) values.delete(key)
  }
  const value = (key: string): string | null => {
    const entry = values.get(key)
    if (!entry) return null
    if (entry.until > Date.now()) return entry.value
    values.delete(key)
    return null
  }

  return {
    label: 'memory',
    async createSession(session, tokenIssuedAt) {
      // One process, no await between the check and the write: nothing can come between them.
      if (tokenIssuedAt !== undefined) {
        const after = validAfter.get(session.userId)
        if (after && after.until > Date.now() && after.at > tokenIssuedAt) return false
      }
      sessions.set(session.id, session)
      const ids = byUser.get(session.userId) ?? new Set<string>()
      byUser.set(session.userId, ids.add(session.id))
      return true
    },
    async touchSession(id, userId, lastSeenAt, expires) {
      const session = live(id)
      if (!session || session.userId !== userId) return false
      sessions.set(id, { ...session, lastSeenAt, expires })
      return true
    },
    async sessionStates(asked) {
      return asked.map(({ id, userId }) => {
        const session = id === undefined ? null : live(id)
        const after = validAfter.get(userId)
        return { session: session?.userId === userId ? session : null, validAfter: after && after.until > Date.now() ? after.at : 0 }
      })
    },
    async listSessions(userId, now) {
      return [...(byUser.get(userId) ?? [])].map((id) => live(id, now)).filter((session): session is StoredSession => session !== null)
    },
    async deleteSessions(userId, which: SessionSelection) {
      const deleted: string[] = []
      for (const id of [...(byUser.get(userId) ?? [])]) {
        if ('only' in which ? id !== which.only : id === which.except) continue
        forget(sessions.get(id)!)
        deleted.push(id)
        record({ sessionId: id })
      }
      return deleted
    },
    async setValidAfter(userId, at, ttlMs) {
      validAfter.set(userId, { at, until: Date.now() + ttlMs })
      record({ userId })
    },
    async changesSince(cursor) {
      const after = cursor === undefined ? seq : Number(cursor)
      const since = changes.filter((change) => change.seq > after)
      return {
        cursor: String(seq),
        sessionIds: since.flatMap((change) => (change.sessionId === undefined ? [] : [change.sessionId])),
        userIds: since.flatMap((change) => (change.userId === undefined ? [] : [change.userId])),
      }
    },
    async claim(key, claimed, ttlMs) {
      if (value(key) !== null) return false
      sweep()
      values.set(key, { value: claimed, until: Date.now() + ttlMs })
      return true
    },
    async get(key) {
      return value(key)
    },
    async put(key, stored, ttlMs) {
      sweep()
      values.set(key, { value: stored, until: Date.now() + ttlMs })
    },
    async remove(key) {
      values.delete(key)
    },
  }
}
