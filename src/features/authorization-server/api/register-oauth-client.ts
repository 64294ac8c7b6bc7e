/** The server-side `registerOAuthClient(metadata)`. */
import { randomBytes } from 'node:crypto'
import type { Api } from '../../../api/context.js'
import { authorizationServerOf, recordsOf } from '../config.js'
import { AuthorizationServerError } from '../errors.js'
import type { AuthorizationServerClient } from '../types.js'
import { assertAuthorizationServer } from './context.js'

/**
 * Stores a new client of the authorization server (a partner's app, a team's service), checked as
 * oidc-provider checks the declared ones. Without a `client_id` one is generated; a confidential
 * client (any `token_endpoint_auth_method` but `none`) without a `client_secret` is given a random
 * one of 256 bits. Returns the metadata stored, the secret included: show it once, to whoever
 * registers the client. A server-side function for an administrator's route or script: it does not
 * check who calls it.
 *
 * @throws AuthorizationServerError `invalid_client_metadata`, `client_exists`; UnknownActionError
 * @example
 * ```ts
 * const client = await registerOAuthClient({ client_name: 'Partner reports', redirect_uris: ['https://partner.example/callback'] })
 * console.log(client.client_id, client.client_secret)
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc7591#section-2
 */
export type RegisterOAuthClientFunction = (metadata: Omit<AuthorizationServerClient, 'client_id'> & { client_id?: string | undefined }) => Promise<AuthorizationServerClient>

export function createRegisterOAuthClient(api: Api): RegisterOAuthClientFunction {
  return async (metadata) => {
    assertAuthorizationServer(api.config, 'registerOAuthClient()')
    if (metadata === null || typeof metadata !== 'object') throw new TypeError('registerOAuthClient(metadata): metadata must be an object of client metadata (RFC 7591).')
    const clientId = metadata.client_id ?? randomBytes(16).toString('base64url')
    const confidential = (metadata.token_endpoint_auth_method ?? 'client_secret_basic') !== 'none'
    const client: AuthorizationServerClient = { ...structuredClone(metadata), client_id: clientId, ...(confidential && !metadata.client_secret && { client_secret: randomBytes(32).toString('base64url') }) }
    if (authorizationServerOf(api.config)!.clients.some((declared) => declared.client_id === clientId) || (await recordsOf(api.config).findOAuthRecord('Client', clientId))) {
      throw new AuthorizationServerError('client_exists', `registerOAuthClient(): a client "${clientId}" exists already.`)
    }
    const { serverOf } = await import('../provider.js')
    try {
      await (await serverOf(api.config)).provider.Client.validate(client as never)
    } catch (error) {
      const { error_description: description, message } = error as { error_description?: string; message?: string }
      throw new AuthorizationServerError('invalid_client_metadata', `registerOAuthClient(): ${description ?? message ?? 'the metadata is not valid'}.`)
    }
    await recordsOf(api.config).upsertOAuthRecord({ model: 'Client', id: clientId, payload: client as unknown as Record<string, unknown>, expiresAt: null })
    return client
  }
}
