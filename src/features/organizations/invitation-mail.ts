/**
 * The invitation's mail: the organization's name, who invited, and one link to the accept page
 * (which accepts nothing by itself: a link previewer that opens it uses nothing up). Rendered like
 * the sign-in mail, sent through `organizations.sendMail`, `organizations.server`, or the server of
 * a configured e-mail provider.
 */
import type { ActionContext } from '../../actions/context.js'
import { describeError } from '../../events.js'
import { renderLinkEmail } from '../../mail/message.js'
import { sendEmail, type MailRoute } from '../../mail/transport.js'
import type { ResolvedOrganizations } from './config.js'
import type { AdapterOrganization, OrganizationMail } from './types.js'

/** What the invitation mail needs of its request: the config, and the site's origin and base path for its link. */
export type InvitationMailContext = Pick<ActionContext, 'config' | 'origin' | 'basePath'>

/** The accept page's URL for `token`. */
export function invitationUrl(ctx: Pick<ActionContext, 'origin' | 'basePath'>, token: string): string {
  return `${ctx.origin}${ctx.basePath}/organizations/invitation?${new URLSearchParams({ token })}`
}

/**
 * Renders and sends the invitation to `to`.
 * @returns Whether it left (a failure, or no way to send, is logged: the invitation stands, and a resend can try again).
 */
export async function sendInvitationMail(
  ctx: InvitationMailContext,
  options: ResolvedOrganizations,
  to: string,
  token: string,
  organization: AdapterOrganization,
  inviter: OrganizationMail['inviter'],
  expires: Date,
): Promise<boolean> {
  const url = invitationUrl(ctx, token)
  const host = new URL(ctx.origin).host
  const who = inviter.name ?? inviter.email ?? 'A member'
  const message = renderLinkEmail({
    theme: ctx.config.theme,
    url,
    subject: `${who} invited you to ${organization.name} on ${host}`,
    heading: ['You are invited to ', organization.name],
    button: 'See the invitation',
    note: [
      `${who} invited you to join ${organization.name} on ${host}. Open the link to accept or decline; it works once, until ${expires.toUTCString()}.`,
      'Sign in, or sign up, with this address to accept. If you did not expect it, you can ignore this e-mail.',
    ],
  })
  try {
    if (options.sendMail) {
      await options.sendMail({ kind: 'organization-invitation', to, ...message, url, organization: { id: organization.id, name: organization.name, slug: organization.slug }, inviter })
      return true
    }
    const route = mailRoute(ctx, options)
    if (!route) {
      ctx.config.logger.warn('OrganizationMailNotSent', 'An organization invitation was not sent: no mail server. Set organizations.server and organizations.from, organizations.sendMail, or configure a Nodemailer provider.')
      return false
    }
    await sendEmail(route, to, message, expires)
    return true
  } catch (error) {
    ctx.config.logger.error('OrganizationMailFailed', 'An organization invitation could not be sent.', describeError(error))
    return false
  }
}

/** The SMTP server and sender: the option's, else a configured e-mail provider's. */
function mailRoute(ctx: InvitationMailContext, options: ResolvedOrganizations): MailRoute | undefined {
  if (options.server !== undefined) return { server: options.server, from: options.from, key: options }
  const provider = ctx.config.providers.find((candidate) => candidate.type === 'email' && 'server' in candidate && (candidate as { server?: unknown }).server !== undefined) as
    | { server: unknown; from?: string }
    | undefined
  return provider ? { server: provider.server, from: options.from ?? provider.from, key: provider } : undefined
}
