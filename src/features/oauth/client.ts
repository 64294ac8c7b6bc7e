/**
 * The openid-client `Configuration` of each provider: for `oidc`, discovered from the issuer on
 * the first sign-in and kept (a failed discovery is retried by the next sign-in); for `oauth`,
 * built from the endpoints in the config. ID token signatures are always verified against the
 * provider's JWKS: openid-client would otherwise trust the TLS connection to the token endpoint
 * (OIDC Core §3.1.3.7 allows it), and a certified relying party checks them. Only sign-in routes load this module (dynamic import), so
 * openid-client never loads on the session-read path.
 *
 * @see https://openid.net/specs/openid-connect-discovery-1_0.html
 * @see https://www.rfc-editor.org/rfc/rfc8414 OAuth 2.0 Authorization Server Metadata
 */
import * as oidc from 'openid-client'
import { OAuthSignInError } from './errors.js'
import { describeError, redactError } from '../../events.js'
import type { OAuthProvider } from './provider.js'
import { tracedFetch } from '../../telemetry/oauth-fetch.js'

// openid-client needs an issuer; an `oauth` provider without one gets this, and the callback then
// ignores an `iss` parameter it could not check (only a configured issuer is compared).
const UNKNOWN_ISSUER = 'urn:portcullis:issuer-not-configured'

const configurations = new WeakMap<OAuthProvider, Promise<oidc.Configuration>>()

/**
 * The provider's openid-client configuration.
 * @throws OAuthSignInError when discovery fails (the next call tries again).
 */
export function clientConfiguration(provider: OAuthProvider): Promise<oidc.Configuration> {
  let configuration = configurations.get(provider)
  if (!configuration) {
    configuration = (provider.type === 'oidc' ? discover(provider) : Promise.resolve(explicit(provider))).catch((error: unknown) => {
      configurations.delete(provider)
      throw error
    })
    configurations.set(provider, configuration)
  }
  return configuration
}

async function discover(provider: OAuthProvider): Promise<oidc.Configuration> {
  let discovered: oidc.Configuration
  try {
    discovered = await oidc.discovery(new URL(provider.issuer!), provider.clientId, clientMetadata(provider), clientAuth(provider), {
      // One list for both: the ID token's signature check is the same code over http (the tests) and https.
      execute: [...(provider.allowInsecureRequests ? [oidc.allowInsecureRequests] : []), oidc.enableNonRepudiationChecks],
      // Plain fetch, or a client span inside a traced sign-in (telemetry/oauth-fetch.ts).
      [oidc.customFetch]: (provider.fetch as oidc.CustomFetch | undefined) ?? tracedFetch,
    })
  } catch (error) {
    throw new OAuthSignInError(`Discovery of the "${provider.id}" provider's issuer ${provider.issuer} failed: ${describeError(error)}`, { cause: redactError(error) })
  }
  // Endpoints given in the config replace the discovered ones.
  const overrides = endpoints(provider)
  if (Object.keys(overrides).length === 0) return discovered
  return configure(provider, { ...discovered.serverMetadata(), ...overrides })
}

function explicit(provider: OAuthProvider): oidc.Configuration {
  return configure(provider, { issuer: provider.issuer ?? UNKNOWN_ISSUER, ...endpoints(provider) })
}

function configure(provider: OAuthProvider, metadata: oidc.ServerMetadata): oidc.Configuration {
  const configuration = new oidc.Configuration(metadata, provider.clientId, clientMetadata(provider), clientAuth(provider))
  if (provider.allowInsecureRequests) oidc.allowInsecureRequests(configuration)
  configuration[oidc.customFetch] = (provider.fetch as oidc.CustomFetch | undefined) ?? tracedFetch
  if (metadata.jwks_uri) oidc.enableNonRepudiationChecks(configuration)
  return configuration
}

function endpoints(provider: OAuthProvider): Partial<oidc.ServerMetadata> {
  const metadata: { -readonly [K in keyof oidc.ServerMetadata]?: oidc.ServerMetadata[K] } = {}
  if (provider.authorization.url) metadata.authorization_endpoint = provider.authorization.url
  if (provider.token.url) metadata.token_endpoint = provider.token.url
  if (provider.userinfo && provider.userinfo.url) metadata.userinfo_endpoint = provider.userinfo.url
  if (provider.jwksUri) metadata.jwks_uri = provider.jwksUri
  return metadata
}

function clientMetadata(provider: OAuthProvider): Partial<oidc.ClientMetadata> {
  return provider.idTokenSignedResponseAlg ? { id_token_signed_response_alg: provider.idTokenSignedResponseAlg } : {}
}

function clientAuth(provider: OAuthProvider): oidc.ClientAuth {
  const { clientSecret } = provider
  if (provider.clientAuth === 'none') return oidc.None()
  const method = provider.clientAuth === 'client_secret_post' ? oidc.ClientSecretPost : oidc.ClientSecretBasic
  if (typeof clientSecret !== 'function') return method(clientSecret!)
  // The Configuration is kept for the life of the process, so a secret that expires (Apple's JWT)
  // is asked for on each token request rather than fixed here.
  return async (as, client, body, headers) => {
    const secret = await clientSecret({ clientId: provider.clientId })
    if (typeof secret !== 'string' || !secret) throw new OAuthSignInError(`The clientSecret function of the "${provider.id}" provider returned no secret.`)
    return method(secret)(as, client, body, headers)
  }
}

// `serverMetadata()` deep-copies the metadata on every call (structuredClone): a configuration is
// kept for the life of the process, so its copy is taken once, for the checks each callback makes.
const metadataCopies = new WeakMap<oidc.Configuration, oidc.ServerMetadata>()

function metadataOf(configuration: oidc.Configuration): oidc.ServerMetadata {
  let metadata = metadataCopies.get(configuration)
  if (!metadata) metadataCopies.set(configuration, (metadata = configuration.serverMetadata()))
  return metadata
}

/** True when the issuer in `configuration` is a real one the callback can compare `iss` against. */
export function hasIssuer(configuration: oidc.Configuration): boolean {
  return metadataOf(configuration).issuer !== UNKNOWN_ISSUER
}

/** True when the provider has a userinfo endpoint (discovered or configured). */
export function hasUserinfoEndpoint(configuration: oidc.Configuration): boolean {
  return Boolean(metadataOf(configuration).userinfo_endpoint)
}
