/**
 * The audit log (`audit` option): the security events (sign-ins and their refusals, sign-outs,
 * ended sessions, the password, the address, the second factor, passkeys, linked accounts, API keys,
 * deletions) stored in a table of their own, with who, from where and when. The wing observes the
 * core's events (`FeatureHooks.event`): a row is made at once, inside the request, and written after
 * the response (writer.ts); the prune deletes rows past `retentionDays`. Reading: the user their
 * own (`listAuditEvents`), the app's own code any (`exportAuditEvents`, JSON lines).
 */
import type { Feature } from '../../composition/index.js'
import type { ResolvedConfig } from '../../config/types.js'
import { createExportAuditEvents, type ExportAuditEventsFunction } from './api/export-audit-events.js'
import { createListAuditEvents, type ListAuditEventsFunction } from './api/list-audit-events.js'
import { AUDIT_ADAPTER_METHODS, assertAudit, auditOf, resolveAudit, type AuditAdapter } from './config.js'
import { auditRecord } from './record.js'
import { enqueueAuditEvent, forgetQueuedUser } from './writer.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface AuditApi {
  /** The signed-in user's audit events, newest first. */
  listAuditEvents: ListAuditEventsFunction
  /** Every audit event matching a filter as JSON lines, for the app's own admin code (no request, no check). */
  exportAuditEvents: ExportAuditEventsFunction
}

const DAY_MS = 86_400_000

export const auditFeature: Feature = {
  name: 'audit',
  // Its prune reuses the prune wing's batched delete; reading others' events asks the roles wing's check.
  requires: ['prune', 'roles'],
  resolve: (config, init) => resolveAudit(config.audit, init.adapter),
  check: assertAudit,
  hooks: {
    event: (config, name, message, fields) => {
      const row = auditRecord(name, message, fields, new Date())
      if (row) enqueueAuditEvent(config, row)
    },
    prune: async (config: ResolvedConfig, signal: AbortSignal) => {
      const cutoff = new Date(Date.now() - auditOf(config)!.retentionDays * DAY_MS)
      return { auditEvents: await (config.adapter as AuditAdapter).pruneAuditEvents(cutoff, { signal }) }
    },
    // deleteUser cleared the user's stored events; the ones still waiting lose the user here.
    userDeleted: async (config, user) => forgetQueuedUser(config, user.id),
  },
  api: (api): AuditApi => ({ listAuditEvents: createListAuditEvents(api), exportAuditEvents: createExportAuditEvents(api) }),
  adapterMethods: [...AUDIT_ADAPTER_METHODS],
  errors: ['Audit'],
}
