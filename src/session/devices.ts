/**
 * The signed-in user's sessions, for `listSessions()`, `revokeSession()`, `revokeOtherSessions()`,
 * `signOutEverywhere()` and their routes: database sessions through the adapter (row ids), JWT
 * sessions through `session.store` (session ids). Every call is scoped to the request's own user,
 * so no id of another user's session can be listed or ended.
 */
import type { SessionAdapter } from '../config/adapter.js'
import { InvalidConfigurationError } from '../errors.js'
import { describeError, emitEvent } from '../events.js'
import { logValue } from '../logger.js'
import type { SessionInfo, SessionRevocationCauses } from '../types.js'
import { peekDatabaseSession } from './database-strategy.js'
import { isoDate } from './iso-date.js'
import type { OutgoingCookie } from './cookies.js'
import { giveSessionId, peekJwtToken } from './jwt-strategy.js'
import { forgetChecks, sessionIdOf, sessionStands } from './revocation.js'
import type { SessionStore } from './store/types.js'
import type { SessionRequest } from './types.js'

/** Whose session a request carries, and which one. */
export interface SessionOwner {
  userId: string
  /** The row id (database) or `sid` (JWT); undefined for a JWT session without one (no store). */
  sessionId: string | undefined
}

/** What ends sessions, named in the `sessionRevoked` event (the core's and the wings' causes). */
export type RevokedBy = keyof SessionRevocationCauses & string

/**
 * @throws InvalidConfigurationError when this instance cannot list or end sessions (JWT sessions
 *   without `session.store`), whoever asks: the app learns it on the first call, signed in or not.
 */
export function assertSessionsListable(config: SessionRequest['config']): void {
  if (config.session.strategy === 'jwt' && !config.session.store) jwtStore({ config } as SessionRequest)
}

/** The request's user and session, when it is signed in (and, with a store, the session still stands). */
export async function sessionOwner(request: SessionRequest): Promise<SessionOwner | null> {
  const { config } = request
  if (config.session.strategy === 'database') {
    const session = await peekDatabaseSession(request)
    return session ? { userId: session.userId, sessionId: session.id } : null
  }
  const token = await peekJwtToken(request)
  if (!token || typeof token.sub !== 'string' || !token.sub) return null
  const store = config.session.store
  if (store && !(await sessionStands(config, store, token, request.now * 1000))) return null
  return { userId: token.sub, sessionId: sessionIdOf(token) }
}

/**
 * The owner's unexpired sessions, newest first, the current one marked.
 * @throws InvalidConfigurationError when sessions cannot be listed (JWT without a store; an adapter without listSessionsByUserId).
 */
export async function listOwnSessions(request: SessionRequest, owner: SessionOwner): Promise<SessionInfo[]> {
  const nowMs = request.now * 1000
  const { config } = request
  let sessions: SessionInfo[]
  if (config.session.strategy === 'database') {
    const rows = await listingAdapter(config.adapter as SessionAdapter, 'listSessionsByUserId').listSessionsByUserId!(owner.userId)
    sessions = rows
      .filter((row) => row.expires.getTime() > nowMs && row.id !== undefined)
      .map((row) => ({
        id: row.id!,
        current: row.id === owner.sessionId,
        createdAt: row.createdAt ? isoDate(row.createdAt.getTime()) : null,
        lastSeenAt: row.lastSeenAt ? isoDate(row.lastSeenAt.getTime()) : null,
        expires: isoDate(row.expires.getTime()),
        ipAddress: row.ipAddress ?? null,
        userAgent: row.userAgent ?? null,
      }))
  } else {
    const stored = await jwtStore(request).listSessions(owner.userId, nowMs)
    sessions = stored.map((session) => ({
      id: session.id,
      current: session.id === owner.sessionId,
      createdAt: session.createdAt ? isoDate(session.createdAt) : null,
      lastSeenAt: session.lastSeenAt ? isoDate(session.lastSeenAt) : null,
      expires: isoDate(session.expires),
      ipAddress: session.ipAddress,
      userAgent: session.userAgent,
    }))
  }
  return sessions.sort((a, b) => Number(b.current) - Number(a.current) || (b.lastSeenAt ?? '').localeCompare(a.lastSeenAt ?? ''))
}

