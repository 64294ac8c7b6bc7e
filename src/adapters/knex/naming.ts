/**
 * Table and column names of the Knex adapter (spec §2.6 rule 3). The adapter and the migrations
 * read the same mapping, so renaming changes the SQL and nothing else.
 *
 * @see spec/auth-library-spec.md §2.6
 */

/** The tables, by role. */
export interface TableNames {
  users: string
  accounts: string
  sessions: string
  verificationTokens: string
  /** WebAuthn credentials (Auth.js's `Authenticator` model), from the third migration on. */
  authenticators: string
  /** Password hashes of the `Password` provider, one row per user, from the sixth migration on. */
  passwords: string
  /** TOTP enrolments (the second factor), one row per user, from the seventh migration on. */
  twoFactors: string
  /** Hashes of the second factor's recovery codes, several per user, from the seventh migration on. */
  recoveryCodes: string
  /** API keys (the `apiKeys` option), several per owner, from the eighth migration on. */
  apiKeys: string
  /** Usernames of the `Password` provider's `usernames` option, one row per user, from the tenth migration on. */
  usernames: string
  /** The audit log (the `audit` option), one row per security event, from the audit migration on. */
  auditEvents: string
  /**
   * The authorization server's records (the `authorizationServer` option): its grants, codes, refresh
   * tokens, device codes, interactions and stored clients, one row each, from the authorization server migration on.
   */
  oauthRecords: string
  /** Organizations (the `organizations` option), from the organizations migration on. */
  organizations: string
  /** Members of organizations: a user's role in one, one row per organization and user. */
  members: string
  /** Invitations to organizations, by e-mail address. */
  invitations: string
  /** Teams inside organizations (`organizations.teams`). */
  teams: string
  /** Members of teams, one row per team and user. */
  teamMembers: string
  /** An organization's single sign-on connections (the `SSO` provider), from the SSO migration on. */
  ssoConnections: string
  /** Domains an organization claims for its connections, verified or not. */
  ssoDomains: string
  /** The ids of SAML assertions already used, until they expire (the replay cache every process shares). */
  ssoReplays: string
}

export interface UserColumns {
  id: string
  name: string
  email: string
  emailVerified: string
  image: string
  /**
   * From the eleventh migration on (nullable): when the user asked to delete their account, while its
   * grace period runs (`account.deletionGracePeriod`). Never part of the user the adapter returns.
   */
  deletedAt: string
  /**
   * From the twelfth migration on (nullable): the user's roles, comma-separated (`roles` option,
   * docs/roles.md); empty means the default role. Read and written only with the option on.
   */
  roles: string
  /**
   * From the fourteenth migration on (nullable): the user's ban by an administrator (the admin API's
   * `banUser`): when, why, and until when (null: until lifted). Never part of the user the adapter returns.
   */
  bannedAt: string
  banReason: string
  banExpiresAt: string
}

export interface AccountColumns {
  id: string
  userId: string
  type: string
  provider: string
  providerAccountId: string
  refresh_token: string
  access_token: string
  expires_at: string
  token_type: string
  scope: string
  id_token: string
  session_state: string
}

export interface SessionColumns {
  id: string
  sessionToken: string
  userId: string
  expires: string
  /** From the fifth migration on (nullable): what `listSessions()` shows of a session. */
  createdAt: string
  lastSeenAt: string
  ipAddress: string
  userAgent: string
  /** From the ninth migration on (nullable): the session's last confirmation (`requireRecentSignIn`). */
  confirmedAt: string
  confirmedWith: string
  /** From the fifteenth migration on (nullable): the administrator who started the session as its user (impersonation). */
  impersonatedBy: string
  /** From the organizations migration on (nullable): the session's active organization (`organizations` option). */
  activeOrganizationId: string
}

export interface VerificationTokenColumns {
  identifier: string
  token: string
  expires: string
}

/** Auth.js's `Authenticator` columns: one WebAuthn credential of a user. */
export interface AuthenticatorColumns {
  credentialID: string
  userId: string
  providerAccountId: string
  credentialPublicKey: string
  counter: string
  credentialDeviceType: string
  credentialBackedUp: string
  transports: string
}

