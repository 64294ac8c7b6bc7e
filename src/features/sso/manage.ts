/**
 * The SSO wing's engine for an organization's admins: its connections (registered, changed, removed)
 * and its domains (claimed, verified, removed), each call checked against the caller's membership
 * read fresh from the database, with `organization: ['update']` (the organization's owners and
 * admins). An OIDC connection is discovered before it is stored, a SAML one's metadata read: a
 * connection that cannot work is refused with the reason, not stored. Loaded on the first call.
 */
import { randomBytes } from 'node:crypto'
import { domainToASCII } from 'node:url'
import type { ResolvedConfig } from '../../config/types.js'
import { emitEvent } from '../../events.js'
import { membershipOf, type Caller } from '../organizations/call.js'
import { OrganizationError } from '../organizations/errors.js'
import { clientConfiguration } from '../oauth/client.js'
import type { SsoProvider } from './config.js'
import { ssoAdapter, type SsoAdapter } from './adapter.js'
import { connectionShape, domainShape, isOidc, isSaml, oidcProviderOf, sealClientSecret } from './connection.js'
import { hasVerificationRecord } from './dns.js'
import { SsoError } from './errors.js'
import { checkedIdpUrl, fetchMetadata } from './network.js'
import type { AdapterSsoConnection, AdapterSsoDomain, OidcConnectionSettings, SamlConnectionSettings, SsoConnection, SsoDomain } from './types.js'

/** What registering a connection takes: the common fields, and the protocol's. */
export type NewSsoConnection = {
  organizationId: string
  name: string
  /** Default: the SSO provider's `defaultRole`. */
  defaultRole?: string | undefined
  /** Members (and the verified domains' addresses) sign in only through the organization's connections. Default false. */
  ssoOnly?: boolean | undefined
  /** Default true. */
  enabled?: boolean | undefined
} & (
  | { type: 'oidc'; issuer: string; clientId: string; clientSecret: string; scopes?: readonly string[] | undefined }
  | { type: 'saml'; metadataXml?: string | undefined; metadataUrl?: string | undefined; allowIdpInitiated?: boolean | undefined }
)

/** What changing one takes: any of these (a SAML connection's metadata again, an OIDC one's secret). */
export interface SsoConnectionChanges {
  name?: string | undefined
  defaultRole?: string | undefined
  ssoOnly?: boolean | undefined
  enabled?: boolean | undefined
  clientSecret?: string | undefined
  metadataXml?: string | undefined
  metadataUrl?: string | undefined
  allowIdpInitiated?: boolean | undefined
}

const MANAGE = { organization: ['update'] }
const MAX_METADATA = 512 * 1024

/** The connection and the caller's right to manage it. @throws OrganizationError `not_found`, `forbidden` */
export async function managedConnection(caller: Caller, connectionId: unknown): Promise<AdapterSsoConnection> {
  const connection = typeof connectionId === 'string' && connectionId !== '' ? await ssoAdapter(caller.ctx.config).getSsoConnection(connectionId) : null
  if (!connection) throw new OrganizationError('not_found', 'No such connection among your organizations.')
  await membershipOf(caller, connection.organizationId, MANAGE)
  return connection
}

/** The organization's connections. */
export async function listConnections(caller: Caller, sso: SsoProvider, organizationId: unknown): Promise<SsoConnection[]> {
  const { organization } = await membershipOf(caller, organizationId, MANAGE)
  return (await ssoAdapter(caller.ctx.config).listSsoConnections(organization.id)).map((connection) => connectionShape(caller.ctx, sso, connection))
}

