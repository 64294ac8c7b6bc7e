/**
 * The authorization server (`authorizationServer` option): Portcullis as an OAuth 2.1 authorization
 * server and OpenID Provider for native apps, CLIs, services and the company's other apps, run by
 * oidc-provider under `<basePath>/oauth` (`Feature.mount`), with the site's own sign-in and a consent
 * page (`/oauth-interaction/:uid`), the user's "apps with access" page (`/oauth-apps`), and its
 * access tokens read by `auth()` through the core's credential point. Only the header check
 * (sent-token.ts) loads at init; the token read loads on the first request with a token, and
 * oidc-provider on the first request to its endpoints.
 */
import type { Feature } from '../../composition/index.js'
import type { ResolvedConfig } from '../../config/types.js'
import { AUTHORIZATION_SERVER_ADAPTER_METHODS, checkAuthorizationServer, recordsOf, resolveAuthorizationServer } from './config.js'
import { createListAuthorizedApps, type ListAuthorizedAppsFunction } from './api/list-authorized-apps.js'
import { createRegisterOAuthClient, type RegisterOAuthClientFunction } from './api/register-oauth-client.js'
import { createRemoveOAuthClient, type RemoveOAuthClientFunction } from './api/remove-oauth-client.js'
import { createRevokeAuthorizedApp, type RevokeAuthorizedAppFunction } from './api/revoke-authorized-app.js'
import { accessTokenCredential } from './credential.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface AuthorizationServerApi {
  /** The apps with access to the signed-in user's account. */
  listAuthorizedApps: ListAuthorizedAppsFunction
  /** Removes an app's access to the signed-in user's account, with its tokens (CSRF-checked). */
  revokeAuthorizedApp: RevokeAuthorizedAppFunction
  /** Stores a new client (an administrator's function: it checks nobody). */
  registerOAuthClient: RegisterOAuthClientFunction
  /** Removes a stored client. */
  removeOAuthClient: RemoveOAuthClientFunction
}

/** Ends every grant of the user: their rows go, and this process refuses their tokens at once. */
async function endAccount(config: ResolvedConfig, userId: string): Promise<void> {
  const { forgetAccount } = await import('./grants.js')
  await recordsOf(config).deleteOAuthAccount(userId)
  forgetAccount(config, userId)
}

/** Signs the user out of the apps they signed in to through the provider (back-channel logout), then ends every grant. */
async function endEverySession(config: ResolvedConfig, userId: string): Promise<void> {
  await (await import('./logout.js')).logoutEverywhere(config, userId)
  await endAccount(config, userId)
}

export const authorizationServerFeature: Feature = {
  name: 'authorization-server',
  enabled: (config) => config.authorizationServer !== undefined && config.authorizationServer !== false,
  resolve: (config, init) => resolveAuthorizationServer(config.authorizationServer, init.adapter),
  check: checkAuthorizationServer,
  mount: { path: '/oauth', load: async () => (await import('./mount.js')).authorizationServerMount },
  routes: [
    { method: 'GET', path: '/oauth-interaction/:provider', load: async () => (await import('./routes/interaction.js')).interactionPage as never },
    { method: 'POST', path: '/oauth-interaction/:provider', csrf: true, load: async () => (await import('./routes/decide.js')).decideConsent as never },
    { method: 'GET', path: '/oauth-apps', page: true, load: async () => (await import('./routes/apps.js')).appsPage },
    { method: 'POST', path: '/oauth-apps/revoke', csrf: true, load: async () => (await import('./routes/revoke-app.js')).revokeAppAction },
  ],
  off: 'The authorization server is off: set the authorizationServer option (and run its migration) to use its routes.',
  hooks: {
    readCredential: accessTokenCredential,
    // deleteUser removed the user's records in its transaction (KnexAdapter); a store of its own (Redis)
    // deletes them here, and this process forgets their grants.
    userDeleted: (config, user) => endAccount(config, user.id),
    // Signing out everywhere, an administrator's revocation, an address change: the apps' access ends too.
    // The apps that registered a back-channel logout URI are told first.
    everySessionEnded: endEverySession,
    // A ban ends every grant (the hook cannot tell a ban from its lifting: lifting one ends none that stand, the ban ended them).
    banChanged: endEverySession,
    // The records whose time is over (codes, refresh tokens, interactions, sessions), with the other tables.
    prune: async (config) => ({ oauthRecords: (await recordsOf(config).pruneOAuthRecords?.(new Date())) ?? 0 }),
  },
  api: (api): AuthorizationServerApi => ({
    listAuthorizedApps: createListAuthorizedApps(api),
    revokeAuthorizedApp: createRevokeAuthorizedApp(api),
    registerOAuthClient: createRegisterOAuthClient(api),
    removeOAuthClient: createRemoveOAuthClient(api),
  }),
  adapterMethods: [...AUTHORIZATION_SERVER_ADAPTER_METHODS],
  errors: ['AuthorizationServer'],
  rateLimitBuckets: ['oauth-registration'],
  events: ['oauthConsentGiven', 'oauthAccessRevoked'],
}