/** The password table's columns: the user, the hash (a self-describing string), when it was set. */
export interface PasswordColumns {
  userId: string
  hash: string
  updatedAt: string
}

/**
 * The two-factor table's columns: the user, the sealed TOTP secret, when the first code confirmed it
 * (null while pending), the time step of the last code accepted, when the secret was last stored or
 * confirmed.
 */
export interface TwoFactorColumns {
  userId: string
  secret: string
  enabledAt: string
  lastUsedStep: string
  updatedAt: string
}

/** The recovery-code table's columns: the user and one unused code's hash. */
export interface RecoveryCodeColumns {
  userId: string
  codeHash: string
}

/**
 * The API keys table's columns (the eighth migration): the key's id, the SHA-256 of the whole key
 * (unique, the lookup), the part shown in lists, its name, its owner (a type and an id: a user now,
 * an organization later), who created it, its scopes and metadata (JSON text), its times, and its
 * own rate limit and quota.
 */
export interface ApiKeyColumns {
  id: string
  keyHash: string
  display: string
  name: string
  ownerType: string
  ownerId: string
  createdBy: string
  scopes: string
  metadata: string
  createdAt: string
  expiresAt: string
  revokedAt: string
  lastUsedAt: string
  rateLimitMax: string
  rateLimitWindow: string
  remaining: string
  refillAmount: string
  refillInterval: string
  lastRefillAt: string
}

/** The username table's columns: the user, the name as chosen, its skeleton (unique), when it was set. */
export interface UsernameColumns {
  userId: string
  username: string
  usernameKey: string
  updatedAt: string
}

export interface AuditEventColumns {
  id: string
  at: string
  type: string
  outcome: string
  userId: string
  actorId: string
  target: string
  method: string
  reason: string
  ipAddress: string
  userAgent: string
  requestId: string
  details: string
}

/**
 * One record of the authorization server (oidc-provider's models): the model and its id, the payload
 * as JSON, and the payload's fields it is looked up by copied into columns of their own.
 */
export interface OAuthRecordColumns {
  model: string
  id: string
  payload: string
  grantId: string
  userCode: string
  uid: string
  accountId: string
  clientId: string
  expiresAt: string
  consumedAt: string
}

/** An organization: its display name, its slug (unique), a logo's URL and the app's metadata (JSON). */
export interface OrganizationColumns {
  id: string
  name: string
  slug: string
  logo: string
  metadata: string
  createdAt: string
}

/** A user's membership of an organization and their roles there (comma-separated). */
export interface MemberColumns {
  id: string
  organizationId: string
  userId: string
  role: string
  createdAt: string
}

/** An invitation: to whom (a lower-cased address), with what role, the SHA-256 of its token, and where it stands. */
export interface InvitationColumns {
  id: string
  organizationId: string
  email: string
  role: string
  teamId: string
  tokenHash: string
  status: string
  inviterId: string
  createdAt: string
  expiresAt: string
  sentAt: string
}

/** A team inside an organization. */
export interface TeamColumns {
  id: string
  organizationId: string
  name: string
  createdAt: string
}

/** A user in a team. */
export interface TeamMemberColumns {
  teamId: string
  userId: string
  createdAt: string
}

/** A single sign-on connection: its organization, its protocol (`oidc` or `saml`), and its settings (JSON; the OIDC client secret sealed). */
export interface SsoConnectionColumns {
  id: string
  organizationId: string
  type: string
  name: string
  enabled: string
  ssoOnly: string
  defaultRole: string
  settings: string
  createdAt: string
  updatedAt: string
}

/** A domain an organization claims: lower-cased, unique, with its DNS verification token and when it was verified. */
export interface SsoDomainColumns {
  id: string
  organizationId: string
  domain: string
  token: string
  verifiedAt: string
  verifiedBy: string
  createdAt: string
}

/** A used SAML assertion: the SHA-256 of its connection and id, kept until the assertion expires. */
export interface SsoReplayColumns {
  key: string
  expiresAt: string
}

