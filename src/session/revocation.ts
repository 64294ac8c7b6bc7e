/**
 * JWT sessions with a store (`session.store`): each token carries a session id (`sid`) whose record
 * the store keeps while the session stands. Signing out, `revokeSession()` and the like delete the
 * record, so a copy of the cookie taken before stops working everywhere.
 *
 * A read asks the store at most once per `revocationCacheSeconds` per session and process: a
 * session ended on one process is refused by the others within that time, and a steady stream of
 * requests costs one Map lookup each. While the store cannot be reached, a session this process
 * confirmed within `storeOutageSeconds` is still let in (an outage signs nobody out); any other
 * read fails with the store's AdapterError, its cookie kept.
 *
 * Tokens without a session id (sealed before the store was configured, or by Auth.js) are given
 * one on their next read; until then they stand unless the user's "valid after" time
 * (`signOutEverywhere()`) is later than their `iat`.
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { ResolvedConfig } from '../config/types.js'
import type { JWT } from '../types.js'
import type { SessionState, SessionStore } from './store/types.js'

/** The claim that carries the session id. */
export const SESSION_ID_CLAIM = 'sid'

interface Check {
  stands: boolean
  checkedAt: number
  /** When the store last said the session stands (0: never). */
  confirmedAt: number
}

const MAX_CHECKS = 10_000
const checks = new WeakMap<ResolvedConfig, Map<string, Check>>()

function checksOf(config: ResolvedConfig): Map<string, Check> {
  let map = checks.get(config)
  if (!map) checks.set(config, (map = new Map()))
  return map
}

/** A new session id: 128 random bits, base64url. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url')
}

/** The token's session id, if it carries one. */
export function sessionIdOf(token: JWT): string | undefined {
  const sid = token[SESSION_ID_CLAIM]
  return typeof sid === 'string' && sid.length > 0 && sid.length <= 64 ? sid : undefined
}

/**
 * Whether the session of `token` still stands, per the store (or this process's recent answer).
 * @param nowMs Milliseconds since the epoch.
 * @throws AdapterError when the store cannot be reached and no recent confirmation covers the session.
 */
export function sessionStands(config: ResolvedConfig, store: SessionStore, token: JWT, nowMs: number): boolean | Promise<boolean> {
  const userId = typeof token.sub === 'string' ? token.sub : ''
  const sid = sessionIdOf(token)
  const key = sid ?? `~${userId}`
  const map = checksOf(config)
  const known = map.get(key)
  // Answered without an await when the recent answer holds: the common case costs a Map lookup.
  if (known !== undefined && nowMs - known.checkedAt < config.session.revocationCacheMs) return known.stands
  return askStore(config, store, map, key, known, token, sid, userId, nowMs)
}

async function askStore(config: ResolvedConfig, store: SessionStore, map: Map<string, Check>, key: string, known: Check | undefined, token: JWT, sid: string | undefined, userId: string, nowMs: number): Promise<boolean> {
  let stands: boolean
  try {
    const state = await batchedState(store, sid, userId)
    const issuedAt = typeof token.iat === 'number' ? token.iat * 1000 : 0
    stands = sid !== undefined ? state.session !== null && state.session.expires > nowMs : issuedAt >= state.validAfter
  } catch (error) {
    if (known?.confirmedAt && nowMs - known.confirmedAt < config.session.storeOutageMs) return true
    throw error
  }
  map.delete(key)
  map.set(key, { stands, checkedAt: nowMs, confirmedAt: stands ? nowMs : 0 })
  if (map.size > MAX_CHECKS) map.delete(map.keys().next().value!)
  return stands
}

interface Asked {
  readonly id: string | undefined
  readonly userId: string
  resolve(state: SessionState): void
  reject(error: unknown): void
}

const batches = new WeakMap<SessionStore, Asked[]>()

/**
 * The store's answer for one session, asked together with every other check of the same moment:
 * after a quiet spell the checks of many sessions expire together, and a burst of requests then
 * costs one store round trip per event-loop turn instead of one per session.
 */
function batchedState(store: SessionStore, id: string | undefined, userId: string): Promise<SessionState> {
  return new Promise((resolve, reject) => {
    let batch = batches.get(store)
    if (!batch) {
      batches.set(store, (batch = []))
      setImmediate(() => {
        batches.delete(store)
        store.sessionStates(batch!).then(
          (states) => batch!.forEach((asked, i) => asked.resolve(states[i]!)),
          (error: unknown) => batch!.forEach((asked) => asked.reject(error)),
        )
      })
    }
    batch.push({ id, userId, resolve, reject })
  })
}

/** Forgets this process's answers for these sessions (after ending them here), so the next read asks the store. */
export function forgetChecks(config: ResolvedConfig, sessionIds: readonly string[], userId?: string): void {
  const map = checksOf(config)
  for (const id of sessionIds) map.delete(id)
  if (userId !== undefined) map.delete(`~${userId}`)
}

/** What a user recognises a device by, from the request that signs in. */
export function clientDetails(req: IncomingMessage | undefined): { ipAddress: string | null; userAgent: string | null } {
  if (!req) return { ipAddress: null, userAgent: null }
  // Express's req.ip follows the app's `trust proxy`; elsewhere the socket's peer.
  const expressIp = (req as { ip?: unknown }).ip
  const ip = typeof expressIp === 'string' && expressIp ? expressIp : req.socket?.remoteAddress
  const agent = req.headers['user-agent']
  return {
    ipAddress: typeof ip === 'string' && ip ? ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '').slice(0, 64) : null,
    userAgent: typeof agent === 'string' && agent ? agent.slice(0, 512) : null,
  }
}
