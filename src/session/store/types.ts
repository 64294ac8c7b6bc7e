/**
 * The session store (`session.store`): what JWT sessions need to be listed and ended, and what
 * several processes must share (the refresh lease and the memory of used refresh tokens). Three
 * implementations: memory.ts (one process), redis.ts and knex.ts (shared).
 */

/** A JWT session as the store keeps it: what a user recognises a device by. Times in ms since the epoch. */
export interface StoredSession {
  /** The token's `sid` claim. Not a secret: it cannot sign anyone in. */
  readonly id: string
  readonly userId: string
  readonly createdAt: number
  readonly lastSeenAt: number
  readonly expires: number
  readonly ipAddress: string | null
  readonly userAgent: string | null
}

/** Which of a user's sessions to delete: one, every one but one, or all. */
export type SessionSelection = { readonly only: string } | { readonly except?: string | undefined }

/**
 * What ended since a cursor: the sessions deleted and the users given a new "valid after" time.
 * Polled by every process at most once per `revocationCacheSeconds` (one round trip for all of its
 * sessions), so a process drops what it knew of exactly those and asks the store again.
 */
export interface StoreChanges {
  /** Where the next poll starts. */
  readonly cursor: string
  readonly sessionIds: readonly string[]
  readonly userIds: readonly string[]
}

/**
 * How long the stores keep a change: a process that has not polled for half of it forgets what it
 * knew and asks afresh.
 */
export const CHANGES_RETENTION_MS = 10 * 60 * 1000

/** What a read needs to know of a token, in one round trip. */
export interface SessionState {
  /** The session's record, when it still exists (`null`: revoked, signed out or expired). */
  readonly session: StoredSession | null
  /** The user's tokens issued before this time (ms) are refused, for tokens without a session id. 0 when none. */
  readonly validAfter: number
}

export interface SessionStore {
  /** For log lines: `memory`, `Redis`, `PostgreSQL`, … */
  readonly label: string
  /**
   * Stores a new session's record.
   * @param tokenIssuedAt For a token without session id being given one: its `iat` (ms). Nothing is
   *   kept, and the answer is false, when the user's "valid after" time is later, checked by the store
   *   itself rather than a process's cached answer, so a sign-out everywhere on another process (or one
   *   running meanwhile on this one) is never undone by a record it could not see.
   * @returns false when `tokenIssuedAt` was refused; true when the record is stored.
   */
  createSession(session: StoredSession, tokenIssuedAt?: number): Promise<boolean>
  /**
   * Moves a session's `lastSeenAt` and `expires` (at the `updateAge` re-issue).
   * @returns false when the session no longer exists (it was ended meanwhile): it is not brought back.
   */
  touchSession(id: string, userId: string, lastSeenAt: number, expires: number): Promise<boolean>
  /**
   * For each asked session, its record (when `id` is given) and the user's `validAfter`, in the order
   * asked and in one round trip (the reads of one moment are checked together).
   */
  sessionStates(asked: ReadonlyArray<{ readonly id: string | undefined; readonly userId: string }>): Promise<SessionState[]>
  /** The user's unexpired sessions, in one round trip. */
  listSessions(userId: string, now: number): Promise<StoredSession[]>
  /** Deletes the user's sessions in `which` (never another user's) and records the change; returns the ids deleted. */
  deleteSessions(userId: string, which: SessionSelection): Promise<string[]>
  /** Refuses the user's tokens without a session id issued before `at` (ms), remembered for `ttlMs`, and records the change. */
  setValidAfter(userId: string, at: number, ttlMs: number): Promise<void>
  /**
   * The changes recorded after `cursor`, in one round trip; with no cursor, none, only where the
   * next poll starts. A change may be given twice (the Knex store's polls overlap); never missed
   * while polls come within `CHANGES_RETENTION_MS`.
   */
  changesSince(cursor: string | undefined): Promise<StoreChanges>
  /** Sets `key` to `value` only when it is not set (a lease); true when this call set it. */
  claim(key: string, value: string, ttlMs: number): Promise<boolean>
  /** The unexpired value of `key`, or null. */
  get(key: string): Promise<string | null>
  /** Sets `key` to `value` for `ttlMs`. */
  put(key: string, value: string, ttlMs: number): Promise<void>
  /** Deletes `key`. */
  remove(key: string): Promise<void>
  /**
   * Sets the store up on first use (the Knex store creates its table), awaited before each call
   * under a limit of its own: a table and its indexes can take seconds to create, longer than a
   * call's timeout.
   */
  prepare?(): Promise<void>
}
