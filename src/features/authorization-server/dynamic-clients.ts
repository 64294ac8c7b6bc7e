/**
 * Clients the server was not told of in advance, each opt-in: client ID metadata documents (a
 * `client_id` that is an `https` URL names the JSON document that describes the client, fetched when
 * it first asks) and RFC 7591 dynamic registration (`<issuer>/reg`). Both are oidc-provider's; this
 * file says what Portcullis asks of them beyond it. Such a client describes itself, so nothing it says
 * makes it trusted: it is never first-party (the user consents), it may not use client credentials
 * (a token without a user, for anyone who registers), and a registration names its
 * `application_type` (MCP's 2026-07-28 revision asks it, so that a native app's loopback redirects
 * are not taken for a web site's).
 *
 * oidc-provider fetches a document over https only, with redirects refused, within 2.5 seconds and
 * 5 KB, and through a dispatcher that refuses loopback and private addresses (an SSRF guard:
 * outgoing.ts), and caches it as its headers say (30 seconds to a day).
 *
 * @see https://datatracker.ietf.org/doc/draft-ietf-oauth-client-id-metadata-document/
 * @see https://www.rfc-editor.org/rfc/rfc7591
 */
import type { ResolvedAuthorizationServer } from './config.js'

type Errors = typeof import('oidc-provider').errors
type KoaContext = import('oidc-provider').KoaContextWithOIDC

// The grants a self-described client may use: the user's consent is in each of them.
const DYNAMIC_GRANTS = new Set(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'])

/** The oidc-provider features that admit such clients, as `options` asks. */
export function dynamicClientFeatures(options: ResolvedAuthorizationServer) {
  return {
    // The draft's version is acknowledged: an oidc-provider that implements another one refuses to start until this is read again.
    clientIdMetadataDocument: options.clientIdMetadataDocuments ? { enabled: true, ack: 'draft-02' } : { enabled: false },
    registration: options.registration ? { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false } : { enabled: false },
  }
}

/**
 * The checks of a client that describes itself (registered at `/reg`, or by a metadata document),
 * run by oidc-provider's metadata validator once per extra property (`first_party`).
 * @throws oidc-provider's InvalidClientMetadata, which it answers as RFC 7591 §3.2.2 says.
 */
export function dynamicClientMetadataCheck(ctx: KoaContext | undefined, key: string, value: unknown, metadata: Record<string, unknown>, declared: ReadonlySet<string>, errors: Errors): void {
  if (key !== 'first_party') return
  const registering = ctx?.oidc?.route === 'registration'
  const documented = typeof metadata['client_id'] === 'string' && metadata['client_id'].startsWith('https://') && !declared.has(metadata['client_id'])
  if (!registering && !documented) return
  if (value !== undefined) throw new errors.InvalidClientMetadata('first_party cannot be claimed by a client that describes itself')
  const grants = (metadata['grant_types'] as unknown[] | undefined) ?? []
  const refused = grants.find((grant) => !DYNAMIC_GRANTS.has(String(grant)))
  if (refused !== undefined) throw new errors.InvalidClientMetadata(`grant_types: ${String(refused)} is not open to a client that describes itself`)
  if (registering && !('application_type' in ((ctx.oidc.body as Record<string, unknown> | undefined) ?? {}))) {
    throw new errors.InvalidClientMetadata('application_type is required: "web" for a site, "native" for an app on a device')
  }
}
