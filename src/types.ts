/**
 * Public types of Portcullis, the ground floor: the shapes users read (Session, User, JWT, Profile),
 * the adapter's, and the options the configuration is made of. They import nothing of the library
 * but the logger's interface; the provider shapes build on them (providers/), and the configuration
 * object that names the providers lives above both (config/types.ts).
 *
 * @see spec/auth-library-spec.md §2
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

/** Seconds since the Unix epoch, as JWT claims count time. */
export type NumericDate = number

/** An ISO 8601 date string, as `Session.expires` carries it. */
export type ISODateString = string

/** What a provider's token endpoint returned (RFC 6749 §5.1), plus `expires_at` computed from `expires_in`. */
export interface TokenSet {
  access_token?: string | undefined
  token_type?: string | undefined
  id_token?: string | undefined
  refresh_token?: string | undefined
  /** Seconds the access token lives, as the provider said. */
  expires_in?: number | undefined
  /** Seconds since the epoch at which the access token expires (from `expires_in`). */
  expires_at?: number | undefined
  scope?: string | undefined
  session_state?: string | undefined
  [key: string]: unknown
}

/** A profile as a provider returns it: the OIDC standard claims, or whatever the API's JSON holds. */
export interface Profile {
  sub?: string | null | undefined
  name?: string | null | undefined
  email?: string | null | undefined
  picture?: string | null | undefined
  [claim: string]: unknown
}

/** The user as a provider (or `authorize`) returns it. */
export interface User {
  id?: string | undefined
  name?: string | null | undefined
  email?: string | null | undefined
  /**
   * From a provider's `profile()`: `true` when the provider says `email` is verified (an
   * `email_verified` claim, or an API that only gives verified addresses). An address not marked so
   * is not used: not in the session, not to find or link a user, not on a new user. On a stored user
   * (`AdapterUser`), when the address was last proven.
   */
  emailVerified?: boolean | Date | null | undefined
  image?: string | null | undefined
  [key: string]: unknown
}

/** What `getSessionAndUser` is asked to read of the user besides its own fields. */
export interface SessionUserOptions {
  /**
   * Fields a wing carries in the session (`roles`): read in the session's one query. And
   * `impersonatedBy`: the session row's own column of that name (`AdapterSession.impersonatedBy`).
   */
  readonly with?: readonly string[] | undefined
}

/** The session user: the default session callback always sets `id`. */
export interface SessionUser {
  id: string
  name?: string | null | undefined
  email?: string | null | undefined
  image?: string | null | undefined
  [key: string]: unknown
}

/** What `auth()` and `GET /session` return for a signed-in user. */
export interface Session {
  user: SessionUser
  /** When the session cookie expires. */
  expires: ISODateString
  /**
   * Set when `getAccessToken()` found that only a new sign-in gives a provider's access token again
   * (`RefreshAccessTokenError` with `no_refresh_token` or `invalid_grant`). JWT sessions keep the
   * mark until the user signs in with that provider again; database sessions show it on that request.
   * A `session` callback may set its own values.
   */
  error?: 'RefreshAccessTokenError' | (string & {}) | undefined
  /**
   * Set on a session an administrator started as this user (impersonation, docs/admin.md): the
   * administrator's user id. It ends at its own time and is never extended; the app's callbacks cannot remove it.
   */
  impersonatedBy?: string | undefined
  [key: string]: unknown
}

/**
 * The payload of a JWT session: the default claims below, plus whatever the `jwt` callback adds.
 * @see https://www.rfc-editor.org/rfc/rfc7519#section-4.1
 */
export interface JWT {
  name?: string | null | undefined
  email?: string | null | undefined
  picture?: string | null | undefined
  sub?: string | undefined
  iat?: NumericDate | undefined
  exp?: NumericDate | undefined
  jti?: string | undefined
  /**
   * The provider tokens `getAccessToken()` uses, by provider id: set on an OAuth/OIDC sign-in (before
   * the `jwt` callback, which may remove it), replaced when a refresh rotates them. A sign-in keeps
   * the entries of the user's other providers from the session it replaces.
   */
  provider_tokens?: Record<string, ProviderTokens> | undefined
  [key: string]: unknown
}

/**
 * One provider's tokens in a JWT session (the `provider_tokens` claim): what an API call needs, not
 * the ID token. `error` replaces the tokens once the provider refused the refresh token.
 */
