/**
 * Home-realm discovery: the connection that signs in an address, found by its domain. Only a
 * domain the organization verified counts, and only an enabled connection of that organization:
 * an unverified claim sends nobody anywhere.
 */
import type { ResolvedConfig } from '../../config/types.js'
import type { AdapterSsoConnection } from './types.js'
import { ssoAdapter } from './adapter.js'

/** The domain of an address, lower case; null when it is none. */
export function domainOfAddress(email: unknown): string | null {
  if (typeof email !== 'string') return null
  const at = email.lastIndexOf('@')
  if (at <= 0 || at === email.length - 1) return null
  return email.slice(at + 1).trim().toLowerCase().replace(/\.$/, '')
}

/** The enabled connection serving `email`'s verified domain (the oldest, when several), or null. */
export async function connectionForAddress(config: Pick<ResolvedConfig, 'adapter'>, email: unknown): Promise<AdapterSsoConnection | null> {
  const domain = domainOfAddress(email)
  if (domain === null) return null
  const adapter = ssoAdapter(config)
  const claimed = await adapter.getSsoDomain({ domain })
  if (!claimed?.verifiedAt) return null
  return (await adapter.listSsoConnections(claimed.organizationId)).find((connection) => connection.enabled) ?? null
}

/** The verified domains of an organization, lower case. */
export async function verifiedDomains(config: Pick<ResolvedConfig, 'adapter'>, organizationId: string): Promise<Set<string>> {
  return new Set((await ssoAdapter(config).listSsoDomains(organizationId)).filter((domain) => domain.verifiedAt !== null).map((domain) => domain.domain))
}
