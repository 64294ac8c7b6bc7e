/**
 * GET /organizations: the signed-in user's organizations with their roles and the session's active
 * one, as JSON `{ organizations, activeOrganizationId }`, or the page with the switcher and the
 * "create an organization" form (browsers).
 */
import type { Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { activeOrganizationIdOf, callerOrSignIn, jsonAnswer, jsonClient, organizationsPage } from './organization-shared.js'

export const organizationsPageAction: Action = async (ctx) => {
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  if (!jsonClient(ctx)) return organizationsPage(ctx, asking.caller)
  const organizations = await (await loadManage()).listOrganizations(asking.caller)
  const active = await activeOrganizationIdOf(ctx)
  // The session may still name one the user has left (a JWT session without a store): only one of theirs is active.
  const activeOrganizationId = organizations.some((organization) => organization.id === active.id) ? active.id : null
  return jsonAnswer({ organizations, activeOrganizationId }, { cookies: active.cookies })
}