/** Registers a connection. @throws SsoError `invalid_input`, `invalid_metadata`; OrganizationError `limit_reached` */
export async function createConnection(caller: Caller, sso: SsoProvider, input: NewSsoConnection): Promise<SsoConnection> {
  if (!input || typeof input !== 'object') throw new SsoError('invalid_input', 'Give the connection: { organizationId, name, type, … }.')
  const { organization } = await membershipOf(caller, input.organizationId, MANAGE)
  const adapter = ssoAdapter(caller.ctx.config)
  const existing = await adapter.listSsoConnections(organization.id)
  if (existing.length >= sso.maxConnectionsPerOrganization) throw new OrganizationError('limit_reached', `The organization has ${existing.length} connections, the most it may (maxConnectionsPerOrganization).`)
  const common = {
    organizationId: organization.id,
    name: checkedName(input.name),
    defaultRole: checkedRole(caller, input.defaultRole ?? sso.defaultRole),
    ssoOnly: flag(input.ssoOnly, 'ssoOnly', false),
    enabled: flag(input.enabled, 'enabled', true),
  }
  let created: AdapterSsoConnection
  if (input.type === 'oidc') {
    const settings = oidcSettings(caller.ctx.config, sso, input)
    await discoverable(caller.ctx.config, sso, { ...common, type: 'oidc', settings, id: 'unsaved', createdAt: new Date(0), updatedAt: new Date(0) })
    created = await adapter.createSsoConnection({ ...common, type: 'oidc', settings })
  } else if (input.type === 'saml') {
    created = await adapter.createSsoConnection({ ...common, type: 'saml', settings: await samlSettings(sso, input, flag(input.allowIdpInitiated, 'allowIdpInitiated', false)) })
  } else throw new SsoError('invalid_input', 'type must be "oidc" or "saml".')
  const connection = connectionShape(caller.ctx, sso, created)
  await emitEvent(caller.ctx.config, 'ssoConnectionCreated', { connection, userId: caller.userId })
  return connection
}

/** Changes a connection. @throws SsoError `invalid_input`, `invalid_metadata`; OrganizationError `not_found`, `forbidden` */
export async function updateConnection(caller: Caller, sso: SsoProvider, connectionId: unknown, changes: SsoConnectionChanges): Promise<SsoConnection> {
  const current = await managedConnection(caller, connectionId)
  const given = changes ?? {}
  const update: Parameters<SsoAdapter['updateSsoConnection']>[1] = {}
  if (given.name !== undefined) update.name = checkedName(given.name)
  if (given.defaultRole !== undefined) update.defaultRole = checkedRole(caller, given.defaultRole)
  if (given.ssoOnly !== undefined) update.ssoOnly = flag(given.ssoOnly, 'ssoOnly', false)
  if (given.enabled !== undefined) update.enabled = flag(given.enabled, 'enabled', true)
  if (isOidc(current) && given.clientSecret !== undefined) {
    update.settings = { ...current.settings, clientSecret: sealClientSecret(caller.ctx.config, checkedText(given.clientSecret, 'clientSecret')) }
  }
  if (isSaml(current) && (given.metadataXml !== undefined || given.metadataUrl !== undefined || given.allowIdpInitiated !== undefined)) {
    const allowIdpInitiated = flag(given.allowIdpInitiated, 'allowIdpInitiated', current.settings.allowIdpInitiated)
    // New metadata keeps the connection's SCIM token (its hash lives in the same settings).
    const { scimTokenHash, scimTokenCreatedAt } = current.settings
    update.settings =
      given.metadataXml !== undefined || given.metadataUrl !== undefined
        ? { ...(await samlSettings(sso, given, allowIdpInitiated)), ...(scimTokenHash !== undefined && { scimTokenHash, scimTokenCreatedAt }) }
        : { ...current.settings, allowIdpInitiated }
  }
  const updated = await ssoAdapter(caller.ctx.config).updateSsoConnection(current.id, update)
  if (!updated) throw new OrganizationError('not_found', 'No such connection among your organizations.')
  const connection = connectionShape(caller.ctx, sso, updated)
  await emitEvent(caller.ctx.config, 'ssoConnectionUpdated', { connection, userId: caller.userId })
  return connection
}

/** Removes a connection: its users keep their accounts and memberships, and sign in another way. Returns its organization's id. */
export async function deleteConnection(caller: Caller, connectionId: unknown): Promise<string> {
  const current = await managedConnection(caller, connectionId)
  await ssoAdapter(caller.ctx.config).deleteSsoConnection(current.id)
  await emitEvent(caller.ctx.config, 'ssoConnectionDeleted', { connectionId: current.id, organizationId: current.organizationId, userId: caller.userId })
  return current.organizationId
}

