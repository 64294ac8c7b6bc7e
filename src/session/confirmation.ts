/**
 * When and how the user last proved who they are in a session: at sign-in, and again at a later
 * confirmation before a sensitive action (`requireRecentSignIn`, docs/account.md). The core keeps
 * this record because it lives where the session lives: in a JWT session's token (the `auth_time`
 * claim, OpenID Connect's name for it, and `auth_method`), in a database session's row (the ninth
 * migration's `confirmedAt`, `confirmedWith`). It is written at sign-in and by a confirmation, and
 * read only by a sensitive action: the session read neither computes nor selects anything new.
 */
import type { SessionAdapter } from '../config/adapter.js'
import type { JWT } from '../types.js'
import type { OutgoingCookie } from './cookies.js'
import { peekDatabaseSession } from './database-strategy.js'
import { peekJwtToken, resealJwtToken } from './jwt-strategy.js'
import { sessionStands } from './revocation.js'
import { AUTH_METHOD_CLAIM, AUTH_TIME_CLAIM, confirmationClaims, methodName } from './confirmation-claims.js'
import type { SessionRequest } from './types.js'

/** A session's record of its last confirmation. */
export interface SessionConfirmation {
  readonly userId: string
  /** Seconds since the epoch; 0 when the session carries no record (a token from before it). */
  readonly confirmedAt: number
  /** The provider id of the sign-in, or the confirmation's method; null when unknown. */
  readonly confirmedWith: string | null
}

/**
 * The request's session's record, without extending the session or running callbacks; null when
 * nobody is signed in (or, with a store, the session was ended).
 * @throws AdapterError when the database or the store fails.
 */
export async function readConfirmation(request: SessionRequest): Promise<SessionConfirmation | null> {
  const { config } = request
  if (config.session.strategy === 'database') {
    const session = await peekDatabaseSession(request)
    if (!session) return null
    const adapter = config.adapter as SessionAdapter
    // Without the method (an adapter of the app's own), the session counts as confirmed when created, if known.
    const record = adapter.getSessionConfirmation ? await adapter.getSessionConfirmation(session.sessionToken) : session
    const at = record?.confirmedAt ?? record?.createdAt ?? null
    return { userId: session.userId, confirmedAt: at ? Math.floor(at.getTime() / 1000) : 0, confirmedWith: record?.confirmedWith ?? null }
  }
  const token = await peekJwtToken(request)
  if (!token || typeof token.sub !== 'string' || !token.sub) return null
  const store = config.session.store
  if (store && !(await sessionStands(config, store, token, request.now * 1000))) return null
  const at = token[AUTH_TIME_CLAIM]
  const method = token[AUTH_METHOD_CLAIM]
  return { userId: token.sub, confirmedAt: typeof at === 'number' && Number.isFinite(at) ? at : 0, confirmedWith: typeof method === 'string' ? method : null }
}

/** Whether `confirmation` is at most `maxAge` seconds old (never one from the future: a clock moved back). */
export function isRecent(confirmation: SessionConfirmation, maxAge: number, now: number): boolean {
  return confirmation.confirmedAt > 0 && confirmation.confirmedAt <= now + 60 && now - confirmation.confirmedAt <= maxAge
}

/**
 * Records that the request's user confirmed who they are now, with `method`: the row's columns
 * (database), or the token re-sealed with the new claims (JWT; its session id kept).
 * @returns The cookies that carry the re-sealed token (none with database sessions).
 * @throws AdapterError when the row could not be written.
 */
export async function recordConfirmation(request: SessionRequest, method: string): Promise<OutgoingCookie[]> {
  const { config, now } = request
  if (config.session.strategy === 'database') {
    const session = await peekDatabaseSession(request)
    if (!session) return []
    await (config.adapter as SessionAdapter).updateSession({ sessionToken: session.sessionToken, confirmedAt: new Date(now * 1000), confirmedWith: methodName(method) })
    return []
  }
  const token = await peekJwtToken(request)
  if (!token) return []
  return resealJwtToken(request, { ...token, ...confirmationClaims(method, now) })
}