export interface ProviderTokens {
  access_token?: string | undefined
  refresh_token?: string | undefined
  /** Seconds since the epoch at which `access_token` expires; absent when the provider did not say. */
  expires_at?: NumericDate | undefined
  /** Absent for `bearer`. */
  token_type?: string | undefined
  /** Why no token can be had without a new sign-in. */
  error?: 'no_refresh_token' | 'invalid_grant' | undefined
}

/**
 * The kinds of provider the spec names (§1.2), `webauthn` for passkeys (Auth.js's name for the type),
 * and `sso` for an organization's own identity provider (OIDC or SAML, `portcullis/providers/sso`).
 */
export type ProviderType = 'oauth' | 'oidc' | 'email' | 'credentials' | 'webauthn' | 'sso'

/** A sign-in with a provider, as the callbacks and events see it (spec §2.4). */
export interface Account {
  provider: string
  providerAccountId: string
  type: ProviderType
  userId?: string | undefined
  access_token?: string | undefined
  refresh_token?: string | undefined
  expires_in?: number | undefined
  expires_at?: number | undefined
  id_token?: string | undefined
  token_type?: string | undefined
  scope?: string | undefined
  session_state?: string | undefined
  [key: string]: unknown
}

/** A user as the adapter stores it (spec §2.6 User). Optional fields are `null` when unset. */
export interface AdapterUser extends User {
  id: string
  name: string | null
  email: string | null
  /** When the e-mail address was last proven (e-mail sign-in), else `null`. */
  emailVerified: Date | null
  image: string | null
}

/** A user to create: every field but `id` (the adapter generates it, unless one is given). */
export type NewAdapterUser = Partial<AdapterUser>

/** A provider account linked to a user (spec §2.6 Account). Optional fields are `null` when unset. */
export interface AdapterAccount {
  userId: string
  type: ProviderType
  provider: string
  providerAccountId: string
  refresh_token: string | null
  access_token: string | null
  /** Seconds since the epoch at which `access_token` expires. */
  expires_at: number | null
  token_type: string | null
  scope: string | null
  id_token: string | null
  session_state: string | null
}

/** An account to link: the required fields, plus whichever token fields the provider returned (other fields are ignored). */
export type NewAdapterAccount = Pick<AdapterAccount, 'userId' | 'type' | 'provider' | 'providerAccountId'> &
  Partial<Omit<AdapterAccount, 'userId' | 'type' | 'provider' | 'providerAccountId'>>

/** A database session (spec §2.6 Session); the session cookie holds only `sessionToken`. */
export interface AdapterSession {
  /**
   * The row's own id, where the adapter's table has one (`KnexAdapter` returns it from every
   * session method, as Auth.js's pg and Prisma adapters do). Not a secret: it cannot sign anyone in.
   */
  id?: string
  sessionToken: string
  userId: string
  expires: Date
  /** When the session started (from the fifth migration on; `null` for older rows). */
  createdAt?: Date | null
  /** When the session was last extended: its last use, to within `session.updateAge`. */
  lastSeenAt?: Date | null
  /** The client's address at sign-in, as the app sees it (Express's `req.ip`, per `trust proxy`). */
  ipAddress?: string | null
  /** The client's `User-Agent` at sign-in, at most 512 characters. */
  userAgent?: string | null
  /**
   * When the user last proved who they are in this session: the sign-in, or a later confirmation
   * (`requireRecentSignIn`, docs/account.md). From the ninth migration on; `null` for older rows.
   */
  confirmedAt?: Date | null
  /** How: the provider id of the sign-in, or the confirmation's method (`password`, `two-factor`). */
  confirmedWith?: string | null
  /**
   * The user id of the administrator who started this session as the user (impersonation,
   * docs/admin.md); `null` or absent for the user's own sessions. From the fifteenth migration on.
   */
  impersonatedBy?: string | null
}

/** A single-use token, e.g. of an e-mail sign-in link (spec §2.6 VerificationToken). */
export interface VerificationToken {
  /** Whom the token was issued to, e.g. the e-mail address. */
  identifier: string
  token: string
  expires: Date
}

/** Identifies an account: the provider and the user's id at that provider. */
export interface AccountReference {
  provider: string
  providerAccountId: string
}

/** The fields of an account that `updateAccount` changes and compares: the provider's token set. */
export type AccountTokenFields = Pick<AdapterAccount, 'refresh_token' | 'access_token' | 'expires_at' | 'token_type' | 'scope' | 'id_token' | 'session_state'>