/** The organization's domains, with the DNS record each needs. */
export async function listDomains(caller: Caller, organizationId: unknown): Promise<SsoDomain[]> {
  const { organization } = await membershipOf(caller, organizationId, MANAGE)
  return (await ssoAdapter(caller.ctx.config).listSsoDomains(organization.id)).map(domainShape)
}

/** Claims a domain for the organization, unverified, with its TXT record to publish. @throws SsoError `invalid_input`, `domain_taken` */
export async function addDomain(caller: Caller, organizationId: unknown, domain: unknown): Promise<SsoDomain> {
  const { organization } = await membershipOf(caller, organizationId, MANAGE)
  const name = normalizedDomain(domain)
  const created = await ssoAdapter(caller.ctx.config).createSsoDomain({ organizationId: organization.id, domain: name, token: randomBytes(16).toString('hex') })
  if (created === 'taken') throw new SsoError('domain_taken', `The domain ${name} is claimed already: by this organization, or verified by another.`)
  return domainShape(created)
}

/** Checks the domain's TXT record, and marks it verified when it holds the token. @throws SsoError `domain_unverified`, `domain_taken` */
export async function verifyDomain(caller: Caller, sso: SsoProvider, domainId: unknown): Promise<SsoDomain> {
  const domain = await managedDomain(caller, domainId)
  if (domain.verifiedAt) return domainShape(domain)
  if (!(await hasVerificationRecord(domain.domain, domain.token, sso.dnsServers))) {
    throw new SsoError('domain_unverified', `No TXT record _portcullis-sso.${domain.domain} with this domain's value was found. DNS changes can take a while to be seen; try again later.`)
  }
  return markVerified(caller.ctx.config, domain, 'dns', caller.userId)
}

/**
 * Marks a domain verified on the app's word (`domainVerification: 'dns-or-admin'`), for a domain the
 * app has checked another way. Server-side only: no route calls it.
 * @throws InvalidConfigurationError-like SsoError `forbidden` when the provider verifies by DNS only.
 */
export async function markDomainVerified(config: ResolvedConfig, sso: SsoProvider, domainId: unknown): Promise<SsoDomain> {
  if (sso.domainVerification !== 'dns-or-admin') throw new SsoError('forbidden', 'markDomainVerified() needs SSO({ domainVerification: "dns-or-admin" }): this app verifies domains by their DNS record only.')
  const domain = typeof domainId === 'string' && domainId !== '' ? await ssoAdapter(config).getSsoDomain({ id: domainId }) : null
  if (!domain) throw new SsoError('not_found', 'No such domain.')
  if (domain.verifiedAt) return domainShape(domain)
  return markVerified(config, domain, 'admin', null)
}

/** Removes a domain: its addresses are no longer sent to the organization's connections. Returns its organization's id. */
export async function removeDomain(caller: Caller, domainId: unknown): Promise<string> {
  const domain = await managedDomain(caller, domainId)
  await ssoAdapter(caller.ctx.config).deleteSsoDomain(domain.id)
  return domain.organizationId
}

async function markVerified(config: ResolvedConfig, domain: AdapterSsoDomain, by: 'dns' | 'admin', userId: string | null): Promise<SsoDomain> {
  const verified = await ssoAdapter(config).verifySsoDomain(domain.id, new Date(Date.now()), by)
  if (verified === 'taken') throw new SsoError('domain_taken', `Another organization verified ${domain.domain} first.`)
  if (!verified) throw new SsoError('not_found', 'No such domain.')
  const shape = domainShape(verified)
  await emitEvent(config, 'ssoDomainVerified', { domain: shape, userId })
  return shape
}

