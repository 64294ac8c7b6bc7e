/**
 * What the SSO routes share: the caller signed in by a cookie session (as the organizations' routes
 * take them), the organization's SSO page, the refusals of both wings as JSON clients and browsers
 * see them, and the posted fields of a form or a JSON body.
 */
import { issueCsrf, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import type { AuthResponse } from '../../../http/respond.js'
import { membershipOf, type Caller } from '../../organizations/call.js'
import { OrganizationError, statusOf } from '../../organizations/errors.js'
import { jsonAnswer, jsonClient, organizationsPage, posted } from '../../organizations/routes/organization-shared.js'
import { loadManage, ssoOf } from '../api/context.js'
import { SsoError } from '../errors.js'
import { renderSsoPage } from '../pages/sso.js'

export { backTo, callerOrSignIn, jsonAnswer, jsonClient, posted } from '../../organizations/routes/organization-shared.js'

/** The SSO page's path for an organization. */
export function ssoPath(organizationId: string): string {
  return `/sso?organizationId=${encodeURIComponent(organizationId)}`
}

/** A posted flag: a JSON boolean as it is; a form's checkbox `on` / `true` / `false`; absent is undefined. */
export function postedFlag(ctx: ActionContext, name: string): unknown {
  const value = posted(ctx, name)
  if (jsonClient(ctx) || typeof value !== 'string') return value
  return value === 'on' || value === 'true' ? true : value === 'false' ? false : value
}

/** A posted optional text: a form's empty field is "not given". */
export function optionalText(ctx: ActionContext, name: string): unknown {
  const value = posted(ctx, name)
  return value === '' && !jsonClient(ctx) ? undefined : value
}

/**
 * The organization's SSO page: its connections (what each identity provider needs of this site),
 * its domains (the TXT record each needs), and the forms that manage them.
 * @throws OrganizationError `not_found`, `forbidden` (answered by `refusal`)
 */
export async function ssoPage(ctx: ActionContext, caller: Caller, organizationId: unknown, extra: { error?: string; status?: number; scimToken?: { connectionId: string; token: string } } = {}): Promise<AuthResponse> {
  const sso = ssoOf(ctx.config, 'GET /sso')
  const manage = await loadManage()
  const { organization } = await membershipOf(caller, organizationId)
  const connections = await manage.listConnections(caller, sso, organization.id)
  const domains = await manage.listDomains(caller, organization.id)
  const csrf = issueCsrf(ctx)
  const html = renderSsoPage({
    organization: { id: organization.id, name: organization.name },
    connections,
    domains,
    roleNames: caller.options.roleNames,
    defaultRole: sso.defaultRole,
    error: extra.error,
    scimToken: extra.scimToken,
    csrfToken: csrf.token,
    basePath: ctx.basePath,
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status: extra.status, html, cookies: csrf.cookies, headers: { 'Cache-Control': 'no-store' } }
}

/** How an SsoError's code answers over HTTP. */
function ssoStatus(error: SsoError): number {
  switch (error.code) {
    case 'forbidden':
      return 403
    case 'not_found':
      return 404
    case 'domain_taken':
      return 409
    default:
      return 400
  }
}

/**
 * An SsoError or OrganizationError as JSON clients and browsers see it: `{ error, code, message }`
 * with its status, or the organization's SSO page again with the message (its organizations page
 * when the SSO page is not theirs to see). Anything else is rethrown.
 */
export async function refusal(ctx: ActionContext, caller: Caller, error: unknown, organizationId: unknown): Promise<AuthResponse> {
  if (!(error instanceof SsoError) && !(error instanceof OrganizationError)) throw error
  const status = error instanceof SsoError ? ssoStatus(error) : statusOf(error.code)
  if (jsonClient(ctx)) return jsonAnswer({ error: error.type, code: error.code, message: error.message }, { status })
  if (typeof organizationId === 'string' && status !== 404) {
    try {
      return await ssoPage(ctx, caller, organizationId, { error: error.message, status })
    } catch (again) {
      if (!(again instanceof OrganizationError)) throw again
    }
  }
  return organizationsPage(ctx, caller, { error: error.message, status })
}
