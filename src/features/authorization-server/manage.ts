/**
 * The apps with access to a user's account: their grants (one per app, the consent the user gave),
 * listed with what they may do, and removed with every token issued under them. Without loading
 * oidc-provider: the grants and stored clients are the adapter's records.
 */
import type { ResolvedConfig } from '../../config/types.js'
import { emitEvent } from '../../events.js'
import { authorizationServerOf, recordsOf } from './config.js'
import { forgetGrant } from './grants.js'
import type { AdapterOAuthRecord, AuthorizedApp } from './types.js'

/** The scopes a grant's payload gives, OpenID Connect's and every API's. */
function grantedScopes(payload: Record<string, unknown>): string[] {
  const openid = (payload['openid'] as { scope?: string } | undefined)?.scope ?? ''
  const resources = Object.values((payload['resources'] as Record<string, string> | undefined) ?? {})
  return [...new Set([openid, ...resources].join(' ').split(' ').filter(Boolean))]
}

/** The client's name: from the config, else its stored metadata, else its id. */
async function clientName(config: ResolvedConfig, clientId: string): Promise<string> {
  const declared = authorizationServerOf(config)!.clients.find((client) => client.client_id === clientId)
  if (declared) return declared.client_name ?? clientId
  const stored = await recordsOf(config).findOAuthRecord('Client', clientId)
  const name = stored?.payload['client_name']
  return typeof name === 'string' && name ? name : clientId
}

/** The user's grants, by client. */
async function grantsByClient(config: ResolvedConfig, userId: string): Promise<Map<string, AdapterOAuthRecord[]>> {
  const byClient = new Map<string, AdapterOAuthRecord[]>()
  for (const grant of await recordsOf(config).listOAuthRecords(userId, 'Grant')) {
    const clientId = grant.payload['clientId']
    if (typeof clientId !== 'string') continue
    byClient.set(clientId, [...(byClient.get(clientId) ?? []), grant])
  }
  return byClient
}

/** The apps with access to the user's account, most recent grant first. */
export async function listApps(config: ResolvedConfig, userId: string): Promise<AuthorizedApp[]> {
  const apps: AuthorizedApp[] = []
  for (const [clientId, grants] of await grantsByClient(config, userId)) {
    const newest = Math.max(...grants.map((grant) => Number(grant.payload['iat'] ?? 0)))
    apps.push({ clientId, name: await clientName(config, clientId), scopes: [...new Set(grants.flatMap((grant) => grantedScopes(grant.payload)))], grantedAt: new Date(newest * 1000).toISOString() })
  }
  return apps.sort((a, b) => b.grantedAt.localeCompare(a.grantedAt))
}

/** Ends every grant of the user for the client, with every token issued under them: `true` when there was one. */
export async function revokeApp(config: ResolvedConfig, userId: string, clientId: string): Promise<boolean> {
  const grants = (await grantsByClient(config, userId)).get(clientId) ?? []
  for (const grant of grants) {
    await recordsOf(config).deleteOAuthGrant(grant.id)
    forgetGrant(config, grant.id)
  }
  if (grants.length > 0) await emitEvent(config, 'oauthAccessRevoked', { userId, clientId })
  return grants.length > 0
}