/**
 * The database adapter: how Portcullis stores users, accounts, sessions and verification tokens.
 * The method set is Auth.js v5's, so an Auth.js adapter fits too. Database sessions need the four
 * session methods; `KnexAdapter` (`portcullis/adapters/knex`) implements all of them.
 *
 * Every method returns `null` (never throws) when the record does not exist; it throws when the
 * database fails, and Portcullis reports that as an `AdapterError`.
 */
export interface Adapter {
  createUser?(user: NewAdapterUser): Promise<AdapterUser>
  getUser?(id: string): Promise<AdapterUser | null>
  getUserByEmail?(email: string): Promise<AdapterUser | null>
  getUserByAccount?(account: AccountReference): Promise<AdapterUser | null>
  updateUser?(user: Partial<AdapterUser> & Pick<AdapterUser, 'id'>): Promise<AdapterUser>
  /**
   * Deletes the user with its accounts and sessions; returns the deleted user. With `markedBefore`
   * (the background prune of accounts whose deletion grace period ran out, docs/account.md), deletes
   * the user only while it is marked deleted since before that instant, atomically with a sign-in
   * that clears the mark, and returns `null` when it is not.
   */
  deleteUser?(id: string, options?: { markedBefore?: Date | undefined }): Promise<AdapterUser | null | void>
  linkAccount?(account: NewAdapterAccount): Promise<AdapterAccount | null | void>
  /**
   * Deletes the account; returns it, or `null` when there was none. With `unlessLastOf` (a user id),
   * deletes it only if that user keeps another account, atomically (two concurrent calls for a
   * user's last two accounts remove one), and returns `null` when it refused. With
   * `countedProviders`, only another account at one of those providers counts (one at a provider no
   * longer configured signs nobody in).
   */
  unlinkAccount?(account: AccountReference, options?: { unlessLastOf?: string | undefined; countedProviders?: readonly string[] | undefined }): Promise<AdapterAccount | null | void>
  /** Every account linked to the user (for `unlinkAccount()` and an app's "connected accounts" page). */
  getAccountsByUserId?(userId: string): Promise<AdapterAccount[]>
  /**
   * Changes the account's token fields given (others are kept) and returns the account as stored;
   * `null` when there is no such account. With `expect`, a compare-and-set: the change is made only
   * if each field in `expect` holds that value (`null`: is null), atomically (of concurrent calls
   * expecting the same value, one wins), and `null` is returned when it does not. `getAccessToken()`
   * stores refreshed tokens with it (database sessions), and an OAuth sign-in of a linked account its
   * new tokens; while a refresh is under way, `expires_at` holds minus the end of its lease.
   */
  updateAccount?(account: AccountReference & Partial<AccountTokenFields>, options?: { expect?: Partial<AccountTokenFields> | undefined }): Promise<AdapterAccount | null>
  createSession?(session: AdapterSession): Promise<AdapterSession>
  /**
   * The session and its user, or `null`. Expired sessions are returned too: Portcullis deletes them.
   * `options.with` names fields of the user a wing carries in the session (`roles`, with the roles
   * option on), to be read in the same query: the user then has each (`null` when empty).
   */
  getSessionAndUser?(sessionToken: string, options?: SessionUserOptions): Promise<{ session: AdapterSession; user: AdapterUser } | null>
  updateSession?(session: Partial<AdapterSession> & Pick<AdapterSession, 'sessionToken'>): Promise<AdapterSession | null | void>
  /**
   * The session row's record of its last confirmation (`confirmedAt`, `confirmedWith`) and its
   * `createdAt`, for `requireRecentSignIn`: asked only before a sensitive action, never on a plain
   * session read. Without it, a database session counts as confirmed when it was created.
   */
  getSessionConfirmation?(sessionToken: string): Promise<Pick<AdapterSession, 'createdAt' | 'confirmedAt' | 'confirmedWith'> | null>
  deleteSession?(sessionToken: string): Promise<AdapterSession | null | void>
  /** The user's sessions, expired ones included (for `listSessions()`), in one query. */
  listSessionsByUserId?(userId: string): Promise<AdapterSession[]>
  /**
   * Deletes the user's sessions: the one with row id `only`, every one but `except`, or all; never
   * another user's. Returns the deleted sessions (for `revokeSession()`, `revokeOtherSessions()`,
   * `signOutEverywhere()`).
   */
  deleteSessionsByUserId?(userId: string, which: { only: string } | { except?: string | undefined }): Promise<AdapterSession[]>
  createVerificationToken?(token: VerificationToken): Promise<VerificationToken | null | void>
  /** Returns the token and deletes it, atomically: of concurrent uses exactly one gets it. */
  useVerificationToken?(params: { identifier: string; token: string }): Promise<VerificationToken | null>
  /** The account with this provider's id, or `null` (Auth.js's argument order: `providerAccountId` first). */
  getAccount?(providerAccountId: string, provider: string): Promise<AdapterAccount | null>
}

