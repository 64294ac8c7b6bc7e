/**
 * The `SSO` provider, resolved once at init into a frozen object: the default role, how domains are
 * verified, the DNS servers, the SAML clock skew and the network rule for identity providers' URLs.
 */
import { isIP } from 'node:net'
import { InvalidConfigurationError } from '../../errors.js'
import type { ResolvedConfig } from '../../config/types.js'
import type { SsoConfig } from '../../providers/sso.js'

/** The resolved provider, as `config.providerById` holds it. */
export interface SsoProvider {
  readonly id: string
  readonly name: string
  readonly type: 'sso'
  readonly defaultRole: string
  readonly domainVerification: 'dns' | 'dns-or-admin'
  readonly dnsServers: readonly string[] | undefined
  readonly clockSkewSeconds: number
  readonly maxConnectionsPerOrganization: number
  readonly allowInternalUrls: boolean
}

/** The adapter methods the wing calls. */
export const SSO_ADAPTER_METHODS = [
  'createSsoConnection',
  'getSsoConnection',
  'listSsoConnections',
  'updateSsoConnection',
  'deleteSsoConnection',
  'createSsoDomain',
  'getSsoDomain',
  'listSsoDomains',
  'verifySsoDomain',
  'deleteSsoDomain',
  'ssoOnlyOrganizations',
  'claimSsoAssertion',
  'pruneSsoAssertions',
] as const

/** @throws InvalidConfigurationError naming the option to fix. */
export function resolveSsoProvider(input: SsoConfig): SsoProvider {
  const where = `Provider "${input.id}" (SSO)`
  const fail = (message: string): never => {
    throw new InvalidConfigurationError(`${where}: ${message} See docs/sso.md.`)
  }
  const defaultRole = input.defaultRole ?? 'member'
  if (typeof defaultRole !== 'string' || defaultRole === '') fail('defaultRole must be the name of a role of the organizations option.')
  const domainVerification = input.domainVerification ?? 'dns'
  if (domainVerification !== 'dns' && domainVerification !== 'dns-or-admin') fail(`domainVerification must be "dns" or "dns-or-admin"; got ${JSON.stringify(domainVerification)}.`)
  if (input.dnsServers !== undefined && (!Array.isArray(input.dnsServers) || input.dnsServers.length === 0 || input.dnsServers.some((server) => typeof server !== 'string' || isIP(server.replace(/^\[|\](:\d+)?$/g, '').replace(/:\d+$/, '')) === 0))) {
    fail('dnsServers must be a non-empty list of IP addresses (with an optional :port), e.g. ["1.1.1.1"].')
  }
  const clockSkewSeconds = input.clockSkewSeconds ?? 60
  if (!Number.isInteger(clockSkewSeconds) || clockSkewSeconds < 0 || clockSkewSeconds > 300) fail(`clockSkewSeconds must be a whole number from 0 to 300; got ${JSON.stringify(clockSkewSeconds)}.`)
  const maxConnectionsPerOrganization = input.maxConnectionsPerOrganization ?? 5
  if (!Number.isInteger(maxConnectionsPerOrganization) || maxConnectionsPerOrganization < 1) fail('maxConnectionsPerOrganization must be a whole number of at least 1.')
  return Object.freeze({
    id: input.id,
    name: input.name,
    type: 'sso',
    defaultRole,
    domainVerification,
    dnsServers: input.dnsServers && Object.freeze([...input.dnsServers]),
    clockSkewSeconds,
    maxConnectionsPerOrganization,
    allowInternalUrls: input.dangerouslyAllowInternalUrls === true,
  })
}

/** The configured SSO provider (there is at most one: the feature's `single`), or undefined. */
export function ssoProviderOf(config: Pick<ResolvedConfig, 'providers'>): SsoProvider | undefined {
  return config.providers.find((provider) => provider.type === 'sso') as SsoProvider | undefined
}
