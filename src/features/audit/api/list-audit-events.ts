/** The server-side `listAuditEvents(req, filter)`: the signed-in user's security events. */
import { actionContext, givenRequest, type Api } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import { signedInUserId } from '../../../session/strategy.js'
import { auditAdapter } from './export-audit-events.js'
import { AuditError } from '../errors.js'
import type { AuditEvent, AuditEventFilter } from '../types.js'

/**
 * The signed-in user's audit events matching `filter`, newest first (at most `limit`, default 100;
 * the next page: `before` the last one's `at`). `filter.userId` may only be the caller's own.
 *
 * @throws AuditError `not_signed_in`, `forbidden` (another user's id); UnknownActionError (`audit` off)
 * @example
 * ```ts
 * app.get('/account/activity', async (req, res) => res.json(await listAuditEvents(req, { type: 'sign-in', since: new Date(Date.now() - 30 * 86_400_000) })))
 * ```
 */
export type ListAuditEventsFunction = (req: SessionsCallContext, filter?: AuditEventFilter) => Promise<AuditEvent[]>

export function createListAuditEvents(api: Api): ListAuditEventsFunction {
  return async (given, filter = {}) => {
    const { req } = givenRequest(given, 'listAuditEvents()')
    const adapter = auditAdapter(api.config, 'listAuditEvents()')
    const userId = await signedInUserId(actionContext(api, req))
    if (!userId) throw new AuditError('not_signed_in', 'listAuditEvents(): nobody is signed in on this request.')
    if (filter.userId !== undefined && filter.userId !== userId) {
      throw new AuditError('forbidden', "listAuditEvents(): a user reads only their own events; read another user's with exportAuditEvents() in your own admin code.")
    }
    return adapter.listAuditEvents({ ...filter, userId })
  }
}
