/**
 * The configuration's own types: what the app writes (`PortcullisConfig`, naming its providers) and
 * what init resolves it into (`ResolvedConfig`, frozen, read by every part of Portcullis). Above the
 * ground-floor types (../types.ts) and the provider shapes (../providers/), which they name; below
 * everything that reads the configuration.
 */
import type { LoggerInstance, LoggerOption } from '../logger.js'
import type { ResolvedRateLimit } from '../security/rate-limit-config.js'
import type { OriginPattern } from '../security/redirect.js'
import type { KeyRing } from '../session/keys.js'
import type { SessionStore } from '../session/store/types.js'
import type { StoreTimeouts } from '../session/store/deadline.js'
import type {
  Adapter,
  AdapterSession,
  CallbacksOptions,
  CookiesOptions,
  EventsOptions,
  JWTOptions,
  PagesOptions,
  ProviderType,
  RateLimitOptions,
  RedirectProxyOptions,
  SessionOptions,
  SessionUserOptions,
  Theme,
  TelemetryOptions,
} from '../types.js'
import type { ResolvedTelemetry } from './telemetry.js'
import type { IncomingMessage } from 'node:http'
import type { Session } from '../types.js'

/**
 * The provider shapes the config accepts, by kind: each sign-in wing adds its own (`declare module`
 * in its `types.ts`: credentials, passwords, OAuth 2, OpenID Connect, e-mail, passkeys), so this
 * file names none.
 */
export interface ProviderConfigs {}

/** A provider as written in the config: one of `ProviderConfigs`. */
export type Provider = ProviderConfigs[keyof ProviderConfigs]
/** A provider as the config accepts it: a provider object, or a built-in provider factory given bare. */
export type ProviderInput = Provider | ((options?: Record<string, never>) => Provider)

/** The configuration object of `Portcullis(config)` (spec §2.1 LibConfig). */
export interface PortcullisConfig {
  providers: ProviderInput[]
  /**
   * Stores users, accounts, sessions and verification tokens, e.g. `KnexAdapter(knex)` from
   * `portcullis/adapters/knex`. With an adapter the session strategy defaults to `database`.
   */
  adapter?: Adapter | undefined
  /** A string, or a list whose first entry seals new cookies and all of which are accepted (rotation). */
  secret?: string | string[] | undefined
  session?: SessionOptions | undefined
  jwt?: JWTOptions | undefined
  callbacks?: CallbacksOptions | undefined
  events?: EventsOptions | undefined
  /** `console`, pino, winston, Auth.js's `{ error, warn, debug }` or `{ log(record) }`: see `LoggerOption`. */
  logger?: LoggerOption | undefined
  debug?: boolean | undefined
  pages?: PagesOptions | undefined
  theme?: Theme | undefined
  /**
   * Where the router is mounted, for `auth()` redirects made outside it. Default: the path of
   * `AUTH_URL`, else `/api/auth`. Inside the router the mount path is always used.
   */
  basePath?: string | undefined
  /**
   * How the site's origin is found when `AUTH_URL` is not set. `undefined` (default): Express's own
   * rules (`X-Forwarded-Proto`/`-Host` only from proxies that `app.set('trust proxy', ...)` trusts).
   * `true`: `X-Forwarded-Proto`/`-Host` from any client (only behind a proxy that sets them).
   * `false`: never from the request; `AUTH_URL` is then required.
   */
  trustHost?: boolean | undefined
  /** Secure (`__Secure-`/`__Host-`) cookies. Default: when the site is served over HTTPS. */
  useSecureCookies?: boolean | undefined
  /** Override any cookie's name and options; give each overridden cookie's options whole. */
  cookies?: Partial<CookiesOptions> | undefined
  /** Base of OAuth redirect URIs (spec §2.1); default `AUTH_REDIRECT_PROXY_URL`. */
  redirectProxyUrl?: string | undefined
  /** What this deployment does as the redirect proxy of others. */
  redirectProxy?: RedirectProxyOptions | undefined
  /**
   * Brute-force limits on credentials and e-mail sign-in, per client IP and per identifier. On by
   * default (in memory); `false` turns them off. See `RateLimitOptions`.
   */
  rateLimit?: RateLimitOptions | boolean | undefined
  /** Off by default. OpenTelemetry spans and counters (`@opentelemetry/api`, loaded when first used): see `TelemetryOptions`. */
  telemetry?: TelemetryOptions | boolean | undefined
}

