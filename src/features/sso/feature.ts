/**
 * Enterprise single sign-on per organization (the `SSO()` provider, `portcullis/providers/sso`): an
 * organization registers its own identity provider (OpenID Connect, or SAML 2.0 on
 * `@node-saml/node-saml`), proves its e-mail domains by DNS, and its people sign in there; the
 * sign-in page asks for the address first (home-realm discovery). Everything past this declaration
 * loads on the first sign-in, SAML response or management call; the SAML engine on a SAML
 * connection's first use.
 */
import type { Feature } from '../../composition/index.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { SsoConfig } from '../../providers/sso.js'
import { organizationsOf } from '../organizations/config.js'
import { createCreateSsoConnection, createDeleteSsoConnection, createListSsoConnections, createUpdateSsoConnection, type CreateSsoConnectionFunction, type DeleteSsoConnectionFunction, type ListSsoConnectionsFunction, type UpdateSsoConnectionFunction } from './api/connections.js'
import { createAddSsoDomain, createListSsoDomains, createMarkSsoDomainVerified, createRemoveSsoDomain, createVerifySsoDomain, type AddSsoDomainFunction, type ListSsoDomainsFunction, type MarkSsoDomainVerifiedFunction, type RemoveSsoDomainFunction, type VerifySsoDomainFunction } from './api/domains.js'
import { createCreateSsoScimToken, createRevokeSsoScimToken, type CreateSsoScimTokenFunction, type RevokeSsoScimTokenFunction } from './api/scim-token.js'
import { resolveSsoProvider, SSO_ADAPTER_METHODS, ssoProviderOf, type SsoProvider } from './config.js'
import { markProvider } from './scim/mark.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface SsoApi {
  /** An organization's identity providers (`organization: ['update']`). */
  listSsoConnections: ListSsoConnectionsFunction
  /** Registers an OIDC or SAML identity provider for an organization (CSRF-checked). */
  createSsoConnection: CreateSsoConnectionFunction
  /** Changes a connection: enabled, SSO-only, its role, its secret or metadata (CSRF-checked). */
  updateSsoConnection: UpdateSsoConnectionFunction
  /** Removes a connection (CSRF-checked). */
  deleteSsoConnection: DeleteSsoConnectionFunction
  /** An organization's domains, with the TXT record each needs. */
  listSsoDomains: ListSsoDomainsFunction
  /** Claims a domain for an organization, unverified (CSRF-checked). */
  addSsoDomain: AddSsoDomainFunction
  /** Checks a domain's TXT record and marks it verified (CSRF-checked). */
  verifySsoDomain: VerifySsoDomainFunction
  /** Removes a domain (CSRF-checked). */
  removeSsoDomain: RemoveSsoDomainFunction
  /** Marks a domain verified on the app's word (`domainVerification: 'dns-or-admin'`). */
  markSsoDomainVerified: MarkSsoDomainVerifiedFunction
  /** Makes a connection's SCIM bearer token, given once (CSRF-checked). */
  createSsoScimToken: CreateSsoScimTokenFunction
  /** Revokes a connection's SCIM token (CSRF-checked). */
  revokeSsoScimToken: RevokeSsoScimTokenFunction
}