/**
 * Ends the owner's sessions in `which` and emits `sessionRevoked` for each. `everyToken` (signing out
 * everywhere, a change of the user's credentials) also refuses JWT sessions from before the session
 * store, which have no record to delete, by their age.
 * @returns The ids ended (none when `only` names no session of this user).
 */
export async function revokeOwnSessions(request: SessionRequest, owner: SessionOwner, which: { only: string } | { except?: string | undefined }, by: RevokedBy, { everyToken = false }: { everyToken?: boolean } = {}): Promise<string[]> {
  const { config } = request
  let ids: string[]
  if (config.session.strategy === 'database') {
    const deleted = await listingAdapter(config.adapter as SessionAdapter, 'deleteSessionsByUserId').deleteSessionsByUserId!(owner.userId, which)
    ids = deleted.map((session) => session.id ?? '')
  } else {
    const store = jwtStore(request)
    // A change ends every session but this one, so older tokens without a session id too (this one,
    // if it was one, was given an id first: ownerWithSessionId); so does a claimed account (claim.ts).
    if (everyToken) {
      // Tokens from before the store have no record: refuse them by their age. Set before the records
      // are deleted: a token without session id given one meanwhile is then either refused by the
      // store's createSession or recorded in time to be deleted below (see the Knex store).
      await store.setValidAfter(owner.userId, request.now * 1000 + 1000, config.jwt.maxAge * 1000)
    }
    ids = await store.deleteSessions(owner.userId, which)
    forgetChecks(config, ids, everyToken ? owner.userId : undefined)
  }
  for (const sessionId of ids) await emitEvent(config, 'sessionRevoked', { userId: owner.userId, sessionId, by })
  if (everyToken && !('only' in which) && which.except === undefined) await everySessionEnded(config, owner.userId)
  return ids
}

/** The features' `everySessionEnded` hooks (the authorization server's grants); errors logged, the sessions stay ended. */
async function everySessionEnded(config: SessionRequest['config'], userId: string): Promise<void> {
  for (const hook of config.everySessionEnded) {
    try {
      await hook(config, userId)
    } catch (error) {
      config.logger.error('EverySessionEndedHookFailed', `A feature's everySessionEnded hook failed for user ${logValue(userId)}: ${describeError(error)}`)
    }
  }
}

/**
 * The owner, its JWT session given a session id first when its token has none (see giveSessionId):
 * a call that refuses every older token without one (`changePassword()`) must keep this session.
 * @returns The owner (with the new id) and the cookies that carry the re-sealed token; the owner as
 *   given and no cookies when there is nothing to do (database sessions, no store, a session id already).
 */
export async function ownerWithSessionId(request: SessionRequest, owner: SessionOwner): Promise<{ owner: SessionOwner; cookies: OutgoingCookie[] }> {
  const store = request.config.session.store
  if (request.config.session.strategy !== 'jwt' || !store || owner.sessionId !== undefined) return { owner, cookies: [] }
  const token = await peekJwtToken(request)
  const given = token && token.sub === owner.userId ? await giveSessionId(request, store, token) : null
  return given ? { owner: { ...owner, sessionId: given.sessionId }, cookies: given.cookies } : { owner, cookies: [] }
}

function jwtStore(request: SessionRequest): SessionStore {
  const store = request.config.session.store
  if (!store) {
    throw new InvalidConfigurationError(
      'Listing and ending other sessions with JWT sessions needs session.store (Redis, a Knex table or "memory"): without it a JWT session lives only in its cookie. See docs/sessions.md.',
    )
  }
  return store
}

function listingAdapter(adapter: SessionAdapter, method: 'listSessionsByUserId' | 'deleteSessionsByUserId'): SessionAdapter {
  if (typeof adapter[method] !== 'function') {
    throw new InvalidConfigurationError(`Listing and ending sessions needs an adapter with ${method}(); KnexAdapter has it.`)
  }
  return adapter
}