/**
 * A provider as the routes use it: resolved, validated and frozen by the feature that serves it
 * (`ProviderMethods.resolve`), which knows its other fields.
 */
export interface ConfiguredProvider {
  readonly id: string
  readonly name: string
  readonly type: ProviderType
}

/** Cookie names and the session key ring for one of the two cookie flavours. */
export interface CookieSet {
  readonly secure: boolean
  readonly cookies: CookiesOptions
  /** Keys for the session JWE; the salt is this flavour's session cookie name. */
  readonly ring: KeyRing
}

/**
 * How a request that carries no session cookie may be authenticated from its headers instead (an
 * API key; an OAuth access token later): a feature's `readCredential` hook, composed at init into
 * `ResolvedConfig.credentials`, which `auth()`, its middleware and `requireScopes()` consult.
 */
export interface CredentialReader {
  /**
   * Whether `req` carries this feature's credential (in a header, or wrongly in its URL). Synchronous
   * and cheap, with no module loaded: it runs on every request of an app that turns the feature on.
   */
  carries(config: ResolvedConfig, req: IncomingMessage): boolean
  /** Reads it: the feature's code loads on the first call. Never throws for a bad credential: it answers a refusal. */
  read(config: ResolvedConfig, req: IncomingMessage): Promise<CredentialRead>
}

/**
 * A field of the session's user that a wing carries from where the user is stored, which no app
 * callback can change (the roles: `session.user.roles`): a feature's `sessionUserField` hook,
 * composed at init into `ResolvedConfig.sessionUserFields`. With JWT sessions it is a claim of its
 * own name, set at sign-in after the `jwt` callback and put back after it on every later read (so a
 * callback that copies the client's `update()` data into the token cannot forge it); with database
 * sessions it comes with the user in `getSessionAndUser`'s one query (`with: [name]`). Either way the
 * `session` callback's answer gets it back too. Synchronous and cheap: it runs on every session read.
 */
export interface SessionUserField {
  /** The field of `session.user`, the JWT claim, and the adapter user's field. */
  readonly name: string
  /** The field's value from the claim as the token was sealed (undefined in a token from before the field). */
  fromClaim(config: ResolvedConfig, claim: unknown): unknown
  /** The field's value from the stored user's (database sessions). */
  fromUser(config: ResolvedConfig, value: unknown): unknown
  /** The claim's value for a new JWT session of `userId` (one adapter read at sign-in). */
  atSignIn(config: ResolvedConfig, userId: string): Promise<unknown>
  /**
   * Set for a field of the session rather than of its user (the active organization): with database
   * sessions, `atSignIn`'s value is stored on the new session row as these fields, and the join reads it back.
   */
  perSession?(value: unknown): Partial<AdapterSession>
}

/** What reading a credential found: who it authenticates, or why it was refused (RFC 6750 §3.1). */
export type CredentialRead =
  | { readonly auth: Session; readonly refusal?: undefined }
  | { readonly auth: null; readonly refusal: CredentialRefusal }

/** A refused credential, as the `WWW-Authenticate: Bearer` answer says it (RFC 6750 §3.1). */
export interface CredentialRefusal {
  /** `invalid_request` (400: malformed, or in the URL), `invalid_token` (401: unknown, expired, revoked), or 429 when limited. */
  readonly error: 'invalid_request' | 'invalid_token' | 'rate_limited'
  /** For the client: what was wrong, never the credential. */
  readonly description: string
  /** With `rate_limited`: the seconds until it may try again (`Retry-After`). */
  readonly retryAfter?: number | undefined
}

