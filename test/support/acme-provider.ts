/**
 * "Acme": a generic OAuth 2 provider whose endpoints are a fake provider API on loopback
 * (test/providers/provider-api.ts), resolved as init resolves providers, for the OAuth engine's unit
 * suites (the refresh grant, the errors' mapping). The API serves `/jwks` with an RS256 key whose
 * private half signs the suites' ID tokens; each suite adds its own routes.
 */
import { exportJWK, generateKeyPair } from 'jose'
import OAuth from 'portcullis/providers/oauth'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import type { OAuthProvider } from '../../src/features/oauth/provider.js'
import { startProviderApi, type MockRoutes, type ProviderApi } from '../providers/provider-api.js'
import { SECRET } from './flow.js'
import { silentLogger } from './oauth-app.js'

export const ACME_CLIENT_ID = 'acme-client'
/** The `kid` of the key `/jwks` publishes. */
export const ACME_KEY_ID = 'acme-key'

export interface Acme {
  readonly api: ProviderApi
  /** Signs ID tokens as the provider does (its key is the one `/jwks` serves). */
  readonly signingKey: CryptoKey
  /** The resolved providers, by id. */
  readonly providers: ReadonlyMap<string, OAuthProvider>
}

/**
 * Starts the API with `routes` and `/jwks`, then resolves one Acme provider per entry of `variants`
 * (id → the endpoints that differ from the API's own `/token` and `/me`).
 */
export async function startAcme(routes: MockRoutes, variants: Record<string, { token?: string; userinfo?: string }>): Promise<Acme> {
  const keys = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(keys.publicKey)), kid: ACME_KEY_ID, alg: 'RS256', use: 'sig' }
  const api = await startProviderApi({ ...routes, 'GET /jwks': () => ({ json: { keys: [jwk] } }) })
  const providers = Object.entries(variants).map(([id, endpoints]) =>
    OAuth({
      id,
      name: 'Acme',
      clientId: ACME_CLIENT_ID,
      clientSecret: 'acme-secret',
      issuer: api.baseUrl,
      authorization: `${api.baseUrl}/authorize`,
      token: endpoints.token ?? `${api.baseUrl}/token`,
      userinfo: endpoints.userinfo ?? `${api.baseUrl}/me`,
      jwks_endpoint: `${api.baseUrl}/jwks`,
      dangerouslyAllowInsecureRequests: true,
    }),
  )
  const config = resolveConfig({ secret: SECRET, logger: silentLogger, providers }, FEATURES)
  return { api, signingKey: keys.privateKey, providers: config.providerById as ReadonlyMap<string, OAuthProvider> }
}
