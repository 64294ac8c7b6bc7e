/**
 * A user's recent audit events for their admin page, through the audit wing's `listAuditEvents`
 * (imported on the first call: the wing is on), which asks the caller's `audit: ['read']` itself.
 */
import type { Api } from '../../../api/context.js'
import { AuditError } from '../../audit/errors.js'
import type { AdminCallContext } from '../api/context.js'
import type { AdminAuditLine } from '../pages/user.js'

/** How many events the page shows. */
const SHOWN = 20

/** The user's last events, or why the page cannot show them (the caller may not read others' events). */
export async function userAudit(api: Api, call: AdminCallContext, userId: string): Promise<{ events: AdminAuditLine[] } | { unavailable: string }> {
  const { createListAuditEvents } = await import('../../audit/api/list-audit-events.js')
  try {
    const events = await createListAuditEvents(api)(call, { userId, limit: SHOWN })
    return { events: events.map(({ at, type, outcome, method, reason, actorId, ipAddress }) => ({ at, type, outcome, method, reason, actorId, ipAddress })) }
  } catch (error) {
    if (error instanceof AuditError && error.code === 'forbidden') {
      return { unavailable: "Reading a user's events needs the audit: ['read'] permission, which your roles do not grant." }
    }
    throw error
  }
}
