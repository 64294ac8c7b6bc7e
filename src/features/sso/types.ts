/**
 * What the SSO wing adds to the shared interfaces, by module augmentation: its provider in
 * `ProviderConfigs`, its adapter methods on `Adapter`, its events and its cookie; and the shapes its
 * functions return.
 */
import type { SsoConfig } from '../../providers/sso.js'
import type { Awaitable, CookieOption } from '../../types.js'

/**
 * What a connection's settings hold besides its protocol's: its SCIM bearer token's SHA-256 (never the
 * token) and when it was made (ISO 8601); absent when the connection has no token.
 */
export interface ScimSettings {
  readonly scimTokenHash?: string | undefined
  readonly scimTokenCreatedAt?: string | undefined
}

/** An OpenID Connect connection's settings. */
export interface OidcConnectionSettings extends ScimSettings {
  readonly issuer: string
  readonly clientId: string
  /** Sealed with the secret (`AUTH_SECRET`) as stored; never given out by the functions. */
  readonly clientSecret: string
  /** Scopes besides `openid` (default `profile email`). */
  readonly scopes: readonly string[]
}

/** A SAML connection's settings: the identity provider as its metadata describes it. */
export interface SamlConnectionSettings extends ScimSettings {
  readonly idpEntityId: string
  readonly ssoUrl: string
  /** Its signing certificates (PEM or base64), several during a rollover. */
  readonly certificates: readonly string[]
  /** Where the metadata was fetched from, when a URL was given. */
  readonly metadataUrl: string | null
  /** Whether a sign-in started at the identity provider is accepted (off by default). */
  readonly allowIdpInitiated: boolean
}

/** A connection as the adapter stores it. */
export interface AdapterSsoConnection {
  id: string
  organizationId: string
  type: 'oidc' | 'saml'
  name: string
  enabled: boolean
  /** The organization's members (and the addresses of its verified domains) sign in only through its connections. */
  ssoOnly: boolean
  /** The role given at a first sign-in through it (just-in-time membership). */
  defaultRole: string
  settings: OidcConnectionSettings | SamlConnectionSettings
  createdAt: Date
  updatedAt: Date
}

/** A domain an organization claims, as the adapter stores it. */
export interface AdapterSsoDomain {
  id: string
  organizationId: string
  /** Lower case, without a trailing dot. */
  domain: string
  /** The value of the TXT record that proves it. */
  token: string
  verifiedAt: Date | null
  verifiedBy: 'dns' | 'admin' | null
  createdAt: Date
}

/** A connection as the functions and JSON routes give it: never its client secret. */
export interface SsoConnection extends Pick<AdapterSsoConnection, 'id' | 'organizationId' | 'type' | 'name' | 'enabled' | 'ssoOnly' | 'defaultRole'> {
  /** OIDC: the issuer and client id. */
  oidc?: { issuer: string; clientId: string; scopes: string[] } | undefined
  /** SAML: the identity provider, and what to give it (this site's entity id, ACS URL and metadata URL). */
  saml?: { idpEntityId: string; ssoUrl: string; certificates: number; metadataUrl: string | null; allowIdpInitiated: boolean; spEntityId: string; acsUrl: string; spMetadataUrl: string } | undefined
  /** OIDC: the redirect URI to register at the identity provider. */
  redirectUri?: string | undefined
  /** SCIM provisioning: whether the connection has a token, since when, and the base URL to give the identity provider. */
  scim: { enabled: boolean; createdAt: string | null; baseUrl: string }
  createdAt: string
  updatedAt: string
}

/** A domain as the functions and JSON routes give it, with the DNS record that verifies it. */
export interface SsoDomain {
  id: string
  organizationId: string
  domain: string
  verified: boolean
  verifiedAt: string | null
  verifiedBy: 'dns' | 'admin' | null
  /** The TXT record to publish: its name and its value. */
  record: { type: 'TXT'; name: string; value: string }
  createdAt: string
}