/** Every name the adapter and the migrations use. */
export interface KnexNaming {
  tables: TableNames
  users: UserColumns
  accounts: AccountColumns
  sessions: SessionColumns
  verificationTokens: VerificationTokenColumns
  authenticators: AuthenticatorColumns
  passwords: PasswordColumns
  twoFactors: TwoFactorColumns
  recoveryCodes: RecoveryCodeColumns
  apiKeys: ApiKeyColumns
  usernames: UsernameColumns
  auditEvents: AuditEventColumns
  oauthRecords: OAuthRecordColumns
  organizations: OrganizationColumns
  members: MemberColumns
  invitations: InvitationColumns
  teams: TeamColumns
  teamMembers: TeamMemberColumns
  ssoConnections: SsoConnectionColumns
  ssoDomains: SsoDomainColumns
  ssoReplays: SsoReplayColumns
}

/** Names changed from a preset; everything left out keeps the preset's name. */
export interface KnexNamingOverrides {
  /** The names to start from. Default `default`. */
  preset?: KnexNamingPreset
  tables?: Partial<TableNames>
  users?: Partial<UserColumns>
  accounts?: Partial<AccountColumns>
  sessions?: Partial<SessionColumns>
  verificationTokens?: Partial<VerificationTokenColumns>
  authenticators?: Partial<AuthenticatorColumns>
  passwords?: Partial<PasswordColumns>
  twoFactors?: Partial<TwoFactorColumns>
  recoveryCodes?: Partial<RecoveryCodeColumns>
  apiKeys?: Partial<ApiKeyColumns>
  usernames?: Partial<UsernameColumns>
  auditEvents?: Partial<AuditEventColumns>
  oauthRecords?: Partial<OAuthRecordColumns>
  organizations?: Partial<OrganizationColumns>
  members?: Partial<MemberColumns>
  invitations?: Partial<InvitationColumns>
  teams?: Partial<TeamColumns>
  teamMembers?: Partial<TeamMemberColumns>
  ssoConnections?: Partial<SsoConnectionColumns>
  ssoDomains?: Partial<SsoDomainColumns>
  ssoReplays?: Partial<SsoReplayColumns>
}

/** `default`: the spec's names (`User`, `userId`, ...). `snake_case`: `users`, `user_id`, ... */
export type KnexNamingPreset = 'default' | 'snake_case'

/** A naming option: a preset's name, or overrides of one. */
export type KnexNamingOption = KnexNamingPreset | KnexNamingOverrides

