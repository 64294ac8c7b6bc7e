/**
 * JWT sessions with a store (`session.store`): each token carries a session id (`sid`) whose record
 * the store keeps while the session stands. Signing out, `revokeSession()` and the like delete the
 * record, so a copy of the cookie taken before stops working everywhere.
 *
 * A process asks the store about a session once, when it first sees it, and then learns what ended
 * from the store's list of changes, polled at most once per `revocationCacheSeconds` for all of its
 * sessions together: a session ended on one process is refused by the others within that time, a
 * steady stream of requests costs one Map lookup each, and the store sees one query per process
 * per `revocationCacheSeconds` however many users are active. While the store cannot be reached, a
 * session this process knew to stand at its last poll is still let in for `storeOutageSeconds` (an
 * outage signs nobody out); any other read fails with the store's AdapterError, its cookie kept.
 *
 * Tokens without a session id (sealed before the store was configured, or by Auth.js) are given
 * one on their next read; until then they stand unless the user's "valid after" time
 * (`signOutEverywhere()`, a password reset or change) is later than their `iat`. The answer here
 * may be up to `revocationCacheSeconds` old, so the store checks that time again itself as it
 * records the new session id (`createSession`'s `tokenIssuedAt`).
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { ResolvedConfig } from '../config/types.js'
import type { JWT } from '../types.js'
import { CHANGES_RETENTION_MS, type SessionState, type SessionStore } from './store/types.js'

/** The claim that carries the session id. */
export const SESSION_ID_CLAIM = 'sid'

interface Check {
  readonly stands: boolean
  readonly userId: string
}

interface Checks {
  /** Session id (or `~<iat ms>~<userId>` for a token without one) → what the store said. */
  readonly known: Map<string, Check>
  /** When the last successful poll started (ms; 0: never), and where the next one starts. */
  polledAt: number
  cursor: string | undefined
  /** The poll under way, shared by every read that waits for it. */
  polling: Promise<void> | undefined
  /** Moves whenever answers are dropped, so that an answer asked before that is not kept. */
  generation: number
  /** The last failed poll: during an outage the store is asked again at most once per RETRY_MS. */
  failure: { at: number; error: unknown } | undefined
}

const RETRY_MS = 1000
/** Sessions a process keeps answers for (about 100 bytes each); past it the oldest are asked again. */
const MAX_CHECKS = 50_000
const checks = new WeakMap<ResolvedConfig, Checks>()

function checksOf(config: ResolvedConfig): Checks {
  let state = checks.get(config)
  if (!state) checks.set(config, (state = { known: new Map(), polledAt: 0, cursor: undefined, polling: undefined, generation: 0, failure: undefined }))
  return state
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
 * Whether the session of `token` still stands, per the store (or what this process knows of it).
 * @param nowMs Milliseconds since the epoch.
 * @throws AdapterError when the store cannot be reached and no recent answer covers the session.
 */
export function sessionStands(config: ResolvedConfig, store: SessionStore, token: JWT, nowMs: number): boolean | Promise<boolean> {
  const state = checksOf(config)
  const userId = typeof token.sub === 'string' ? token.sub : ''
  const sid = sessionIdOf(token)
  // A token without session id is judged by its issue time: each copy of the user's has its own answer.
  const key = sid ?? `~${issuedAtOf(token)}~${userId}`
  // Answered without an await while the last poll is recent: the common case costs a Map lookup.
  if (nowMs - state.polledAt < config.session.revocationCacheMs) {
    const known = state.known.get(key)
    if (known !== undefined) return known.stands
  }
  return checkAfterPoll(config, store, state, key, token, sid, userId, nowMs)
}

/** Starts a poll that no read waits for, unless one is under way or the store failed within RETRY_MS. */
function pollBeside(store: SessionStore, state: Checks, nowMs: number): void {
  if (state.polling || (state.failure && nowMs - state.failure.at < RETRY_MS)) return
  // Its failure is kept in state.failure for the reads after it.
  ;(state.polling = poll(store, state, nowMs)).catch(() => {})
}

async function checkAfterPoll(config: ResolvedConfig, store: SessionStore, state: Checks, key: string, token: JWT, sid: string | undefined, userId: string, nowMs: number): Promise<boolean> {
  if (nowMs - state.polledAt >= config.session.revocationCacheMs) {
    const known = state.known.get(key)
    // An ended session stays ended: nothing the poll could say brings it back.
    if (known?.stands === false) return false
    const down = state.failure !== undefined && nowMs - state.failure.at < RETRY_MS
    if (known === undefined) {
      // Its own read below answers it, whatever the changes: the poll runs beside it. While the store
      // is known to be down, it fails at once instead of waiting for the read's timeout.
      if (down) throw state.failure!.error
      pollBeside(store, state, nowMs)
    } else if (state.failure !== undefined && nowMs - state.polledAt < config.session.storeOutageMs) {
      // During an outage a session known to stand is let in without waiting: the store is tried again beside it.
      pollBeside(store, state, nowMs)
      return true
    } else {
      try {
        if (down) throw state.failure!.error
        await (state.polling ??= poll(store, state, nowMs))
      } catch (error) {
        if (state.known.get(key)?.stands && nowMs - state.polledAt < config.session.storeOutageMs) return true
        throw error
      }
    }
  }
  const known = state.known.get(key)
  if (known !== undefined) return known.stands
  const generation = state.generation
  const answer = await batchedState(store, sid, userId)
  const stands = sid !== undefined ? answer.session !== null && answer.session.expires > nowMs : issuedAtOf(token) >= answer.validAfter
  // Answers dropped meanwhile (by a poll, also one running beside this read) may include a change to
  // this one: it is not kept, and asked again next time.
  if (generation === state.generation) {
    state.known.set(key, { stands, userId })
    if (state.known.size > MAX_CHECKS) state.known.delete(state.known.keys().next().value!)
  }
  return stands
}

/** When the token was issued (ms; 0 when it does not say). */
function issuedAtOf(token: JWT): number {
  return typeof token.iat === 'number' ? token.iat * 1000 : 0
}

/** Reads the store's changes since the last poll and drops what this process knew of the sessions and users they name. */
async function poll(store: SessionStore, state: Checks, startedAt: number): Promise<void> {
  try {
    // Changes are kept for CHANGES_RETENTION_MS: after a longer silence some may be gone, so forget everything.
    if (state.polledAt !== 0 && startedAt - state.polledAt > CHANGES_RETENTION_MS / 2) {
      state.generation++
      state.known.clear()
      state.cursor = undefined
    }
    const changes = await store.changesSince(state.cursor)
    if (changes.sessionIds.length > 0 || changes.userIds.length > 0) {
      state.generation++
      for (const id of changes.sessionIds) state.known.delete(id)
      if (changes.userIds.length > 0) {
        const users = new Set(changes.userIds)
        for (const [key, check] of state.known) if (users.has(check.userId)) state.known.delete(key)
      }
    }
    state.cursor = changes.cursor
    state.polledAt = startedAt
    state.failure = undefined
  } catch (error) {
    state.failure = { at: startedAt, error }
    throw error
  } finally {
    state.polling = undefined
  }
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

/**
 * Forgets this process's answers for these sessions, or for all of the user's (after ending them
 * here), so the next read asks the store.
 */
export function forgetChecks(config: ResolvedConfig, sessionIds: readonly string[], userId?: string): void {
  const state = checksOf(config)
  state.generation++
  for (const id of sessionIds) state.known.delete(id)
  if (userId !== undefined) for (const [key, check] of state.known) if (check.userId === userId) state.known.delete(key)
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