/** The request a credentials `authorize` or a callback receives: the Node request (Express's `req`). */
export type AuthIncomingRequest = IncomingMessage & {
  body?: unknown
  query?: unknown
  cookies?: Record<string, string> | undefined
}

/** The second factor a sign-in was given (`twoFactor` option): a TOTP code, or one of the user's recovery codes. */
export interface SecondFactorProof {
  method: 'totp' | 'recovery-code'
}

/** The built-in pages' look. */
export interface Theme {
  /** `auto` follows the visitor's system setting. Default `auto`. */
  colorScheme?: 'auto' | 'light' | 'dark' | undefined
  /** URL of a logo shown above the page content. */
  logo?: string | undefined
  /** CSS colour of buttons and links, e.g. `#2563eb`. */
  brandColor?: string | undefined
  /** CSS colour of the text on buttons. */
  buttonText?: string | undefined
}

/** The app's own pages, replacing the built-in ones. Each value is a path such as `/login`. */
export interface PagesOptions {
  /**
   * The app's page that every built-in page links back to ("Back to …"), e.g. `'/account'`.
   * Default: the site's root.
   */
  home?: string | undefined
  signIn?: string | undefined
  signOut?: string | undefined
  error?: string | undefined
  verifyRequest?: string | undefined
  newUser?: string | undefined
}

/** Session behaviour (spec §2.2). */
export interface SessionOptions {
  /**
   * `jwt` keeps the session in an encrypted cookie; `database` keeps it in the adapter and the
   * cookie holds only its token. Default: `database` when an adapter is set, else `jwt`.
   */
  strategy?: 'jwt' | 'database' | undefined
  /** Seconds until an idle session expires. Default 30 days. */
  maxAge?: number | undefined
  /** Seconds between re-issues of the session cookie (and database writes). 0 = every access. Default 1 day. */
  updateAge?: number | undefined
  /** Generates database session tokens. Default: 32 random bytes, hex (256 bits of entropy). */
  generateSessionToken?: (() => string) | undefined
  /**
   * JWT sessions: where they are recorded, so that they can be listed (`listSessions()`) and ended
   * (sign-out, `revokeSession()`, `signOutEverywhere()`) for real: without a store, a copy of the
   * cookie taken before sign-out stays valid until it expires. Several processes share the refresh
   * lease through it too. See docs/sessions.md. Database sessions need no store.
   */
  store?: SessionStoreOption | undefined
  /**
   * JWT sessions with a store: a process reads the store's list of ended sessions at most once per
   * this many seconds (one query for all of its sessions), so a session ended on one process is
   * refused by the others within this time. `0`: on every read. Default 5.
   */
  revocationCacheSeconds?: number | undefined
  /**
   * JWT sessions with a store: while the store cannot be reached, a session this process knew to
   * stand at its last read of the store, within this many seconds, is still let in (nobody is signed out by an outage); older ones get an
   * `AdapterError` (503) until the store is back, their cookie kept. Default 300.
   */
  storeOutageSeconds?: number | undefined
  /**
   * How long a request waits for a shared store (Redis, a Knex table; with database sessions the
   * adapter's session methods) before that call fails as if the store were down, so the rule above
   * applies (known sessions in, others 503, sign-in refused) instead of the request hanging with a
   * silent store. Milliseconds, for reads and writes alike, or `{ read, write }`. Default
   * `{ read: 250, write: 1000 }`. See docs/sessions.md.
   */
  storeTimeoutMs?: number | { read?: number | undefined; write?: number | undefined } | undefined
}

/**
 * Where JWT sessions are recorded (`session.store`).
 * - `'memory'`: in this process, per `Portcullis()` instance (one process only).
 * - `{ knex }`: a table of the app's database (default `portcullis_session_store`, created on first
 *   use unless `createTable: false`), on PostgreSQL, MySQL/MariaDB or SQLite.
 * - `{ redis }`: Redis through an ioredis 5 or 6 client (keys under `keyPrefix`, default `portcullis:session`).
 */
