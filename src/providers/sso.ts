/**
 * Enterprise single sign-on per organization: an organization registers its own identity provider
 * (OpenID Connect, or SAML 2.0 on `@node-saml/node-saml`), proves it owns its e-mail domains, and
 * its people sign in there. The sign-in page asks for the address first and sends `@acme.example`
 * to Acme's identity provider; a first sign-in makes the user a member of the organization. See
 * docs/sso.md.
 *
 * Needs the `organizations` option, an adapter with the SSO methods (`KnexAdapter` has them, after
 * the SSO migration), and `@node-saml/node-saml` installed for SAML connections.
 *
 * @example
 * ```ts
 * import SSO from 'portcullis/providers/sso'
 *
 * Portcullis({ organizations: true, providers: [SSO(), GitHub], adapter })
 * ```
 * @see https://docs.oasis-open.org/security/saml/v2.0/saml-profiles-2.0-os.pdf §4.1 (Web Browser SSO)
 * @see https://openid.net/specs/openid-connect-core-1_0.html
 */

/** Options of `SSO(...)`. */
export interface SsoOptions {
  /** Provider id, used in URLs (`/signin/<id>`, `/callback/<id>`). Default `sso`. */
  id?: string | undefined
  /** Shown on the sign-in page. Default `Single sign-on`. */
  name?: string | undefined
  /**
   * The role a user gets in the organization at their first sign-in through its connection (just-in-time
   * membership), unless the connection names another. Default `member`.
   */
  defaultRole?: string | undefined
  /**
   * How a domain is proven to be the organization's before its connections may sign in its addresses:
   * `dns` (default): a TXT record the organization publishes, checked by `verifyDomain()`; `dns-or-admin`:
   * also `markDomainVerified()`, which the app's own code calls for a domain it has checked otherwise.
   */
  domainVerification?: 'dns' | 'dns-or-admin' | undefined
  /** The DNS servers the TXT check asks (`['1.1.1.1']`). Default: the system's resolvers. */
  dnsServers?: readonly string[] | undefined
  /** Seconds a SAML assertion's times may be off this server's clock. Default 60, at most 300. */
  clockSkewSeconds?: number | undefined
  /** Connections per organization. Default 5. */
  maxConnectionsPerOrganization?: number | undefined
  /**
   * Accept identity providers on `http:` URLs and on private, loopback or link-local addresses (a
   * local development IdP). Off by default: a connection's issuer or metadata URL is fetched by this
   * server, so an organization admin could otherwise make it ask the app's internal network (SSRF).
   */
  dangerouslyAllowInternalUrls?: boolean | undefined
}

/** The SSO provider as written in the config. */
export interface SsoConfig {
  readonly id: string
  readonly name: string
  readonly type: 'sso'
  readonly defaultRole?: string | undefined
  readonly domainVerification?: 'dns' | 'dns-or-admin' | undefined
  readonly dnsServers?: readonly string[] | undefined
  readonly clockSkewSeconds?: number | undefined
  readonly maxConnectionsPerOrganization?: number | undefined
  readonly dangerouslyAllowInternalUrls?: boolean | undefined
}

/**
 * Creates the SSO provider.
 *
 * @param options Its id and name, the default role, how domains are verified, the SAML clock skew.
 * @example
 * ```ts
 * import SSO from 'portcullis/providers/sso'
 *
 * SSO({ defaultRole: 'member', domainVerification: 'dns' })
 * ```
 */
export default function SSO(options: SsoOptions = {}): SsoConfig {
  return Object.freeze({
    id: options.id ?? 'sso',
    name: options.name ?? 'Single sign-on',
    type: 'sso',
    defaultRole: options.defaultRole,
    domainVerification: options.domainVerification,
    dnsServers: options.dnsServers && Object.freeze([...options.dnsServers]),
    clockSkewSeconds: options.clockSkewSeconds,
    maxConnectionsPerOrganization: options.maxConnectionsPerOrganization,
    dangerouslyAllowInternalUrls: options.dangerouslyAllowInternalUrls,
  })
}
