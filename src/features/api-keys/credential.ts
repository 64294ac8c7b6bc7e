/**
 * The API keys' part of the session read (`FeatureHooks.readCredential`): whether a request carries
 * a key (sent-key.ts, without loading anything), and the read itself, which loads read.ts on the
 * first request that carries one.
 */
import type { IncomingMessage } from 'node:http'
import type { CredentialReader, ResolvedConfig } from '../../config/types.js'
import { apiKeysOf } from './config.js'
import { keyInUrl, sentKey } from './sent-key.js'

let reader: Promise<typeof import('./read.js')> | undefined

export const apiKeyCredential: CredentialReader = {
  carries(config: ResolvedConfig, req: IncomingMessage): boolean {
    const options = apiKeysOf(config)
    return options !== undefined && (sentKey(options, req) !== undefined || keyInUrl(options, req))
  },
  async read(config, req) {
    return (await (reader ??= import('./read.js'))).readApiKey(config, req)
  },
}