export type SessionStoreOption =
  | 'memory'
  | { knex: RateLimitKnex; tableName?: string | undefined; createTable?: boolean | undefined }
  | { redis: SessionStoreRedis; keyPrefix?: string | undefined }

/** An ioredis client (`new Redis(url)`); typed loosely so that apps without Redis need not install it. */
export interface SessionStoreRedis {
  eval: (...args: never[]) => unknown
  hgetall: (...args: never[]) => unknown
}

/** One of the user's sessions, as `listSessions()` and `GET /api/auth/sessions/list` give it. */
export interface SessionInfo {
  /** The session's id: pass it to `revokeSession()`. Not a secret (it cannot sign anyone in). */
  id: string
  /** True for the session of the request that asked. */
  current: boolean
  /** ISO 8601; `null` when unknown (a session started before the store or the fifth migration). */
  createdAt: string | null
  /** ISO 8601: the last use, to within `session.updateAge`; `null` when unknown. */
  lastSeenAt: string | null
  /** ISO 8601. */
  expires: string
  ipAddress: string | null
  userAgent: string | null
}

/** Parameters of `jwt.encode`. */
export interface JWTEncodeParams {
  token?: JWT | undefined
  /** The secret, or a list whose first entry seals the token. */
  secret: string | readonly string[]
  /** The session cookie name; it salts the key derivation. */
  salt: string
  /** Seconds until the token expires. Default 30 days. */
  maxAge?: number | undefined
}

/** Parameters of `jwt.decode`. */
export interface JWTDecodeParams {
  token?: string | undefined
  /** The secret, or a list of secrets tried in turn (rotation). */
  secret: string | readonly string[]
  salt: string
}

/** JWT options (spec §2.1 `jwt`). A custom `encode`/`decode` replaces the built-in codec. */
export interface JWTOptions {
  /** Seconds until the token expires. Defaults to `session.maxAge`. */
  maxAge?: number | undefined
  /**
   * Largest sealed session token, in bytes; a larger one is refused with SessionTokenTooLargeError
   * (a sign-in fails, POST /session is refused, a re-seal on read keeps the old cookie). Default
   * 11808: 3 cookie chunks of 3936. At most 39360 (10 chunks, the most Portcullis reads back).
   */
  maxSize?: number | undefined
  /**
   * How many opened session tokens each instance keeps, so a cookie it has read before (browsers send
   * the same one until it is re-issued) is not decrypted again. A token is kept from its second read
   * on: one that comes once costs no entry. Default 1000 (about 2 MB); `0` turns it off. Expiry is
   * checked on every read; only tokens that opened are kept; app code (callbacks, events, `req.auth`)
   * gets copies of its own. Not used with a custom `decode`.
   */
  cacheSize?: number | undefined
  encode?: ((params: JWTEncodeParams) => Promise<string> | string) | undefined
  decode?: ((params: JWTDecodeParams) => Promise<JWT | null> | JWT | null) | undefined
}

/** Options of one cookie the library sets. */
export interface CookieOption {
  name: string
  options: {
    httpOnly?: boolean | undefined
    sameSite?: 'lax' | 'strict' | 'none' | boolean | undefined
    path?: string | undefined
    secure?: boolean | undefined
    domain?: string | undefined
    maxAge?: number | undefined
    expires?: Date | undefined
    partitioned?: boolean | undefined
    priority?: 'low' | 'medium' | 'high' | undefined
  }
}

/** Every cookie the library sets, by role. */
export interface CookiesOptions {
  sessionToken: CookieOption
  callbackUrl: CookieOption
  csrfToken: CookieOption
  pkceCodeVerifier: CookieOption
  state: CookieOption
  nonce: CookieOption
  /**
   * Set on the browser that asked for an e-mail sign-in link (`authjs.email-link`): opening the link
   * there signs in at once; anywhere else the link asks first. Not an Auth.js cookie.
   */
  emailLink: CookieOption
  /**
   * The refused sign-in form (`authjs.signin-form`): which provider's form, and the address or
   * username typed (never a password), sealed, valid 5 minutes, read once by the built-in sign-in
   * page to fill the form in again. Not an Auth.js cookie.
   */
  signInForm: CookieOption
}

/** Options of the deployment that `redirectProxyUrl` points at. */
export interface RedirectProxyOptions {
  /**
   * The deployments this one forwards OAuth callbacks to, besides itself: origins
   * (`https://staging.example.com`) or one-label wildcards (`https://*.preview.example`). A callback
   * whose state names any other origin is refused, since a sign-in started with a forged Host would
   * otherwise have the victim's code sent there. Default `AUTH_REDIRECT_PROXY_ALLOWED_ORIGINS`
   * (comma-separated), else none.
   */
  allowedOrigins?: string[] | undefined
}

