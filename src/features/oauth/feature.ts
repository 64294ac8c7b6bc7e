/**
 * OAuth 2 and OpenID Connect sign-in (openid-client): the providers of `type: 'oauth'` and `'oidc'`,
 * their authorization request and callback, fresh access tokens (`getAccessToken`). Everything past
 * this declaration loads on the first sign-in or `getAccessToken()` call.
 */
import type { Feature } from '../../composition/index.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { OAuthConfig } from '../../providers/oauth.js'
import type { OIDCConfig } from '../../providers/oidc.js'
import { createGetAccessToken, type GetAccessTokenFunction } from './api/get-access-token.js'
import { resolveOAuthProvider, type OAuthProvider } from './provider.js'

/** The adapter methods OAuth and OIDC sign-in call when there is an adapter. */
/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface OAuthApi {
  /** A valid access token of the signed-in user's account at a provider, refreshed when it expires. */
  getAccessToken: GetAccessTokenFunction
}

export const ACCOUNT_ADAPTER_METHODS = ['getUser', 'getUserByAccount', 'getUserByEmail', 'createUser', 'linkAccount'] as const

export const oauthFeature: Feature = {
  name: 'oauth',
  providers: {
    kind: 'oauth',
    types: ['oauth', 'oidc'],
    claims: (provider) => provider.type === 'oauth' || provider.type === 'oidc',
    resolve: (provider: OAuthConfig | OIDCConfig, init) => resolveOAuthProvider(provider, init.env, init.redirectProxyUrl),
    start: async () => {
      const { authorizationRequest } = await import('./authorize.js')
      return async (ctx, provider: OAuthProvider, { authorizationParams }) => {
        const authorization = await authorizationRequest(ctx, provider, authorizationParams)
        return { redirect: authorization.url, cookies: authorization.cookies }
      }
    },
    callback: async () => (await import('./routes/callback.js')).oauthProviderCallback,
    resume: async () => (await import('./resume.js')).resumeOAuthSignIn,
  },
  check(config) {
    const { adapter } = config
    if (!adapter) return
    const missing = ACCOUNT_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
    if (missing.length > 0) {
      throw new InvalidConfigurationError(`OAuth and OIDC sign-in with an adapter need its ${missing.join(', ')}; this adapter lacks them.`)
    }
  },
  api: (api): OAuthApi => ({ getAccessToken: createGetAccessToken(api) }),
  adapterMethods: [...ACCOUNT_ADAPTER_METHODS, 'getAccount', 'updateAccount'],
  events: ['linkAccount'],
  errors: ['OAuthSignInError', 'OAuthCallbackError', 'OAuthAccountNotLinked', 'InvalidCheck', 'RefreshAccessTokenError'],
}
