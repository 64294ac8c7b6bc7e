/**
 * The authorization server's part of the session read (`FeatureHooks.readCredential`): whether a
 * request carries one of its access tokens (sent-token.ts, without loading anything), and the read
 * itself, which loads read.ts on the first request that carries one. oidc-provider is not loaded.
 */
import type { CredentialReader } from '../../config/types.js'
import { bearerToken } from './sent-token.js'

let reader: Promise<typeof import('./read.js')> | undefined

export const accessTokenCredential: CredentialReader = {
  carries: (_config, req) => bearerToken(req) !== undefined,
  async read(config, req) {
    return (await (reader ??= import('./read.js'))).readAccessToken(config, req)
  },
}