export const ssoFeature: Feature = {
  name: 'sso',
  requires: ['organizations', 'oauth'],
  providers: {
    kind: 'sso',
    types: ['sso'],
    single: 'Two SSO providers are configured: one serves every organization\'s connections (its routes, /saml-acs and /sso, are shared).',
    claims: (provider) => provider.type === 'sso',
    resolve: (provider: SsoConfig) => resolveSsoProvider(provider),
    start: async () => (await import('./start.js')).startSsoSignIn,
    callback: async () => (await import('./routes/oidc-callback.js')).ssoOidcCallback,
    resume: async () => (await import('./resume.js')).resumeSsoSignIn,
    // Its form asks the work address and posts to /signin/<id>, which finds the organization's identity provider.
    signInPage: () => ({ posts: 'signin' }),
  },
  check(config) {
    const sso = ssoProviderOf(config) as SsoProvider
    const organizations = organizationsOf(config)
    if (!organizations) throw new InvalidConfigurationError(`Provider "${sso.id}" (SSO) needs the organizations option: a connection belongs to an organization. Set Portcullis({ organizations: true }). See docs/sso.md.`)
    if (!organizations.roleNames.includes(sso.defaultRole)) {
      throw new InvalidConfigurationError(`Provider "${sso.id}" (SSO): defaultRole ${JSON.stringify(sso.defaultRole)} is not an organization role (${organizations.roleNames.join(', ')}). See docs/sso.md.`)
    }
    const adapter = config.adapter as Record<string, unknown> | undefined
    const missing = [...SSO_ADAPTER_METHODS, 'getUserByAccount', 'linkAccount'].filter((method) => typeof adapter?.[method] !== 'function')
    if (missing.length > 0) throw new InvalidConfigurationError(`Provider "${sso.id}" (SSO) needs an adapter with ${missing.join(', ')} (KnexAdapter has them, after the SSO migration). See docs/sso.md.`)
  },
  routes: [
    { method: 'GET', path: '/sso', page: true, load: async () => (await import('./routes/page.js')).ssoPageAction },
    { method: 'POST', path: '/sso/connections', csrf: true, load: async () => (await import('./routes/connection-create.js')).createConnectionAction },
    { method: 'POST', path: '/sso/connections/update', csrf: true, load: async () => (await import('./routes/connection-update.js')).updateConnectionAction },
    { method: 'POST', path: '/sso/connections/delete', csrf: true, load: async () => (await import('./routes/connection-delete.js')).deleteConnectionAction },
    { method: 'POST', path: '/sso/connections/scim-token', csrf: true, load: async () => (await import('./routes/scim-token-create.js')).createScimTokenAction },
    { method: 'POST', path: '/sso/connections/scim-token/delete', csrf: true, load: async () => (await import('./routes/scim-token-delete.js')).revokeScimTokenAction },
    { method: 'POST', path: '/sso/domains', csrf: true, load: async () => (await import('./routes/domain-add.js')).addDomainAction },
    { method: 'POST', path: '/sso/domains/verify', csrf: true, load: async () => (await import('./routes/domain-verify.js')).verifyDomainAction },
    { method: 'POST', path: '/sso/domains/delete', csrf: true, load: async () => (await import('./routes/domain-delete.js')).deleteDomainAction },
    {
      method: 'POST',
      path: '/saml-acs/:provider',
      boundBy: "the sealed SSO sign-in cookie's AuthnRequest id, which the signed assertion's InResponseTo must name; an unsolicited response only where the connection allows IdP-initiated sign-in",
      load: async () => (await import('./routes/saml-acs.js')).samlAcs as never,
    },
    { method: 'GET', path: '/saml-metadata/:provider', load: async () => (await import('./routes/saml-metadata.js')).samlMetadata as never },
    { method: 'GET', path: '/saml-continue.js', page: true, load: async () => (await import('./routes/continue-script.js')).continueScript },
  ],
  off: 'Single sign-on is off: add SSO() from portcullis/providers/sso to the providers (with the organizations option and the SSO migration) to use its routes.',
  hooks: {
    beforeSession: async (ctx, user, account) => {
      const sso = ssoProviderOf(ctx.config)
      if (sso) await (await import('./hooks.js')).beforeSsoSession(ctx, sso, user, account)
    },
    // The SCIM marks (scim/mark.ts) say the connection's IdP provisioned the user: theirs to keep, not the user's to remove.
    keepsAccount: (config, account) => {
      const sso = ssoProviderOf(config)
      return sso !== undefined && account.provider === markProvider(sso.id)
    },
    prune: async (config) => ({ ssoAssertions: await (await import('./adapter.js')).ssoAdapter(config).pruneSsoAssertions(new Date()) }),
  },
  api: (api): SsoApi => ({
    listSsoConnections: createListSsoConnections(api),
    createSsoConnection: createCreateSsoConnection(api),
    updateSsoConnection: createUpdateSsoConnection(api),
    deleteSsoConnection: createDeleteSsoConnection(api),
    listSsoDomains: createListSsoDomains(api),
    addSsoDomain: createAddSsoDomain(api),
    verifySsoDomain: createVerifySsoDomain(api),
    removeSsoDomain: createRemoveSsoDomain(api),
    markSsoDomainVerified: createMarkSsoDomainVerified(api),
    createSsoScimToken: createCreateSsoScimToken(api),
    revokeSsoScimToken: createRevokeSsoScimToken(api),
  }),
  // SCIM 2.0 provisioning (RFC 7643/7644), authenticated by a connection's bearer token only.
  mount: { path: '/scim/v2', load: async () => (await import('./scim/mount.js')).scimMount },
  adapterMethods: [...SSO_ADAPTER_METHODS],
  events: ['ssoConnectionCreated', 'ssoConnectionUpdated', 'ssoConnectionDeleted', 'ssoDomainVerified', 'ssoUserProvisioned', 'ssoUserDeprovisioned'],
  errors: ['SSO', 'SamlResponse'],
  cookies: { ssoSignIn: { name: 'authjs.sso-sign-in', maxAge: 10 * 60 } },
}