/** A Node response, which `auth(req, res)` writes refreshed cookies to. */
export type AuthServerResponse = ServerResponse

/** A value, or a promise of one: what a callback may return. */
export type Awaitable<T> = T | Promise<T>

/** Parameters of the `jwt` callback. */
export interface JWTCallbackParams {
  /** The decoded token; on sign-in, the default claims (name, email, picture, sub). */
  token: JWT
  /** Only on sign-in: the user `authorize` (or the provider) returned. */
  user?: User | undefined
  /** Only on sign-in. */
  account?: Account | null | undefined
  /** Only on an OAuth/OIDC sign-in: the provider's profile, before `profile()` mapped it. */
  profile?: Profile | undefined
  /**
   * `signIn` on sign-in, `signUp` on the sign-in that created the user (with an adapter),
   * `update` on POST /session, undefined on a plain read.
   */
  trigger?: 'signIn' | 'signUp' | 'update' | undefined
  /** Only on sign-in: true when this sign-in created the user. */
  isNewUser?: boolean | undefined
  /** On `update`: the `data` sent to POST /session. */
  session?: unknown
}

/**
 * Callbacks (spec §2.1, §4.3). Each may be async. Defaults: `signIn` allows, `redirect` keeps
 * same-origin URLs only, `jwt` returns the token, `session` maps the token onto the session.
 */
export interface CallbacksOptions {
  /** Return `false` to deny (AccessDenied), or a path to redirect there instead. */
  signIn?: ((params: {
    /** The stored user when the account is known, else the user the provider's profile maps to. */
    user: User
    account: Account | null
    /** OAuth/OIDC: the provider's profile. */
    profile?: Profile | undefined
    /** Credentials: the submitted fields. */
    credentials?: Record<string, unknown> | undefined
    /**
     * E-mail: `{ verificationRequest: true }` when the link is about to be sent (POST /signin/<id>;
     * `user` is then the stored user, or a new one not yet stored). Absent when the link is
     * followed, the second call of an e-mail sign-in.
     */
    email?: { verificationRequest?: boolean | undefined } | undefined
    /**
     * The second factor the user gave after the first (`twoFactor` option): a TOTP code or one of
     * their recovery codes. Absent when none was asked (the user has not enrolled, or the sign-in
     * method is not one that asks).
     */
    twoFactor?: SecondFactorProof | undefined
  }) => Awaitable<boolean | string>) | undefined
  /**
   * Decides where to send the user after sign-in or sign-out. `baseUrl` is the site's origin.
   * The default accepts relative paths and URLs of the same origin only. A custom callback may
   * allow other origins; that is then its responsibility.
   */
  redirect?: ((params: { url: string; baseUrl: string }) => Awaitable<string>) | undefined
  /** Shapes the JWT; return `null` to end the session. */
  jwt?: ((params: JWTCallbackParams) => Awaitable<JWT | null>) | undefined
  /**
   * Shapes what `auth()` and `/session` return. JWT sessions pass the decoded `token`; database
   * sessions pass the adapter's `user`. On POST /session, `trigger` is `update` and `newSession`
   * the `data` sent.
   */
  session?: ((params: SessionCallbackParams) => Awaitable<Session>) | undefined
  /**
   * Decides in the `auth` middleware whether the request may go on: `true`/`undefined` go on,
   * `false` redirects to sign-in (401 JSON for JSON clients), a WHATWG `Response` is sent as is.
   * Its redirect target must not itself be protected by it (spec §4.3 rule 2).
   */
  authorized?: ((params: { auth: Session | null; request: import('express').Request }) => Awaitable<boolean | undefined | Response>) | undefined
}

/**
 * Parameters of the `session` callback. As in Auth.js, both `token` and `user` are typed, but only
 * one is set: `token` with JWT sessions, `user` (the adapter's row) with database sessions.
 */
export interface SessionCallbackParams {
  session: Session
  /** JWT sessions only: the decoded token, after the `jwt` callback. */
  token: JWT
  /** Database sessions only: the session's user as the adapter returned it. */
  user: AdapterUser
  /** `update` on POST /session. */
  trigger?: 'update' | undefined
  /** Database sessions, on POST /session: the `data` sent. (JWT sessions get it in the `jwt` callback.) */
  newSession?: unknown
}

