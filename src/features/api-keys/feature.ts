/**
 * API keys (`apiKeys` option): keys for scripts, jobs and other services, created by signed-in
 * users, sent as `Authorization: Bearer <key>` (or `x-api-key`), read by `auth()` through the core's
 * credential point (`FeatureHooks.readCredential`), scoped (`requireScopes()`), limited, revocable.
 * Only credential.ts's header check loads at init; the read loads on the first request with a key.
 */
import type { Feature } from '../../composition/index.js'
import { createCreateApiKey, type CreateApiKeyFunction } from './api/create-api-key.js'
import { createListApiKeys, type ListApiKeysFunction } from './api/list-api-keys.js'
import { createRevokeApiKey, type RevokeApiKeyFunction } from './api/revoke-api-key.js'
import { createRotateApiKey, type RotateApiKeyFunction } from './api/rotate-api-key.js'
import { API_KEY_ADAPTER_METHODS, resolveApiKeys } from './config.js'
import { apiKeyCredential } from './credential.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface ApiKeysApi {
  /** Creates an API key for the signed-in user, returned once (CSRF-checked). */
  createApiKey: CreateApiKeyFunction
  /** The signed-in user's API keys (never the keys themselves). */
  listApiKeys: ListApiKeysFunction
  /** Revokes one of the signed-in user's API keys (CSRF-checked). */
  revokeApiKey: RevokeApiKeyFunction
  /** Replaces one of the signed-in user's API keys, the old one valid for a grace period (CSRF-checked). */
  rotateApiKey: RotateApiKeyFunction
}

export const apiKeysFeature: Feature = {
  name: 'api-keys',
  resolve: (config, init) => resolveApiKeys(config.apiKeys, init.adapter),
  routes: [
    { method: 'GET', path: '/api-keys', page: true, load: async () => (await import('./routes/page.js')).apiKeysPage },
    { method: 'POST', path: '/api-keys', csrf: true, load: async () => (await import('./routes/create.js')).createApiKeyAction },
    { method: 'POST', path: '/api-keys/revoke', csrf: true, load: async () => (await import('./routes/revoke.js')).revokeApiKeyAction },
    { method: 'POST', path: '/api-keys/rotate', csrf: true, load: async () => (await import('./routes/rotate.js')).rotateApiKeyAction },
  ],
  off: 'API keys are off: set the apiKeys option (and run the eighth migration) to use their routes.',
  hooks: {
    readCredential: apiKeyCredential,
    // deleteUser removed the keys' rows; the opened-key cache forgets them here, in this process at once.
    userDeleted: async (config, user) => (await import('./cache.js')).forgetOwner(config, { type: 'user', id: user.id }),
    // A ban (or its lifting) reaches the keys at their next lookup; the opened-key cache forgets them here, in this process at once.
    banChanged: async (config, userId) => (await import('./cache.js')).forgetOwner(config, { type: 'user', id: userId }),
  },
  api: (api): ApiKeysApi => ({
    createApiKey: createCreateApiKey(api),
    listApiKeys: createListApiKeys(api),
    revokeApiKey: createRevokeApiKey(api),
    rotateApiKey: createRotateApiKey(api),
  }),
  adapterMethods: [...API_KEY_ADAPTER_METHODS],
  events: ['apiKeyCreated', 'apiKeyRevoked'],
  errors: ['ApiKey'],
  rateLimitBuckets: ['api-key'],
}
