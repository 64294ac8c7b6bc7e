/**
 * Sign in with Microsoft Entra ID (formerly Azure AD): work and school accounts, and personal
 * Microsoft accounts, through the Microsoft identity platform v2.0 endpoint, an OpenID Provider
 * with one issuer per tenant: `https://login.microsoftonline.com/<tenant>/v2.0`.
 *
 * The `tenantId` decides who can sign in: `common` (any organization, and personal accounts; the
 * default), `organizations` (any organization), `consumers` (personal accounts), or one tenant (its
 * GUID or domain, e.g. `contoso.onmicrosoft.com`). For `common` and `organizations`, Microsoft's
 * discovery document names the issuer as the template `https://login.microsoftonline.com/{tenantid}/v2.0`
 * and each ID token carries its own tenant's issuer: openid-client recognizes discovery at
 * `login.microsoftonline.com` and then expects, for each ID token, the template with that token's
 * `tid` filled in, so the issuer is still checked exactly, and only for Microsoft's own host. Any
 * tenant's users are then let in: to admit only some tenants, check `profile.tid` in the `signIn`
 * callback. National clouds (e.g. `login.microsoftonline.us`) work with one tenant's issuer given as
 * `issuer`, not with the multi-tenant values.
 *
 * The profile photo is not in the token: it is `GET https://graph.microsoft.com/v1.0/me/photos/<size>/$value`
 * with an access token for Microsoft Graph (scope `User.Read`), binary image data. Fetch it in your
 * own `profile` if you need it (and store it somewhere other than the session cookie).
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import MicrosoftEntraID from 'portcullis/providers/microsoft-entra-id'
 *
 * // AUTH_MICROSOFT_ENTRA_ID_ID (the Application (client) ID), AUTH_MICROSOFT_ENTRA_ID_SECRET, and
 * // AUTH_MICROSOFT_ENTRA_ID_TENANT_ID (default "common"). In the app registration, add
 * // https://<your-site>/api/auth/callback/microsoft-entra-id as a "Web" redirect URI.
 * const { handlers, auth } = Portcullis({ providers: [MicrosoftEntraID] })
 * MicrosoftEntraID({ tenantId: 'contoso.onmicrosoft.com' })
 * ```
 * @see https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc
 * @see https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference
 * @see https://learn.microsoft.com/en-us/graph/api/profilephoto-get
 */
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'tenantId option (common, organizations, consumers, a tenant); multi-tenant issuer checked per token tid; e-mail only with the optional xms_edov claim (domain verified)'

/** Env variables read beyond the standard ones: the tenant. */
export const extraEnv = ['AUTH_MICROSOFT_ENTRA_ID_TENANT_ID'] as const

/**
 * The claims of a v2.0 ID token (the `profile` and `email` scopes) and of the userinfo answer.
 * @see https://learn.microsoft.com/en-us/entra/identity-platform/id-token-claims-reference
 */
export interface MicrosoftEntraIDProfile {
  /** `https://login.microsoftonline.com/<tid>/v2.0` */
  iss: string
  aud: string
  /** Pairwise: the same user has another `sub` in another application. The stable key here. */
  sub: string
  /** The user's object id in the tenant, the same for every application (Graph's user id). */
  oid?: string
  /** The tenant the user signed in from; `9188040d-6c67-4c5b-b112-36a304b66dad` for personal accounts. */
  tid?: string
  exp: number
  iat: number
  nbf?: number
  nonce?: string
  name?: string
  /** The sign-in name (a UPN, address or phone number); mutable, not an address to trust. */
  preferred_username?: string
  /** Optional claim; Microsoft does not verify it for every account type. */
  email?: string
  /** Optional claim: whether the address's domain is verified by the tenant that owns it. */
  xms_edov?: boolean
  given_name?: string
  family_name?: string
  login_hint?: string
  ver?: '2.0'
  [claim: string]: unknown
}

/** Overrides of the Entra ID provider, plus the tenant. */
export interface MicrosoftEntraIDUserConfig extends OIDCUserConfig<MicrosoftEntraIDProfile> {
  /**
   * Who can sign in: `common` (default), `organizations`, `consumers`, or a tenant GUID or domain.
   * Env: `AUTH_MICROSOFT_ENTRA_ID_TENANT_ID`; without either, Auth.js's `AUTH_MICROSOFT_ENTRA_ID_ISSUER`
   * (the tenant's issuer URL) is the issuer when set. Ignored when `issuer` is given.
   */
  tenantId?: string
}

const TENANT = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)$/i

/**
 * The Entra ID provider. Defaults: tenant `common`; scope `openid profile email`; the profile is
 * the ID token's claims (`userinfo: false`: Graph's userinfo adds nothing the ID token lacks, and
 * fails when you add a scope of your own API); `id` is `sub`.
 *
 * E-mail: the `email` claim is an address the account holds, which Microsoft does not verify for
 * every kind of account (a tenant admin can set any unverified address), so never turn on
 * `allowDangerousEmailAccountLinking` for this provider. The address is taken only when the optional
 * `xms_edov` claim says its domain is verified: add that optional claim to the app registration
 * (Token configuration → Add optional claim → ID → `xms_edov`) to get e-mail addresses. Without it an
 * attacker's tenant could create a user here under your user's address, which e-mail sign-in or your
 * own lookups would then trust.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except `authorization.params`, merged key by key.
 * @throws TypeError when `tenantId` is not a tenant name, GUID or domain.
 */
export default function MicrosoftEntraID(options: MicrosoftEntraIDUserConfig = {}): OIDCConfig<MicrosoftEntraIDProfile> {
  assertOptions('MicrosoftEntraID', options)
  const { tenantId = process.env.AUTH_MICROSOFT_ENTRA_ID_TENANT_ID || 'common', ...overrides } = options
  // Auth.js names the tenant by its issuer: an app moved over with only that set must not open to every tenant.
  const envIssuer = options.tenantId === undefined && !process.env.AUTH_MICROSOFT_ENTRA_ID_TENANT_ID ? process.env.AUTH_MICROSOFT_ENTRA_ID_ISSUER?.replace(/\/$/, '') || undefined : undefined
  if (typeof tenantId !== 'string' || !TENANT.test(tenantId)) {
    throw new TypeError(
      `MicrosoftEntraID(options): tenantId (or AUTH_MICROSOFT_ENTRA_ID_TENANT_ID) must be "common", "organizations", "consumers", a tenant GUID or a tenant domain; got ${JSON.stringify(tenantId)}.`,
    )
  }
  const defaults: OIDCConfig<MicrosoftEntraIDProfile> = {
    id: 'microsoft-entra-id',
    name: 'Microsoft Entra ID',
    type: 'oidc',
    issuer: envIssuer ?? `https://login.microsoftonline.com/${tenantId}/v2.0`,
    authorization: { params: { scope: 'openid profile email' } },
    // The ID token has every claim of these scopes. The userinfo endpoint is Microsoft Graph's, which
    // refuses an access token issued for another API (a scope such as api://<app>/read).
    userinfo: false,
    profile: (profile) => standardClaimsUser(profile, {
      name: profile.name ?? null,
      // The optional xms_edov claim: the address's domain is verified by the tenant that owns it.
      emailVerified: profile.xms_edov === true,
      image: null,
    }),
  }
  return withOverrides(defaults, overrides)
}