/**
 * What may end a user's sessions, as the `sessionRevoked` event's `by` names it: the session list's
 * three here, and each wing's own, added where it declares them (`declare module`, as
 * src/features/password/types.ts adds `resetPassword`, `changePassword` and `addressClaimed`).
 */
export interface SessionRevocationCauses {
  revokeSession: true
  revokeOtherSessions: true
  signOutEverywhere: true
}

/** Events (spec §6): awaited, and a throwing handler is logged, never breaks the flow. */
export interface EventsOptions {
  signIn?: ((message: { user: User; account: Account | null; profile?: Profile | undefined; isNewUser?: boolean | undefined }) => Awaitable<void>) | undefined
  /** JWT sessions: the token that ended (`null` if unreadable); database sessions: the deleted session. */
  signOut?: ((message: { token: JWT | null; session?: undefined } | { session: AdapterSession | null; token?: undefined }) => Awaitable<void>) | undefined
  /** Each time a session is read (`auth()`, GET /session): with the token (JWT) or without (database). */
  session?: ((message: { session: Session; token?: JWT | undefined }) => Awaitable<void>) | undefined
  createUser?: ((message: { user: User }) => Awaitable<void>) | undefined
  /**
   * A session ended, once per session: by `revokeSession()`, `revokeOtherSessions()`,
   * `signOutEverywhere()` (or their routes), or a wing's cause (`SessionRevocationCauses`: the
   * password wing's reset, change and claimed address).
   */
  sessionRevoked?: ((message: { userId: string; sessionId: string; by: keyof SessionRevocationCauses & string }) => Awaitable<void>) | undefined
  updateUser?: ((message: { user: User }) => Awaitable<void>) | undefined
  linkAccount?: ((message: { user: User; account: Account }) => Awaitable<void>) | undefined
  /** One of the user's provider accounts was removed (`unlinkAccount()`, the account page's "disconnect"). */
  accountUnlinked?: ((message: { userId: string; account: AdapterAccount }) => Awaitable<void>) | undefined
  /**
   * A sign-in was refused (any method, through the routes): `error` its type (`CredentialsSignin`,
   * `OAuthCallbackError`, `RateLimited`, …) and `code` the sign-in page's code when it has one. Who
   * tried is not known (that is why it failed); the request is (`'*'`'s fields, the audit log's row).
   * Not awaited: the refusal's answer does not wait for it.
   */
  signInFailed?: ((message: { error: string; code?: string | undefined }) => Awaitable<void>) | undefined
  /** The user's address was proven for the first time (a mailed link or code, a verifying provider). */
  emailVerified?: ((message: { user: User }) => Awaitable<void>) | undefined
  /**
   * Every event but `session` (which comes with each session read: name it to get it), after its own
   * handler: the event's name, its message, and the message's identifiers (`EventFields`: no token,
   * fit for a log line or a queue). Awaited; one that throws is logged as `EventError`.
   */
  '*'?: ((...event: AnyEvent) => Awaitable<void>) | undefined
}

/**
 * The `telemetry` option: OpenTelemetry spans and counters through `@opentelemetry/api`, a no-op until
 * the app registers an SDK. `true` traces sign-ins, callbacks and the OAuth engine's requests and
 * counts sign-ins, refusals and rate-limit rejections; the session read only with `sessionReads`.
 */
export interface TelemetryOptions {
  /** A span and a counter for each session read of `auth()` too. Default `false`: the read is the hot path. */
  sessionReads?: boolean | undefined
}

/** The name of an event (`EventsOptions`'s keys but `'*'`). */
export type EventName = Exclude<keyof EventsOptions, '*'>

/** The message of event `Name`. */
export type EventMessage<Name extends EventName> = Parameters<NonNullable<EventsOptions[Name]>>[0]

/** What the `'*'` handler is called with; `name` tells `message`'s type apart. */
export type AnyEvent = { [Name in Exclude<EventName, 'session'>]: [name: Name, message: EventMessage<Name>, fields: EventFields] }[Exclude<EventName, 'session'>]

/** The identifiers of an event's message: what a log line or a queue needs, never a token, profile or secret. */
export interface EventFields {
  userId?: string | undefined
  provider?: string | undefined
  /** `signIn`: whether the sign-in created the user. */
  isNewUser?: boolean | undefined
  /** `sessionRevoked`: what ended the session. */
  by?: string | undefined
  /** `recoveryCodeUsed`: the codes left. */
  remaining?: number | undefined
}