/** The spec's own names (as Auth.js's Prisma schema has them): tables `User`, `Account`, `Session`, `VerificationToken`, `Authenticator`, and Portcullis's `Password`, `TwoFactor`, `RecoveryCode`, `ApiKey`, `Username`, `AuditEvent`, `OAuthRecord`, `Organization`, `Member`, `Invitation`, `Team`, `TeamMember`, `SsoConnection`, `SsoDomain` and `SsoReplay`. */
export const defaultNaming: Readonly<KnexNaming> = deepFreeze({
  tables: { users: 'User', accounts: 'Account', sessions: 'Session', verificationTokens: 'VerificationToken', authenticators: 'Authenticator', passwords: 'Password', twoFactors: 'TwoFactor', recoveryCodes: 'RecoveryCode', apiKeys: 'ApiKey', usernames: 'Username', auditEvents: 'AuditEvent', oauthRecords: 'OAuthRecord', organizations: 'Organization', members: 'Member', invitations: 'Invitation', teams: 'Team', teamMembers: 'TeamMember', ssoConnections: 'SsoConnection', ssoDomains: 'SsoDomain', ssoReplays: 'SsoReplay' },
  users: { id: 'id', name: 'name', email: 'email', emailVerified: 'emailVerified', image: 'image', deletedAt: 'deletedAt', roles: 'roles', bannedAt: 'bannedAt', banReason: 'banReason', banExpiresAt: 'banExpiresAt' },
  accounts: {
    id: 'id',
    userId: 'userId',
    type: 'type',
    provider: 'provider',
    providerAccountId: 'providerAccountId',
    refresh_token: 'refresh_token',
    access_token: 'access_token',
    expires_at: 'expires_at',
    token_type: 'token_type',
    scope: 'scope',
    id_token: 'id_token',
    session_state: 'session_state',
  },
  sessions: { id: 'id', sessionToken: 'sessionToken', userId: 'userId', expires: 'expires', createdAt: 'createdAt', lastSeenAt: 'lastSeenAt', ipAddress: 'ipAddress', userAgent: 'userAgent', confirmedAt: 'confirmedAt', confirmedWith: 'confirmedWith', impersonatedBy: 'impersonatedBy', activeOrganizationId: 'activeOrganizationId' },
  verificationTokens: { identifier: 'identifier', token: 'token', expires: 'expires' },
  authenticators: {
    credentialID: 'credentialID',
    userId: 'userId',
    providerAccountId: 'providerAccountId',
    credentialPublicKey: 'credentialPublicKey',
    counter: 'counter',
    credentialDeviceType: 'credentialDeviceType',
    credentialBackedUp: 'credentialBackedUp',
    transports: 'transports',
  },
  passwords: { userId: 'userId', hash: 'hash', updatedAt: 'updatedAt' },
  twoFactors: { userId: 'userId', secret: 'secret', enabledAt: 'enabledAt', lastUsedStep: 'lastUsedStep', updatedAt: 'updatedAt' },
  recoveryCodes: { userId: 'userId', codeHash: 'codeHash' },
  apiKeys: {
    id: 'id',
    keyHash: 'keyHash',
    display: 'display',
    name: 'name',
    ownerType: 'ownerType',
    ownerId: 'ownerId',
    createdBy: 'createdBy',
    scopes: 'scopes',
    metadata: 'metadata',
    createdAt: 'createdAt',
    expiresAt: 'expiresAt',
    revokedAt: 'revokedAt',
    lastUsedAt: 'lastUsedAt',
    rateLimitMax: 'rateLimitMax',
    rateLimitWindow: 'rateLimitWindow',
    remaining: 'remaining',
    refillAmount: 'refillAmount',
    refillInterval: 'refillInterval',
    lastRefillAt: 'lastRefillAt',
  },
  usernames: { userId: 'userId', username: 'username', usernameKey: 'usernameKey', updatedAt: 'updatedAt' },
  auditEvents: { id: 'id', at: 'at', type: 'type', outcome: 'outcome', userId: 'userId', actorId: 'actorId', target: 'target', method: 'method', reason: 'reason', ipAddress: 'ipAddress', userAgent: 'userAgent', requestId: 'requestId', details: 'details' },
  oauthRecords: { model: 'model', id: 'id', payload: 'payload', grantId: 'grantId', userCode: 'userCode', uid: 'uid', accountId: 'accountId', clientId: 'clientId', expiresAt: 'expiresAt', consumedAt: 'consumedAt' },
  organizations: { id: 'id', name: 'name', slug: 'slug', logo: 'logo', metadata: 'metadata', createdAt: 'createdAt' },
  members: { id: 'id', organizationId: 'organizationId', userId: 'userId', role: 'role', createdAt: 'createdAt' },
  invitations: { id: 'id', organizationId: 'organizationId', email: 'email', role: 'role', teamId: 'teamId', tokenHash: 'tokenHash', status: 'status', inviterId: 'inviterId', createdAt: 'createdAt', expiresAt: 'expiresAt', sentAt: 'sentAt' },
  teams: { id: 'id', organizationId: 'organizationId', name: 'name', createdAt: 'createdAt' },
  teamMembers: { teamId: 'teamId', userId: 'userId', createdAt: 'createdAt' },
  ssoConnections: { id: 'id', organizationId: 'organizationId', type: 'type', name: 'name', enabled: 'enabled', ssoOnly: 'ssoOnly', defaultRole: 'defaultRole', settings: 'settings', createdAt: 'createdAt', updatedAt: 'updatedAt' },
  ssoDomains: { id: 'id', organizationId: 'organizationId', domain: 'domain', token: 'token', verifiedAt: 'verifiedAt', verifiedBy: 'verifiedBy', createdAt: 'createdAt' },
  ssoReplays: { key: 'key', expiresAt: 'expiresAt' },
})

