/**
 * A connection as the rest of the wing uses it: its shape for the functions (never the client
 * secret), the URLs this site gives the identity provider, the sealed secret, and the OpenID Connect
 * provider the OAuth engine signs in with (built once per connection version, its requests through
 * the guarded fetch).
 */
import type { ActionContext } from '../../actions/context.js'
import type { ResolvedConfig } from '../../config/types.js'
import { decryptJwe, encryptJwe } from '../../session/jwe.js'
import { keyRingFor } from '../../session/keys.js'
import type { Profile } from '../../providers/oauth.js'
import { resolveOAuthProvider, type OAuthProvider } from '../oauth/provider.js'
import type { SsoProvider } from './config.js'
import { SsoError } from './errors.js'
import { guardedFetch } from './network.js'
import type { AdapterSsoConnection, AdapterSsoDomain, OidcConnectionSettings, SamlConnectionSettings, SsoConnection, SsoDomain } from './types.js'
import { verificationRecordName, verificationRecordValue } from './dns.js'

type Site = Pick<ActionContext, 'origin' | 'basePath'>

const secretRing = keyRingFor('portcullis.sso-client-secret')

/** The client secret as stored: encrypted with a key derived from the secret, so a database dump does not hold it. */
export function sealClientSecret(config: Pick<ResolvedConfig, 'secrets'>, secret: string): string {
  return encryptJwe(secret, secretRing(config.secrets).current)
}

function openClientSecret(config: Pick<ResolvedConfig, 'secrets'>, sealed: string): string {
  const secret = decryptJwe(sealed, secretRing(config.secrets))
  if (secret === null) throw new SsoError('invalid_input', 'The client secret of this connection was sealed with a secret no longer configured: register it again.')
  return secret
}

/** This site's SAML entity id for the connection: its metadata URL. */
export function spEntityId(site: Site, connectionId: string): string {
  return `${site.origin}${site.basePath}/saml-metadata/${encodeURIComponent(connectionId)}`
}

/** Where the identity provider posts its SAML response (the Assertion Consumer Service). */
export function acsUrl(site: Site, connectionId: string): string {
  return `${site.origin}${site.basePath}/saml-acs/${encodeURIComponent(connectionId)}`
}

/**
 * The SCIM base URL to give the identity provider (Okta's "SCIM connector base URL", Entra's "Tenant
 * URL"): the same for every connection, since the bearer token names the connection.
 */
export function scimBaseUrl(site: Site): string {
  return `${site.origin}${site.basePath}/scim/v2`
}

/** The OIDC redirect URI to register at the identity provider. */
export function oidcRedirectUri(site: Site, sso: SsoProvider): string {
  return `${site.origin}${site.basePath}/callback/${sso.id}`
}

export function isSaml(connection: AdapterSsoConnection): connection is AdapterSsoConnection & { settings: SamlConnectionSettings } {
  return connection.type === 'saml'
}

export function isOidc(connection: AdapterSsoConnection): connection is AdapterSsoConnection & { settings: OidcConnectionSettings } {
  return connection.type === 'oidc'
}

/** The connection as functions and routes give it. */
export function connectionShape(site: Site, sso: SsoProvider, connection: AdapterSsoConnection): SsoConnection {
  const shape: SsoConnection = {
    id: connection.id,
    organizationId: connection.organizationId,
    type: connection.type,
    name: connection.name,
    enabled: connection.enabled,
    ssoOnly: connection.ssoOnly,
    defaultRole: connection.defaultRole,
    scim: { enabled: typeof connection.settings.scimTokenHash === 'string', createdAt: connection.settings.scimTokenCreatedAt ?? null, baseUrl: scimBaseUrl(site) },
    createdAt: connection.createdAt.toISOString(),
    updatedAt: connection.updatedAt.toISOString(),
  }
  if (isOidc(connection)) {
    const { issuer, clientId, scopes } = connection.settings
    shape.oidc = { issuer, clientId, scopes: [...scopes] }
    shape.redirectUri = oidcRedirectUri(site, sso)
  } else if (isSaml(connection)) {
    const { idpEntityId, ssoUrl, certificates, metadataUrl, allowIdpInitiated } = connection.settings
    const metadata = spEntityId(site, connection.id)
    shape.saml = { idpEntityId, ssoUrl, certificates: certificates.length, metadataUrl, allowIdpInitiated, spEntityId: metadata, acsUrl: acsUrl(site, connection.id), spMetadataUrl: metadata }
  }
  return shape
}

/** The domain as functions and routes give it, with its DNS record. */
export function domainShape(domain: AdapterSsoDomain): SsoDomain {
  return {
    id: domain.id,
    organizationId: domain.organizationId,
    domain: domain.domain,
    verified: domain.verifiedAt !== null,
    verifiedAt: domain.verifiedAt?.toISOString() ?? null,
    verifiedBy: domain.verifiedBy,
    record: { type: 'TXT', name: verificationRecordName(domain.domain), value: verificationRecordValue(domain.token) },
    createdAt: domain.createdAt.toISOString(),
  }
}

// Built once per connection version, per SSO provider (one per Portcullis instance): openid-client's
// discovery is kept with the provider object.
const built = new WeakMap<SsoProvider, Map<string, OAuthProvider>>()
const MAX_BUILT = 1000

/**
 * The OpenID Connect provider of a connection, as the OAuth engine signs in with it: the SSO
 * provider's id (its callback is `/callback/<id>`), the connection's issuer and client, PKCE, state
 * and nonce, and the account id `<connection id>:<sub>` (a subject is unique per issuer only).
 * A stored connection's is kept (by its id and version); one not stored yet (`stored: false`, being
 * checked before it is) is built afresh each time.
 */
export function oidcProviderOf(config: Pick<ResolvedConfig, 'secrets'>, sso: SsoProvider, connection: AdapterSsoConnection & { settings: OidcConnectionSettings }, stored = true): OAuthProvider {
  const key = `${connection.id}@${connection.updatedAt.getTime()}`
  let cache = built.get(sso)
  if (!cache) built.set(sso, (cache = new Map()))
  let provider = stored ? cache.get(key) : undefined
  if (provider) return provider
  const { issuer, clientId, clientSecret, scopes } = connection.settings
  const resolved = resolveOAuthProvider(
    {
      id: sso.id,
      name: connection.name,
      type: 'oidc',
      issuer,
      clientId,
      clientSecret: openClientSecret(config, clientSecret),
      checks: ['pkce', 'state', 'nonce'],
      authorization: { params: { scope: ['openid', ...scopes].join(' ') } },
      // The address is used only inside the organization's verified domains (complete.ts checks it).
      profile: (profile: Profile) => ({
        id: `${connection.id}:${String(profile.sub)}`,
        name: profile.name ?? (profile.preferred_username as string | undefined) ?? null,
        email: typeof profile.email === 'string' ? profile.email : null,
        emailVerified: true,
        image: profile.picture ?? null,
      }),
      dangerouslyAllowInsecureRequests: sso.allowInternalUrls,
    },
    {},
    undefined,
  )
  provider = Object.freeze({ ...resolved, fetch: guardedFetch(sso.allowInternalUrls) })
  if (!stored) return provider
  if (cache.size >= MAX_BUILT) cache.delete(cache.keys().next().value!)
  cache.set(key, provider)
  return provider
}
