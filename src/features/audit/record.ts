/**
 * An emitted event as an audit row: which events are security events, and what of each is kept.
 * Built field by field from what each event names, never by copying the message (an account holds
 * the provider's tokens, a JWT whatever the app sealed in it), and the request's client details
 * read at once, while the request that emitted the event is still the current one.
 */
import { randomUUID } from 'node:crypto'
import { requestLogFields } from '../../http/log-fields.js'
import { currentRequest } from '../../http/request-scope.js'
import { clientDetails } from '../../session/revocation.js'
import type { EventFields, EventName } from '../../types.js'
import type { AuditEvent, AuditEventType } from './types.js'

/** What an event's message may hold that a row keeps (only identifiers and plain facts). */
interface Message {
  user?: { id?: unknown } | null
  userId?: unknown
  account?: { provider?: unknown; type?: unknown } | null
  token?: { sub?: unknown; act?: { sub?: unknown } | null } | null
  session?: { userId?: unknown; impersonatedBy?: unknown } | null
  impersonatedBy?: unknown
  sessionId?: unknown
  by?: unknown
  error?: unknown
  code?: unknown
  passkey?: { id?: unknown } | null
  keyId?: unknown
  rotatedFrom?: unknown
  isNewUser?: unknown
  remaining?: unknown
  deleteAt?: unknown
  expiresAt?: unknown
  roles?: unknown
  previous?: unknown
}

type Part = Pick<AuditEvent, 'type'> & Partial<Pick<AuditEvent, 'outcome' | 'target' | 'method' | 'reason'>> & { details?: Record<string, string | number | boolean> | undefined }

const string = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null)

/** The security events, and what each row says beyond its user and request. */
const PARTS: Partial<Record<EventName, (message: Message, fields: EventFields) => Part | undefined>> = {
  signIn: (m, f) => ({ type: 'sign-in', method: f.provider ?? null, details: typeof m.isNewUser === 'boolean' ? { isNewUser: m.isNewUser } : undefined }),
  signInFailed: (m) => ({ type: 'sign-in', outcome: 'failure', reason: [string(m.error), string(m.code)].filter(Boolean).join(':') || null }),
  signOut: () => ({ type: 'sign-out' }),
  sessionRevoked: (m) => ({ type: 'session-revoked', target: string(m.sessionId), reason: string(m.by) }),
  createUser: () => ({ type: 'user-created' }),
  emailVerified: () => ({ type: 'email-verified' }),
  emailChanged: () => ({ type: 'email-changed' }),
  passwordChanged: (m) => ({ type: m.by === 'reset' ? 'password-reset' : 'password-changed' }),
  twoFactorEnabled: () => ({ type: 'two-factor-enabled' }),
  twoFactorDisabled: () => ({ type: 'two-factor-disabled' }),
  twoFactorReset: () => ({ type: 'two-factor-reset' }),
  recoveryCodeUsed: (m) => ({ type: 'recovery-code-used', details: typeof m.remaining === 'number' ? { remaining: m.remaining } : undefined }),
  recoveryCodesRegenerated: () => ({ type: 'recovery-codes-regenerated' }),
  passkeyAdded: (m) => ({ type: 'passkey-added', target: string(m.passkey?.id) }),
  passkeyRemoved: (m) => ({ type: 'passkey-removed', target: string(m.passkey?.id) }),
  linkAccount: (_m, f) => ({ type: 'account-linked', method: f.provider ?? null }),
  accountUnlinked: (_m, f) => ({ type: 'account-unlinked', method: f.provider ?? null }),
  apiKeyCreated: (m) => ({ type: 'api-key-created', target: string(m.keyId), details: string(m.rotatedFrom) ? { rotatedFrom: string(m.rotatedFrom)! } : undefined }),
  apiKeyRevoked: (m) => ({ type: 'api-key-revoked', target: string(m.keyId) }),
  userDeletionScheduled: (m) => ({ type: 'user-deletion-scheduled', details: m.deleteAt instanceof Date ? { deleteAt: m.deleteAt.toISOString() } : undefined }),
  userRestored: () => ({ type: 'user-restored' }),
  userDeleted: () => ({ type: 'user-deleted' }),
  userBanned: (m) => ({ type: 'user-banned', details: m.expiresAt instanceof Date ? { expiresAt: m.expiresAt.toISOString() } : undefined }),
  userUnbanned: () => ({ type: 'user-unbanned' }),
  impersonationStarted: (m) => ({ type: 'impersonation-started', details: m.expiresAt instanceof Date ? { expiresAt: m.expiresAt.toISOString() } : undefined }),
  impersonationStopped: () => ({ type: 'impersonation-stopped' }),
  roleChanged: (m) => ({ type: 'role-changed', details: { roles: roleList(m.roles), previous: roleList(m.previous) } }),
}

/** Role names as one detail (`admin,editor`; empty: the default roles). */
const roleList = (value: unknown): string => (Array.isArray(value) ? value.filter((role): role is string => typeof role === 'string').join(',') : '')

/**
 * The row of event `name`, or undefined when it is no security event (`updateUser`, `session`).
 * A user's deletion is kept with no user: deleteUser clears the user's other rows the same way.
 */
export function auditRecord(name: EventName, message: unknown, fields: EventFields, now: Date): AuditEvent | undefined {
  const part = PARTS[name]?.(message as Message, fields)
  if (!part) return undefined
  const { ipAddress, userAgent } = clientDetails(currentRequest()?.req)
  // The request's id, the provider of its auth route, and its signed-in user, as log lines carry them.
  const request = requestLogFields()
  // Who did it: during an impersonation, the administrator (named by the event, or by the request's
  // session as auth() set req.auth); else the request's signed-in user when not the user it is about.
  const m = (message ?? {}) as Message
  const impersonator = string(m.impersonatedBy) ?? string(m.session?.impersonatedBy) ?? string(m.token?.act?.sub) ?? request?.impersonatedBy
  const caller = impersonator ?? request?.userId
  const userId = part.type === 'user-deleted' ? null : (fields.userId ?? null)
  const details = part.details && Object.keys(part.details).length > 0 ? part.details : null
  return {
    id: randomUUID(),
    at: now,
    type: part.type as AuditEventType,
    outcome: part.outcome ?? 'success',
    userId,
    actorId: caller !== undefined && caller !== userId && part.type !== 'user-deleted' ? caller : null,
    target: part.target ?? null,
    method: part.method ?? request?.provider ?? null,
    reason: part.reason ?? null,
    ipAddress,
    userAgent,
    requestId: request?.requestId ?? null,
    details,
  }
}