/** Plural snake_case tables and snake_case columns: `users`, `accounts.user_id`, `sessions.session_token`, ... */
export const snakeCaseNaming: Readonly<KnexNaming> = deepFreeze({
  tables: { users: 'users', accounts: 'accounts', sessions: 'sessions', verificationTokens: 'verificationtokens', authenticators: 'authenticators', passwords: 'passwords', twoFactors: 'two_factors', recoveryCodes: 'recovery_codes', apiKeys: 'api_keys', usernames: 'usernames', auditEvents: 'audit_events', oauthRecords: 'oauth_records', organizations: 'organizations', members: 'members', invitations: 'invitations', teams: 'teams', teamMembers: 'team_members', ssoConnections: 'sso_connections', ssoDomains: 'sso_domains', ssoReplays: 'sso_replays' },
  users: { id: 'id', name: 'name', email: 'email', emailVerified: 'email_verified', image: 'image', deletedAt: 'deleted_at', roles: 'roles', bannedAt: 'banned_at', banReason: 'ban_reason', banExpiresAt: 'ban_expires_at' },
  accounts: {
    id: 'id',
    userId: 'user_id',
    type: 'type',
    provider: 'provider',
    providerAccountId: 'provider_account_id',
    refresh_token: 'refresh_token',
    access_token: 'access_token',
    expires_at: 'expires_at',
    token_type: 'token_type',
    scope: 'scope',
    id_token: 'id_token',
    session_state: 'session_state',
  },
  sessions: {
    id: 'id',
    sessionToken: 'session_token',
    userId: 'user_id',
    expires: 'expires',
    createdAt: 'created_at',
    lastSeenAt: 'last_seen_at',
    ipAddress: 'ip_address',
    userAgent: 'user_agent',
    confirmedAt: 'confirmed_at',
    confirmedWith: 'confirmed_with',
    impersonatedBy: 'impersonated_by',
    activeOrganizationId: 'active_organization_id',
  },
  verificationTokens: { identifier: 'identifier', token: 'token', expires: 'expires' },
  authenticators: {
    credentialID: 'credential_id',
    userId: 'user_id',
    providerAccountId: 'provider_account_id',
    credentialPublicKey: 'credential_public_key',
    counter: 'counter',
    credentialDeviceType: 'credential_device_type',
    credentialBackedUp: 'credential_backed_up',
    transports: 'transports',
  },
  passwords: { userId: 'user_id', hash: 'hash', updatedAt: 'updated_at' },
  twoFactors: { userId: 'user_id', secret: 'secret', enabledAt: 'enabled_at', lastUsedStep: 'last_used_step', updatedAt: 'updated_at' },
  recoveryCodes: { userId: 'user_id', codeHash: 'code_hash' },
  apiKeys: {
    id: 'id',
    keyHash: 'key_hash',
    display: 'display',
    name: 'name',
    ownerType: 'owner_type',
    ownerId: 'owner_id',
    createdBy: 'created_by',
    scopes: 'scopes',
    metadata: 'metadata',
    createdAt: 'created_at',
    expiresAt: 'expires_at',
    revokedAt: 'revoked_at',
    lastUsedAt: 'last_used_at',
    rateLimitMax: 'rate_limit_max',
    rateLimitWindow: 'rate_limit_window',
    remaining: 'remaining',
    refillAmount: 'refill_amount',
    refillInterval: 'refill_interval',
    lastRefillAt: 'last_refill_at',
  },
  usernames: { userId: 'user_id', username: 'username', usernameKey: 'username_key', updatedAt: 'updated_at' },
  auditEvents: { id: 'id', at: 'at', type: 'type', outcome: 'outcome', userId: 'user_id', actorId: 'actor_id', target: 'target', method: 'method', reason: 'reason', ipAddress: 'ip_address', userAgent: 'user_agent', requestId: 'request_id', details: 'details' },
  oauthRecords: { model: 'model', id: 'id', payload: 'payload', grantId: 'grant_id', userCode: 'user_code', uid: 'uid', accountId: 'account_id', clientId: 'client_id', expiresAt: 'expires_at', consumedAt: 'consumed_at' },
  organizations: { id: 'id', name: 'name', slug: 'slug', logo: 'logo', metadata: 'metadata', createdAt: 'created_at' },
  members: { id: 'id', organizationId: 'organization_id', userId: 'user_id', role: 'role', createdAt: 'created_at' },
  invitations: { id: 'id', organizationId: 'organization_id', email: 'email', role: 'role', teamId: 'team_id', tokenHash: 'token_hash', status: 'status', inviterId: 'inviter_id', createdAt: 'created_at', expiresAt: 'expires_at', sentAt: 'sent_at' },
  teams: { id: 'id', organizationId: 'organization_id', name: 'name', createdAt: 'created_at' },
  teamMembers: { teamId: 'team_id', userId: 'user_id', createdAt: 'created_at' },
  ssoConnections: { id: 'id', organizationId: 'organization_id', type: 'type', name: 'name', enabled: 'enabled', ssoOnly: 'sso_only', defaultRole: 'default_role', settings: 'settings', createdAt: 'created_at', updatedAt: 'updated_at' },
  ssoDomains: { id: 'id', organizationId: 'organization_id', domain: 'domain', token: 'token', verifiedAt: 'verified_at', verifiedBy: 'verified_by', createdAt: 'created_at' },
  ssoReplays: { key: 'key', expiresAt: 'expires_at' },
})

