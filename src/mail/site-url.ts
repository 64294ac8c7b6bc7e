/**
 * What every feature that mails links to the site needs at init (e-mail sign-in, the password
 * provider's verification and reset links): a site URL that no request can choose, in production.
 */
import { UntrustedHostError } from '../errors.js'
import type { ActionContext } from '../actions/context.js'
import type { ResolvedConfig } from '../config/types.js'

/**
 * A provider that mails links needs a site URL that no request can choose, in production.
 * @throws UntrustedHostError
 */
export function assertMailedLinks(what: string, config: Pick<ResolvedConfig, 'url' | 'trustHost' | 'production'>): void {
  if (config.production && !config.url && config.trustHost !== true) {
    throw new UntrustedHostError(
      `${what} mails links to your site, so the site's URL must not come from the request's Host header, which any client can set (it would mail links to their site). Set AUTH_URL (e.g. AUTH_URL=https://example.com/api/auth), or trustHost: true (AUTH_TRUST_HOST=true) when a proxy you run sets the Host.`,
    )
  }
}

/**
 * The link's origin must not be one a client chose. With AUTH_URL or `trustHost: true` it is not
 * (and production requires one of them: resolveConfig). Without them, in development, the origin
 * comes from the Host header: it is accepted for loopback hosts only, where a poisoned link could
 * only lead to the recipient's own machine.
 * @throws UntrustedHostError
 */
export function assertTrustedLinkOrigin(ctx: ActionContext): void {
  if (ctx.config.url || ctx.config.trustHost === true) return
  if (isLoopback(new URL(ctx.origin).hostname)) return
  throw new UntrustedHostError(
    `E-mail sign-in: the site's origin (${ctx.origin}) came from the request's Host header, which any client can set, so no link was mailed. Set AUTH_URL (e.g. AUTH_URL=https://example.com/api/auth), or trustHost: true (AUTH_TRUST_HOST=true) when a proxy you run sets the Host. Without them, development works on localhost only.`,
  )
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127(?:\.\d{1,3}){3}$/.test(hostname) || hostname === '[::1]'
}