/** A fixed window of the `rateLimit` option: at most `attempts` in `windowSeconds`. */
export interface RateLimitWindow {
  /** Attempts allowed in one window; the next is refused (429) until the window ends. */
  attempts: number
  /** Length of the window in seconds. It starts with the first attempt counted. */
  windowSeconds: number
}

/**
 * A Knex instance (`knex(config)`) on PostgreSQL (`pg`), MySQL/MariaDB (`mysql2`) or SQLite
 * (`better-sqlite3`, `sqlite3`). Typed loosely so that apps without Knex need not install it.
 */
export interface RateLimitKnex {
  raw: (...args: never[]) => unknown
  schema: unknown
  client: unknown
}

/** A Redis client: ioredis 5 or 6, or node-redis (the `redis` package, 4 and later; tested with 6). */
export interface RateLimitRedis {
  multi: (...args: never[]) => unknown
}

/**
 * Where sign-in attempts are counted.
 * - `'memory'` (default): in this process, per `Portcullis()` instance. Several processes (a
 *   cluster, several servers) each count on their own, so an attacker gets the limit once per process.
 * - `{ knex }`: in a table of the app's database (PostgreSQL, MySQL/MariaDB, SQLite), shared by every
 *   process using it. The table (default `portcullis_rate_limit`) is created on the first sign-in
 *   when missing, unless `createTable: false` (then create it in a migration: see the README).
 * - `{ redis }`: in Redis (keys `<keyPrefix>:ip:…` and `<keyPrefix>:id:…`, expiring with their window),
 *   shared by every process using it.
 */
export type RateLimitStore =
  | 'memory'
  | { knex: RateLimitKnex; tableName?: string | undefined; createTable?: boolean | undefined }
  | { redis: RateLimitRedis }

/**
 * Brute-force limits on credentials and e-mail sign-in (`rateLimit` option). On by default with the
 * defaults below; `rateLimit: false` turns them off. A refused attempt gets `429` with `Retry-After`
 * and the code `RateLimited`.
 *
 * What counts: a credentials attempt that does not sign in counts against the client IP and its
 * identifier (it is counted before the password is checked, and given back if it signs in; a
 * successful sign-in also clears the identifier's count); every e-mail sign-in request counts
 * against both.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis'
 * Portcullis({ providers, rateLimit: { store: { redis: new Redis(process.env.REDIS_URL!) }, identifier: { attempts: 5 } } })
 * ```
 */
export interface RateLimitOptions {
  /** Where attempts are counted. Default `'memory'`. */
  store?: RateLimitStore | undefined
  /**
   * Per client IP, as Express computes `req.ip` (`trust proxy` honoured; `req.socket.remoteAddress`
   * on Connect and node:http). Default `{ attempts: 50, windowSeconds: 900 }`; `false` turns it off.
   * Raise it when many users share one address and mistype (a campus, a company NAT).
   */
  ip?: Partial<RateLimitWindow> | false | undefined
  /**
   * Per identifier (the e-mail address or username tried), whatever the IP. Default
   * `{ attempts: 10, windowSeconds: 900 }`; `false` turns it off.
   */
  identifier?: Partial<RateLimitWindow> | false | undefined
  /**
   * The identifier of a credentials attempt, from the submitted fields (without `csrfToken` and
   * `callbackUrl`). Default: the `email` field, else `username`, else the first field of the
   * provider's `credentials` that is not of type `password`. Return `undefined` to count the
   * attempt against the IP only. Identifiers are compared trimmed, in lower case.
   */
  credentialsIdentifier?: ((credentials: Record<string, unknown>, provider: { id: string }) => string | undefined | null) | undefined
  /**
   * IPv6 clients are counted by network: the first `ipv6Subnet` bits of the address (default 64,
   * the usual size of one subscriber's network, through which one client can rotate freely).
   * `128` counts each address on its own.
   */
  ipv6Subnet?: number | undefined
  /** Prefix of every key in the store, so several apps can share one Redis or table. Default `portcullis`. */
  keyPrefix?: string | undefined
  /**
   * Milliseconds a shared store may take to count an attempt; past it the attempt is counted in this
   * process's memory instead (as when the store is down). Default 1000.
   */
  storeTimeoutMs?: number | undefined
}

declare global {
  // `req.auth` on Express's Request, set by every form of `auth`.
  namespace Express {
    interface Request {
      auth?: Session | null | undefined
    }
  }
}
