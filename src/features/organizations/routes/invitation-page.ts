/**
 * GET /organizations/invitation?token=…: the accept page. It shows the organization and the Accept
 * and Decline forms to the user signed in with the invited address, and changes nothing (HEAD and
 * link previewers use nothing up). A visitor who is not signed in goes to sign in (or up) and comes
 * back here; an invitation that cannot be used is one notice, whatever the reason.
 */
import { authUrl, issueCsrf, type Action } from '../../../actions/context.js'
import { renderAcceptPage } from '../pages/invitation.js'
import { callerOrSignIn, field, jsonClient, pageBase, refusal } from './invitation-shared.js'

export const invitationPage: Action = async (ctx) => {
  const token = field(ctx, 'token') ?? ''
  const asking = await callerOrSignIn(ctx, `${authUrl(ctx, '/organizations/invitation')}?${new URLSearchParams({ token })}`)
  if ('response' in asking) return asking.response
  try {
    const { invitation, organization } = await asking.engine.invitationFor(asking.caller, token)
    const headers = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' }
    if (jsonClient(ctx)) {
      return { headers, json: { invitation: { id: invitation.id, roles: invitation.roles, expiresAt: invitation.expiresAt.toISOString() }, organization: { id: organization.id, name: organization.name, slug: organization.slug, logo: organization.logo } } }
    }
    const inviter = invitation.inviterId ? await asking.caller.adapter.getUser(invitation.inviterId) : null
    const csrf = issueCsrf(ctx)
    const html = renderAcceptPage({ organization, roles: invitation.roles, inviter: inviter?.name ?? inviter?.email ?? null, expiresAt: invitation.expiresAt, token, csrfToken: csrf.token, ...pageBase(ctx) })
    return { html, cookies: csrf.cookies, headers }
  } catch (error) {
    return refusal(ctx, error)
  }
}
