/**
 * What the consent page says of a request, from oidc-provider's interaction and the client's
 * metadata: who the client says it is (its name, its home page), what vouches for that (the address of
 * its client ID metadata document, whose host is the one thing it cannot make up), where the browser
 * goes back to, and what it asks, per API, beside what the user allowed it before (consent is
 * incremental: only the new scopes are asked).
 */
import type { ResolvedConfig } from '../../config/types.js'
import { authorizationServerOf, mcpResourceOf, ownResourceOf } from './config.js'
import type { AuthorizationServer } from './provider.js'

type Interaction = Awaited<ReturnType<AuthorizationServer['provider']['interactionDetails']>>
type Client = NonNullable<Awaited<ReturnType<AuthorizationServer['provider']['Client']['find']>>>

/** What the consent page shows of the client and its request. */
export interface ConsentDetails {
  clientName: string
  /** The client's own page (`client_uri`), an https URL. */
  homepage: string | undefined
  /** The address of the document that describes it (a client ID metadata document). */
  documentUrl: string | undefined
  /** Where the browser goes after the answer: a site's host, or "an app on this device". */
  returnsTo: string
  /** OpenID Connect's scopes asked for, not granted yet. */
  identity: string[]
  /** Each API's scopes asked for, not granted yet, by the API's name. */
  apis: { name: string; scopes: string[] }[]
  /** What the user allowed this client before. */
  granted: string[]
}

/** The consent page's details of `interaction`, for `client`. */
export async function consentDetails(config: ResolvedConfig, server: AuthorizationServer, interaction: Interaction, client: Client): Promise<ConsentDetails> {
  const details = interaction.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> }
  const metadata = client.metadata() as { client_uri?: string }
  const grant = interaction.grantId ? await server.provider.Grant.find(interaction.grantId) : undefined
  const granted = grant ? [...String(grant.getOIDCScope() ?? '').split(' '), ...Object.values(grant.resources ?? {}).flatMap((scope) => String(scope).split(' '))] : []
  return {
    clientName: client.clientName ?? client.clientId,
    homepage: typeof metadata.client_uri === 'string' && metadata.client_uri.startsWith('https://') ? metadata.client_uri : undefined,
    documentUrl: (client as { clientIdMetadataDocument?: boolean }).clientIdMetadataDocument === true ? client.clientId : undefined,
    returnsTo: destinationOf(String(interaction.params['redirect_uri'] ?? '')),
    identity: details.missingOIDCScope ?? [],
    apis: Object.entries(details.missingResourceScopes ?? {}).map(([indicator, scopes]) => ({ name: apiName(config, indicator), scopes })),
    granted: [...new Set(granted.filter(Boolean))],
  }
}

/** What the user should know of where a redirect URI sends them. */
function destinationOf(redirectUri: string): string {
  let url: URL
  try {
    url = new URL(redirectUri)
  } catch {
    return 'the app'
  }
  // A loopback address or a private-use scheme (RFC 8252 §7) is an app on the user's own device.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'an app on this device'
  if (['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname)) return 'an app on this device'
  return url.host
}

/** The API a resource indicator names, in the user's words. */
function apiName(config: ResolvedConfig, indicator: string): string {
  if (indicator === ownResourceOf(config)) return `${config.url!.host}'s API`
  const mcp = authorizationServerOf(config)!.mcp.find((server) => mcpResourceOf(config, server) === indicator)
  if (mcp) return mcp.name ?? `${config.url!.host}${mcp.path}`
  return new URL(indicator).host
}