declare module '../../types.js' {
  interface Adapter {
    /** Stores a new connection. */
    createSsoConnection?(connection: Omit<AdapterSsoConnection, 'id' | 'createdAt' | 'updatedAt'>): Promise<AdapterSsoConnection>
    getSsoConnection?(id: string): Promise<AdapterSsoConnection | null>
    /** The organization's connections, oldest first. */
    listSsoConnections?(organizationId: string): Promise<AdapterSsoConnection[]>
    /** Changes a connection; `null` when there is none. */
    updateSsoConnection?(id: string, changes: Partial<Pick<AdapterSsoConnection, 'name' | 'enabled' | 'ssoOnly' | 'defaultRole' | 'settings'>>): Promise<AdapterSsoConnection | null>
    /** Deletes a connection; false when there was none. */
    deleteSsoConnection?(id: string): Promise<boolean>
    /** Claims a domain for an organization, unverified; `'taken'` when the organization has it, or another has it verified. */
    createSsoDomain?(domain: Pick<AdapterSsoDomain, 'organizationId' | 'domain' | 'token'>): Promise<AdapterSsoDomain | 'taken'>
    /** A domain by its id; by its name, the organization's that verified it (unverified claims are not answered). */
    getSsoDomain?(by: { id: string } | { domain: string }): Promise<AdapterSsoDomain | null>
    listSsoDomains?(organizationId: string): Promise<AdapterSsoDomain[]>
    /** Marks a domain verified (`by`: how); `null` when there is none, `'taken'` when another organization verified it first. */
    verifySsoDomain?(id: string, at: Date, by: 'dns' | 'admin'): Promise<AdapterSsoDomain | 'taken' | null>
    deleteSsoDomain?(id: string): Promise<boolean>
    /**
     * The organizations whose enabled SSO-only connections bind this user: those they are a member of,
     * and the one whose verified domain is `domain` (the user's address's). Ids, without repeats.
     */
    ssoOnlyOrganizations?(userId: string | null, domain: string | null): Promise<string[]>
    /** Records a used SAML assertion until `expiresAt`; false when it was recorded already (a replay). */
    claimSsoAssertion?(key: string, expiresAt: Date): Promise<boolean>
    /** Deletes the recorded assertions expired at `now`; returns how many. */
    pruneSsoAssertions?(now: Date): Promise<number>
  }

  interface CookiesOptions {
    /** The sealed connection and SAML request of an SSO sign-in under way, valid 10 minutes, used once. */
    ssoSignIn: CookieOption
  }

  interface EventsOptions {
    /** An organization registered a connection. */
    ssoConnectionCreated?: ((message: { connection: SsoConnection; userId: string | null }) => Awaitable<void>) | undefined
    /** A connection was changed (enabled, disabled, SSO-only, its settings). */
    ssoConnectionUpdated?: ((message: { connection: SsoConnection; userId: string | null }) => Awaitable<void>) | undefined
    ssoConnectionDeleted?: ((message: { connectionId: string; organizationId: string; userId: string | null }) => Awaitable<void>) | undefined
    /** A domain was verified, by its DNS record or an administrator's word. */
    ssoDomainVerified?: ((message: { domain: SsoDomain; userId: string | null }) => Awaitable<void>) | undefined
    /**
     * The connection's identity provider provisioned a user over SCIM (POST /Users), or made a
     * deactivated one active again (`reactivated`): the user is a member of the organization.
     */
    ssoUserProvisioned?: ((message: { connectionId: string; organizationId: string; userId: string; externalId: string | null; reactivated: boolean }) => Awaitable<void>) | undefined
    /**
     * The connection's identity provider deprovisioned a user over SCIM (`active: false`, or DELETE):
     * their membership of the organization is gone and every session of theirs ended.
     */
    ssoUserDeprovisioned?: ((message: { connectionId: string; organizationId: string; userId: string; deleted: boolean; sessionsEnded: number }) => Awaitable<void>) | undefined
  }

  // A SCIM deprovisioning ends every session of the user.
  interface SessionRevocationCauses {
    scimDeprovisioned: true
  }
}

declare module '../../config/types.js' {
  interface ProviderConfigs {
    sso: SsoConfig
  }
}
