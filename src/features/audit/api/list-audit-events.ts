/** The server-side `listAuditEvents(req, filter)`: the signed-in user's security events, or with the permission, anyone's. */
import { actionContext, givenRequest, type Api } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'
import { signedInUserId } from '../../../session/strategy.js'
import { sessionGrants } from '../../roles/api/has-permission.js'
import { auditAdapter } from './export-audit-events.js'
import { AuditError } from '../errors.js'
import type { AuditEvent, AuditEventFilter } from '../types.js'

/**
 * The audit events matching `filter`, newest first (at most `limit`, default 100; the next page:
 * `before` the last one's `at`). A user reads their own (`userId` left out, or theirs); another
 * user's, or everyone's (`userId: null`), needs the `audit: ['read']` permission of the `roles` option.
 *
 * @throws AuditError `not_signed_in`, `forbidden` (another user's id without the permission); UnknownActionError (`audit` off)
 * @example
 * ```ts
 * app.get('/account/activity', async (req, res) => res.json(await listAuditEvents(req, { type: 'sign-in', since: new Date(Date.now() - 30 * 86_400_000) })))
 * ```
 */
export type ListAuditEventsFunction = (req: SessionsCallContext, filter?: Omit<AuditEventFilter, 'userId'> & { userId?: string | null | undefined }) => Promise<AuditEvent[]>

export function createListAuditEvents(api: Api): ListAuditEventsFunction {
  return async (given, filter = {}) => {
    const { req, res } = givenRequest(given, 'listAuditEvents()')
    const adapter = auditAdapter(api.config, 'listAuditEvents()')
    const userId = await signedInUserId(actionContext(api, req))
    if (!userId) throw new AuditError('not_signed_in', 'listAuditEvents(): nobody is signed in on this request.')
    const { userId: asked, ...rest } = filter
    if (asked === undefined || asked === userId) return adapter.listAuditEvents({ ...rest, userId })
    // Reading others' events is an administrator's: the roles option's audit:read permission.
    if (!api.config.features.roles || !sessionGrants(api, await api.session(req, res), { audit: ['read'] })) {
      throw new AuditError('forbidden', "listAuditEvents(): reading another user's events needs the audit: ['read'] permission (the roles option; docs/audit.md).")
    }
    return adapter.listAuditEvents(asked === null ? rest : { ...rest, userId: asked })
  }
}
