/**
 * The audit wing's option and record, and what it adds to the shared types: the adapter's three
 * audit methods and the `audit` option (TypeScript declaration merging; `src/index.ts` re-exports
 * this module).
 */

/**
 * The `audit` option: `true`, or how long events are kept. The log stores the security events in
 * the audit migration's table, after each response (never in its way: a failed write is logged).
 */
export interface AuditOptions {
  /** Days an event is kept; the background prune (`prune` option) deletes older ones. Default 90. */
  retentionDays?: number | undefined
}

/** What an audit event records: a sign-in, an ended session, a changed password, … */
export type AuditEventType =
  | 'sign-in'
  | 'sign-out'
  | 'session-revoked'
  | 'user-created'
  | 'email-verified'
  | 'email-changed'
  | 'password-changed'
  | 'password-reset'
  | 'two-factor-enabled'
  | 'two-factor-disabled'
  | 'two-factor-reset'
  | 'recovery-code-used'
  | 'recovery-codes-regenerated'
  | 'passkey-added'
  | 'passkey-removed'
  | 'account-linked'
  | 'account-unlinked'
  | 'api-key-created'
  | 'api-key-revoked'
  | 'user-deletion-scheduled'
  | 'user-restored'
  | 'user-deleted'
  | 'role-changed'
  | 'user-banned'
  | 'user-unbanned'
  | 'impersonation-started'
  | 'impersonation-stopped'

/** One stored security event. Never a token, secret, password or provider profile. */
export interface AuditEvent {
  id: string
  at: Date
  type: AuditEventType
  outcome: 'success' | 'failure'
  /** Whose account it is about; null for a refused sign-in (nobody proved who they were) and once the user is deleted. */
  userId: string | null
  /** Who did it when not the user themselves (the request's signed-in user: an administrator; during an impersonation, the impersonating administrator), else null. */
  actorId: string | null
  /** What it acted on: the session's, passkey's or API key's id, the provider account's provider. */
  target: string | null
  /** The sign-in method or provider id (`password`, `github`, `email`, …). */
  method: string | null
  /** A refusal's error type and code (`CredentialsSignin:credentials`), or what ended a session (`signOutEverywhere`). */
  reason: string | null
  /** The client's address, as the rate limits read it (`req.ip` behind a trusted proxy). */
  ipAddress: string | null
  userAgent: string | null
  /** `req.id` or the `x-request-id` header, as log lines carry it. */
  requestId: string | null
  /** A few plain facts (`isNewUser`, `remaining` recovery codes, `deleteAt`), or null. */
  details: Readonly<Record<string, string | number | boolean>> | null
}

/** What `listAuditEvents` filters by, newest first. */
export interface AuditEventFilter {
  userId?: string | undefined
  type?: AuditEventType | readonly AuditEventType[] | undefined
  /** Events at or after this instant. */
  since?: Date | undefined
  /** Events before this instant (the next page: the last event's `at`). */
  before?: Date | undefined
  /** At most this many (default 100, at most 1,000). */
  limit?: number | undefined
}

declare module '../../types.js' {
  interface Adapter {
    /** Stores audit events (one statement for many). Run after the response by the `audit` option. */
    writeAuditEvents?(events: readonly AuditEvent[]): Promise<void>
    /** Audit events matching `filter`, newest first. */
    listAuditEvents?(filter: AuditEventFilter): Promise<AuditEvent[]>
    /** Deletes the events before `before`, in batches; how many. */
    pruneAuditEvents?(before: Date, options?: { signal?: AbortSignal | undefined }): Promise<number>
  }
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /** Off by default. Keeps security events in a table: see `AuditOptions` and docs/audit.md. */
    audit?: boolean | AuditOptions | undefined
  }
}