async function managedDomain(caller: Caller, domainId: unknown): Promise<AdapterSsoDomain> {
  const domain = typeof domainId === 'string' && domainId !== '' ? await ssoAdapter(caller.ctx.config).getSsoDomain({ id: domainId }) : null
  if (!domain) throw new OrganizationError('not_found', 'No such domain among your organizations.')
  await membershipOf(caller, domain.organizationId, MANAGE)
  return domain
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** A domain name as stored: lower case, IDNA (punycode), no trailing dot, two labels at least. @throws SsoError `invalid_input` */
export function normalizedDomain(value: unknown): string {
  const given = typeof value === 'string' ? value.trim().replace(/\.$/, '') : ''
  const ascii = given === '' ? '' : domainToASCII(given)
  const labels = ascii.split('.')
  if (ascii.length === 0 || ascii.length > 253 || labels.length < 2 || !labels.every((label) => LABEL.test(label)) || /^\d+$/.test(labels.at(-1)!)) {
    throw new SsoError('invalid_input', `domain must be a domain name such as acme.example; got ${JSON.stringify(typeof value === 'string' ? value.slice(0, 100) : value)}.`)
  }
  return ascii
}

function checkedName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 255) throw new SsoError('invalid_input', 'name must be a non-empty text of at most 255 characters.')
  return value.trim()
}

function checkedText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '' || value.length > 2048) throw new SsoError('invalid_input', `${field} must be a non-empty text.`)
  return value
}

function checkedRole(caller: Caller, role: unknown): string {
  if (typeof role !== 'string' || !caller.options.roleNames.includes(role)) throw new SsoError('invalid_input', `defaultRole must be one of the organization roles (${caller.options.roleNames.join(', ')}).`)
  return role
}

function flag(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw new SsoError('invalid_input', `${field} must be true or false.`)
  return value
}

function oidcSettings(config: ResolvedConfig, sso: SsoProvider, input: { issuer: unknown; clientId: unknown; clientSecret: unknown; scopes?: unknown }): OidcConnectionSettings {
  // Kept as given: the discovered document's issuer must equal it to the character (OIDC Discovery §4.3).
  checkedIdpUrl(input.issuer, 'issuer', sso.allowInternalUrls)
  const issuer = input.issuer as string
  const scopes = input.scopes ?? ['profile', 'email']
  if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))) throw new SsoError('invalid_input', 'scopes must be a list of scope names, e.g. ["profile", "email"].')
  return {
    issuer,
    clientId: checkedText(input.clientId, 'clientId'),
    clientSecret: sealClientSecret(config, checkedText(input.clientSecret, 'clientSecret')),
    scopes: (scopes as string[]).filter((scope) => scope !== 'openid'),
  }
}

/** Discovery of an OIDC connection's issuer, before it is stored. @throws SsoError `invalid_metadata` */
async function discoverable(config: ResolvedConfig, sso: SsoProvider, connection: AdapterSsoConnection & { settings: OidcConnectionSettings }): Promise<void> {
  try {
    await clientConfiguration(oidcProviderOf(config, sso, connection, false))
  } catch (error) {
    throw new SsoError('invalid_metadata', `The issuer ${connection.settings.issuer} could not be discovered: ${(error as Error).message}`, { cause: error })
  }
}

async function samlSettings(sso: SsoProvider, input: { metadataXml?: unknown; metadataUrl?: unknown }, allowIdpInitiated: boolean): Promise<SamlConnectionSettings> {
  let xml: string
  let metadataUrl: string | null = null
  if (typeof input.metadataXml === 'string' && input.metadataXml !== '') xml = input.metadataXml
  else if (input.metadataUrl !== undefined) {
    const url = checkedIdpUrl(input.metadataUrl, 'metadataUrl', sso.allowInternalUrls)
    xml = await fetchMetadata(url, sso.allowInternalUrls)
    metadataUrl = url.href
  } else throw new SsoError('invalid_input', 'A SAML connection needs metadataXml (the identity provider\'s metadata) or metadataUrl.')
  if (xml.length > MAX_METADATA) throw new SsoError('invalid_metadata', 'The metadata is larger than 512 KiB.')
  const { parseIdpMetadata } = await import('./saml/index.js')
  const idp = parseIdpMetadata(xml, { allowInsecure: sso.allowInternalUrls })
  return { idpEntityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: [...idp.certificates], metadataUrl, allowIdpInitiated }
}