const PRESETS: Record<KnexNamingPreset, Readonly<KnexNaming>> = { default: defaultNaming, snake_case: snakeCaseNaming }
const GROUPS = ['tables', 'users', 'accounts', 'sessions', 'verificationTokens', 'authenticators', 'passwords', 'twoFactors', 'recoveryCodes', 'apiKeys', 'usernames', 'auditEvents', 'oauthRecords', 'organizations', 'members', 'invitations', 'teams', 'teamMembers', 'ssoConnections', 'ssoDomains', 'ssoReplays'] as const

/**
 * The full, frozen naming for an option.
 *
 * @throws TypeError for an unknown preset, an unknown key, an empty name, or two columns of one
 *   table (or two tables) given the same name.
 */
export function resolveNaming(option: KnexNamingOption | undefined = 'default'): Readonly<KnexNaming> {
  if (typeof option === 'string') {
    const preset = PRESETS[option as KnexNamingPreset]
    if (!preset) throw new TypeError(`naming must be "default", "snake_case" or an object of overrides; got "${option}".`)
    return preset
  }
  if (!option || typeof option !== 'object') throw new TypeError('naming must be "default", "snake_case" or an object of overrides.')
  const { preset: presetName = 'default', ...overrides } = option
  const base = resolveNaming(presetName)
  const naming = {} as Record<(typeof GROUPS)[number], Record<string, string>>
  for (const group of GROUPS) {
    const given: Record<string, unknown> = overrides[group] ?? {}
    const names: Record<string, string> = { ...base[group] }
    for (const [key, value] of Object.entries(given)) {
      if (!Object.hasOwn(names, key)) throw new TypeError(`naming.${group} has no "${key}"; the keys are ${Object.keys(names).join(', ')}.`)
      if (typeof value !== 'string' || value.length === 0) throw new TypeError(`naming.${group}.${key} must be a non-empty string.`)
      names[key] = value
    }
    const values = Object.values(names)
    if (new Set(values).size !== values.length) throw new TypeError(`naming.${group} gives two ${group === 'tables' ? 'tables' : 'columns'} the same name.`)
    naming[group] = names
  }
  for (const key of Object.keys(overrides)) {
    if (!(GROUPS as readonly string[]).includes(key)) throw new TypeError(`naming has no "${key}"; the keys are preset, ${GROUPS.join(', ')}.`)
  }
  return deepFreeze(naming as unknown as KnexNaming)
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) if (child && typeof child === 'object') deepFreeze(child)
  return Object.freeze(value)
}