/** The resolved, frozen configuration every other module reads. */
export interface ResolvedConfig {
  readonly providers: readonly ConfiguredProvider[]
  readonly providerById: ReadonlyMap<string, ConfiguredProvider>
  /** Newest first; the first seals. */
  readonly secrets: readonly string[]
  readonly session: {
    readonly strategy: 'jwt' | 'database'
    readonly maxAge: number
    readonly updateAge: number
    readonly generateSessionToken: () => string
    /** JWT sessions' store (`session.store`), guarded; undefined when not configured. */
    readonly store: SessionStore | undefined
    /** Milliseconds a check of a JWT session is trusted before the store is asked again. */
    readonly revocationCacheMs: number
    /** Milliseconds a confirmed JWT session is still let in while the store cannot be reached. */
    readonly storeOutageMs: number
    /** `session.storeTimeoutMs`: how long a shared store's (or the adapter's session) read or write may take. */
    readonly storeTimeouts: StoreTimeouts
  }
  /** The adapter, its methods guarded (config/adapter.ts); it has the session methods when the strategy is `database`. */
  readonly adapter: Adapter | undefined
  readonly jwt: Readonly<Required<Pick<JWTOptions, 'maxAge' | 'maxSize' | 'cacheSize'>> & Pick<JWTOptions, 'encode' | 'decode'>>
  readonly callbacks: Readonly<Required<Pick<CallbacksOptions, 'redirect'>> & Omit<CallbacksOptions, 'redirect'>>
  readonly events: Readonly<EventsOptions>
  readonly logger: LoggerInstance
  readonly pages: Readonly<PagesOptions>
  readonly theme: Readonly<Theme>
  readonly basePath: string
  /** True when `basePath` came from the config or `AUTH_URL`, not the default. */
  readonly basePathExplicit: boolean
  /** The site's URL from `AUTH_URL`: when set, the request's Host is never consulted. */
  readonly url: URL | undefined
  readonly trustHost: boolean | undefined
  /** `NODE_ENV=production` at init: the Host header is then never trusted by default. */
  readonly production: boolean
  readonly useSecureCookies: boolean | undefined
  readonly cookieSets: { readonly secure: CookieSet; readonly insecure: CookieSet }
  readonly redirectProxyUrl: string | undefined
  /** Origins (besides its own) this deployment forwards OAuth callbacks to as the redirect proxy. */
  readonly redirectProxyAllowedOrigins: readonly OriginPattern[]
  /** Brute-force limits on sign-in (security/rate-limit.ts); `false` when turned off. */
  readonly rateLimit: ResolvedRateLimit | false
  /**
   * The store several processes share for the refresh lease and the used refresh tokens:
   * `session.store`, else a shared rate-limit store; undefined when each process keeps its own.
   */
  readonly sharedStore: SessionStore | undefined
  /**
   * Each enabled feature's own option as it resolved it (`Feature.resolve`), by feature name: the
   * background prune's under `prune`, the second factor's under `two-factor`.
   */
  readonly features: Readonly<Record<string, unknown>>
  /** OpenTelemetry (src/telemetry/); `false` when off. */
  readonly telemetry: ResolvedTelemetry | false
  /**
   * The enabled features' credential readers (`FeatureHooks.readCredential`), composed; undefined
   * when none is on, and then the session read looks at no header.
   */
  readonly credentials: CredentialReader | undefined
  /**
   * The enabled features' session user fields (`FeatureHooks.sessionUserField`); undefined when none
   * is on, and then the session read carries none.
   */
  readonly sessionUserFields: readonly SessionUserField[] | undefined
  /**
   * What the database session read asks `getSessionAndUser` for besides the user (`{ with }`): the
   * session user fields' names, and `impersonatedBy` when a feature starts sessions on another
   * user's behalf (`Feature.impersonates`). Built once; undefined when nothing.
   */
  readonly sessionReadWith: SessionUserOptions | undefined
  /**
   * The enabled features' `everySessionEnded` hooks (the authorization server ends the user's grants
   * with them), run when every session of a user is ended; empty when none is on.
   */
  readonly everySessionEnded: readonly ((config: ResolvedConfig, userId: string) => Promise<void>)[]
}
