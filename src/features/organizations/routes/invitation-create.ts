/**
 * POST /organizations/invitations `{ csrfToken, organizationId, email, roles?, teamId?, callbackUrl? }` (a form
 * or JSON): invites the address (`invitation: ['create']`). JSON clients get 201 `{ invitation }`;
 * browsers go back to `callbackUrl` or the app's home.
 */
import { assertCsrf, authUrl, postedList, type Action } from '../../../actions/context.js'
import { backTo, callerOrSignIn, field, jsonClient, refusal } from './invitation-shared.js'

export const createInvitationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, authUrl(ctx, '/invitations'))
  if ('response' in asking) return asking.response
  try {
    const roles = postedList(ctx, 'roles') as string[] | undefined
    const invitation = await asking.engine.invite(asking.caller, { organizationId: field(ctx, 'organizationId') ?? '', email: field(ctx, 'email') ?? '', roles: roles && roles.length > 0 ? roles : undefined, teamId: field(ctx, 'teamId') })
    if (jsonClient(ctx)) return { status: 201, json: { invitation }, headers: { 'Cache-Control': 'no-store' } }
    return { redirect: await backTo(ctx) }
  } catch (error) {
    return refusal(ctx, error)
  }
}
