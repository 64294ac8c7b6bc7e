/**
 * What one feature (a wing: OAuth, e-mail links, passwords, passkeys, the second factor, …) gives
 * Portcullis. The core (the router, the server-side API, configuration, the session read, the
 * sign-in steps every method shares) knows features only through this shape; each wing declares
 * one in its `feature.ts`, and `src/features/index.ts` lists them. A feature's code past its
 * declaration loads on its first use: routes and provider methods are loaders, not modules.
 */
import type { ServerResponse } from 'node:http'
import type { Action, ActionContext } from '../actions/context.js'
import type { Api } from '../api/context.js'
import type { ConfiguredProvider, CredentialReader, PortcullisConfig, ResolvedConfig, SessionUserField } from '../config/types.js'
import type { NodeRequest } from '../http/request.js'
import type { AuthResponse } from '../http/respond.js'
import type { EventObserver } from '../events.js'
import type { Account, Adapter, AdapterAccount, AdapterUser, SecondFactorProof, Session, User } from '../types.js'
import type { LoggerInstance } from '../logger.js'
import type { SafeHtml } from '../pages/html.js'
import type { PageScript } from '../pages/theme.js'
import type { ResolvedRateLimit } from '../security/rate-limit-config.js'
import type { FeatureCookie } from '../session/cookies.js'

/** An action, loaded on the route's first request. */
export type ActionLoader = () => Promise<Action>

/**
 * What answers every request under a feature's mount (`Feature.mount`) with Node's request and
 * response: `url` is the request's path and query below the mount, `mountPath` the path of the
 * mount itself as the site sees it (e.g. `/api/auth/oauth`).
 */
export type MountHandler = (req: NodeRequest, res: ServerResponse, at: { readonly config: ResolvedConfig; readonly url: string; readonly mountPath: string }) => Promise<void>

/** One route a feature adds under the base path. */
export interface FeatureRoute {
  readonly method: 'GET' | 'POST'
  /** Below the base path, e.g. `/passkeys`. */
  readonly path: string
  /**
   * GET only: it shows something and changes nothing (a page, a list, a script), so HEAD runs it as
   * GET. A GET route that uses a token or stores something is no page: HEAD answers 200 empty.
   */
  readonly page?: boolean
  /**
   * POST: it changes state, so its action refuses a request that carries no valid CSRF token from
   * this site (`assertCsrf`, first thing). A declaration for readers and tools: the router does not
   * check it a second time.
   */
  readonly csrf?: boolean
  /**
   * POST without `csrf`: another site's answer to a request this one made (a SAML response the
   * identity provider posts), which can carry no CSRF token; says what binds it to the browser's
   * request instead. The architecture test holds every POST route to `csrf` or this.
   */
  readonly boundBy?: string
  readonly load: ActionLoader
}

/** How the sign-in that waits for a further factor is finished: what its first factor had in hand. */
export interface Resume {
  readonly [field: string]: unknown
  /** The sign-in method's kind (`ProviderMethods.kind`). */
  readonly kind: string
  /** The provider's id. */
  readonly pid: string
}

/** What a feature does for the providers it serves (`ProviderMethods.claims`). */
export interface ProviderMethods {
  /** Its kind of sign-in, as the further-factor step (`Resume.kind`) and the `twoFactor` options name it. */
  readonly kind: string
  /** The provider `type`s it serves, for the error that names the known ones. */
  readonly types: readonly string[]
  /** Resolved after the others, for a provider that shares another's settings (`ProviderInit.resolved`). */
  readonly late?: boolean
  /** When set, at most one such provider may be configured, and this says why. */
  readonly single?: string
  /** Its sign-in happens at once (no redirect to a provider), so a server-side `signIn()` is CSRF-checked. */
  readonly signsInAtOnce?: boolean
  /** Whether the provider given in the config is this feature's (`type`, or a marker of its own). */
  claims(provider: { readonly type?: unknown }): boolean
  /**
   * Validates and freezes the provider at init.
   * @throws InvalidConfigurationError saying what to change.
   */
  resolve(provider: never, init: ProviderInit): ConfiguredProvider
  /**
   * POST /signin/:id: starts the sign-in (the redirect to the provider, the mailed link). Without it
   * the browser goes to the sign-in page, whose form posts to /callback/:id.
   */
  readonly start?: () => Promise<(ctx: ActionContext, provider: never, options: SignInStart) => Promise<AuthResponse>>
  /** GET, POST /callback/:id: the end of the sign-in. */
  readonly callback: () => Promise<(ctx: ActionContext, provider: never) => Promise<AuthResponse>>
  /** The server-side `signIn(id, fields)` of a method whose form the app posts itself (credentials, passwords). */
  readonly submit?: () => Promise<(ctx: ActionContext, provider: never, fields: Record<string, unknown>) => Promise<AuthResponse>>
  /** Finishes a sign-in of this kind that waited for a further factor (`Resume`), once it is given. */
  readonly resume?: () => Promise<(ctx: ActionContext, provider: never, pending: { userId: string; resume: Resume }, proof: SecondFactorProof) => Promise<AuthResponse>>
  /** What the built-in sign-in page shows for the provider, besides its name and button. */
  signInPage?(ctx: ActionContext, provider: never, callbackUrl: string): SignInPageEntry
}

/** One way to confirm a sign-in on the account's confirmation page: a field the user types. */
export interface ConfirmationMethod {
  /** Posted as `method`, recorded as the session's `confirmedWith`: `password`, `two-factor`. */
  readonly method: string
  /** The field's label, e.g. `Password`. */
  readonly label: string
  /** The posted field's name. */
  readonly field: string
  /** The input's type and `autocomplete`. */
  readonly input: 'password' | 'one-time-code'
}

/** What starting a sign-in takes (POST /signin/:id, or the server-side `signIn`). */
export interface SignInStart {
  readonly callbackUrl: string
  readonly fields: Record<string, unknown>
  /** Extra authorization parameters (OAuth). */
  readonly authorizationParams?: ConstructorParameters<typeof URLSearchParams>[0] | undefined
}

/** A provider's part of the built-in sign-in page. */
export interface SignInPageEntry {
  /** Where its form posts: `signin` (a redirect or a mailed link follows) or `callback` (the form is the sign-in). */
  readonly posts?: 'signin' | 'callback'
  readonly credentials?: Record<string, unknown> | undefined
  readonly links?: { href: string; label: string }[] | undefined
  readonly optionsUrl?: string | undefined
  readonly conditional?: boolean | undefined
  /** The script the page loads for it (`/webauthn.js`): its tag's values, and its absolute URL. */
  readonly script?: { readonly page: PageScript; readonly url: string } | undefined
  /** The "confirm your address first" form posts here. */
  readonly resendAction?: string | undefined
}

/** What resolving a provider may use: the environment, the site's URL and the redirect proxy. */
export interface ProviderInit {
  readonly env: Readonly<Record<string, string | undefined>>
  readonly production: boolean
  readonly url: URL | undefined
  readonly redirectProxyUrl: string | undefined
  /** The config's providers as given (bare factories called). */
  readonly given: readonly { readonly type?: unknown }[]
  /** For a `late` provider: the others, resolved. */
  readonly resolved: readonly ConfiguredProvider[]
}

/** What resolving a feature's own option may use. */
export interface OptionInit {
  readonly adapter: Adapter | undefined
  readonly rateLimit: ResolvedRateLimit | false
  readonly logger: LoggerInstance
}

/**
 * The points of the shared sign-in and account steps where a feature takes part. Each is run for
 * the enabled features in the registry's order; the first answer wins where one is returned.
 */
export interface FeatureHooks {
  /**
   * A notice every built-in page shows at its top for this request (the admin wing's banner during
   * an impersonation), or undefined. Asked for each page's HTML answer.
   */
  pageBanner?(ctx: ActionContext): Promise<SafeHtml | undefined>
  /**
   * A first factor proved `userId` (a password, a link, an OAuth account, a passkey): the answer that
   * asks for another factor instead of starting the session, or undefined to go on.
   */
  afterFirstFactor?(ctx: ActionContext, userId: string, resume: Resume): Promise<AuthResponse | undefined>
  /** Whether a sign-in of this kind would ask a further factor of an enrolled user. */
  asksFurtherFactor?(config: ResolvedConfig, kind: string): boolean
  /** Whether `userId` has set up a further factor (a passkey registration then asks for it). */
  hasFurtherFactor?(ctx: Pick<ActionContext, 'config'>, userId: string): Promise<boolean>
  /** Checks a code of `userId`'s further factor. @throws TwoFactorError `invalid_code`; RateLimitedError */
  checkFurtherFactor?(ctx: ActionContext, userId: string, code: string): Promise<void>
  /** `provider` proved the address of `user`, whose address was never verified. */
  addressProven?(ctx: ActionContext, user: AdapterUser, provider: string): Promise<void>
  /** Whether the user has a way in of this feature's that is no account row (a password, a verified address). */
  signsInWithoutAccount?(ctx: Pick<ActionContext, 'config'>, adapter: Adapter, userId: string): Promise<boolean>
  /**
   * Whether `account` is a record this feature keeps of its user rather than a way in that the user
   * may remove (the SSO wing's SCIM marks): `unlinkAccount()` leaves it, as if it were not linked.
   */
  keepsAccount?(config: ResolvedConfig, account: AdapterAccount): boolean
  /** An account row of the user was removed by `unlinkAccount()`. */
  accountUnlinked?(config: ResolvedConfig, account: AdapterAccount): Promise<void>
  /**
   * The ways of this feature the signed-in `userId` can confirm who they are with before a
   * sensitive action (the account's confirmation page, docs/account.md): a field each, typed on the page.
   */
  confirmationMethods?(ctx: ActionContext, userId: string): Promise<readonly ConfirmationMethod[]>
  /**
   * Checks the confirmation `method` posted with `fields` for `userId`.
   * @returns false when `method` is not this feature's; true when it proved the user.
   * @throws an AuthError when it did not (a wrong password, RateLimitedError).
   */
  confirmSignIn?(ctx: ActionContext, userId: string, method: string, fields: Record<string, unknown>): Promise<boolean>
  /**
   * A built-in sensitive action of another feature is about to run for the signed-in user (`what`:
   * `changePassword()`, `POST /two-factor/disable`, …): throws RecentSignInRequiredError, its `url`
   * the confirmation page coming back to `returnTo`, when the session's last sign-in or confirmation
   * is too old for it. The account wing gives it (`account.recentSignInMaxAge`); without it the
   * actions run as before. Signed out, it lets the action say so itself.
   */
  sensitiveAction?(ctx: ActionContext, what: string, returnTo: string): Promise<void>
  /**
   * `user` was deleted (`deleteAccount()`): the adapter's `deleteUser` removed every row of it in one
   * transaction; this is for what a feature keeps elsewhere (a cache, a store). Errors are logged.
   */
  userDeleted?(config: ResolvedConfig, user: AdapterUser): Promise<void>
  /**
   * A sign-in of `user` (any method: the core's sign-in finish) has stored its session and is about
   * to answer with `redirect`: the URL to send the browser to instead, or undefined. The account
   * wing restores an account in its deletion grace period here, so that every way in restores it.
   * Throwing refuses the sign-in (its session cookie is not sent).
   */
  sessionStarted?(ctx: ActionContext, user: User | AdapterUser, redirect: string): Promise<string | undefined>
  /**
   * A sign-in of `user` (any method: the core's sign-in finish) is about to start its session: throw
   * (an AuthError of kind `signIn`) to refuse it, before any session or cookie exists (the admin
   * wing's ban; the SSO wing's SSO-only organizations). `account` says how it signed in (its provider).
   */
  beforeSession?(ctx: ActionContext, user: User | AdapterUser, account: Account): Promise<void>
  /**
   * Every session of `userId` was ended at once (`signOutEverywhere()`, an administrator's revocation
   * or ban, the account's deletion, an address change): for what a feature keeps that acts for the
   * user beyond a session (the authorization server's grants). Composed at init into
   * `ResolvedConfig.everySessionEnded`. Errors are logged.
   */
  everySessionEnded?(config: ResolvedConfig, userId: string): Promise<void>
  /** An administrator banned `userId` (every session ended) or lifted the ban: for what a feature keeps elsewhere (a cache). Errors are logged. */
  banChanged?(config: ResolvedConfig, userId: string): Promise<void>
  /**
   * Rows of the feature's own the background prune (`prune` option) deletes each time it runs,
   * after the adapter's `prune`, with the config the feature resolved (the account wing: accounts
   * whose deletion grace period is over). Returns how many of each it deleted; errors are logged.
   */
  prune?(config: ResolvedConfig, signal: AbortSignal): Promise<Readonly<Record<string, number>>>
  /**
   * An event was emitted (every event but `session`, which comes with each session read): `name`,
   * its message and its identifiers (`EventFields`, as the `'*'` handler gets them). Called at once,
   * inside the request that emitted it, before the app's handlers, and never awaited: queue the work
   * (the audit log writes after the response), never block, never throw (a throw is logged).
   */
  event?: EventObserver
  /** Runs once at init, after the config is resolved and frozen (the background prune). */
  started?(config: ResolvedConfig): void
  /**
   * Authenticates a request that carries no session cookie from its headers (an API key, an access
   * token): composed at init into `ResolvedConfig.credentials`, consulted by `auth()`, its middleware
   * and `requireScopes()`. The first enabled feature whose `carries` says yes reads the request.
   */
  readCredential?: CredentialReader
  /**
   * A field of the session's user this feature carries, out of the app's callbacks' reach (the
   * roles): composed at init into `ResolvedConfig.sessionUserFields`, applied by both session strategies.
   */
  sessionUserField?: SessionUserField
  /**
   * Roles of the session's user that `hasPermission` and `requirePermission` check besides the
   * `roles` option's (the organizations wing: the user's roles in the session's active organization).
   */
  permissionSource?: PermissionSource
  /**
   * An owner of credentials (API keys) besides a user: the organizations wing's `organization`.
   * The API keys wing asks it whether a signed-in user may manage that owner's keys.
   */
  credentialOwner?: CredentialOwnerType
}

/** A kind of owner of credentials besides a user (`FeatureHooks.credentialOwner`). */
export interface CredentialOwnerType {
  /** The owner's type, as an API key stores it (`organization`). */
  readonly type: string
  /** Whether `userId` may create, list, revoke and rotate the credentials of owner `ownerId` (fresh from the database). */
  mayManage(config: ResolvedConfig, userId: string, ownerId: string): Promise<boolean>
}

/** Where a permission check finds roles, and what they grant (`FeatureHooks.permissionSource`). */
export interface PermissionSource {
  /** The statements and the check of these roles (an `AccessControl` of `defineAccess`). */
  access(config: ResolvedConfig): { readonly statements: Readonly<Record<string, readonly string[]>>; can(roles: readonly string[], permissions: Readonly<Record<string, readonly string[] | undefined>>): boolean }
  /** The session's roles here, or undefined for none. Synchronous and cheap: no I/O. */
  rolesOf(session: Session): readonly string[] | undefined
}

/** One feature. */
export interface Feature {
  /** Its folder under `src/features/`, and its key in `ResolvedConfig.features`. */
  readonly name: string
  /** The features whose modules this one imports (the import test holds it to this list). */
  readonly requires?: readonly string[]
  /**
   * It starts sessions on another user's behalf (the admin wing's impersonation): the database
   * session read then asks for the session row's `impersonatedBy` (`ResolvedConfig.sessionReadWith`).
   */
  readonly impersonates?: boolean
  /** The providers it serves; a feature without any is turned on by its option (`enabled`). */
  readonly providers?: ProviderMethods
  /**
   * Whether the config turns it on, for a feature that serves no providers (one that does is on
   * when a provider of its is configured).
   */
  enabled?(config: PortcullisConfig): boolean
  /**
   * Resolves the feature's own option at init, into what `ResolvedConfig.features[name]` holds.
   * @throws InvalidConfigurationError saying what to change.
   */
  resolve?(config: PortcullisConfig, init: OptionInit): unknown
  /** Checks what it needs of the resolved config (the adapter's methods, a session store). */
  check?(config: ResolvedConfig): void
  /** Its routes. When the feature is off they answer `off` as an unknown action, and nothing of them loads. */
  readonly routes?: readonly FeatureRoute[]
  /** Why its routes are unknown when it is off, and how to turn it on. */
  readonly off?: string
  /**
   * A path below the base path (`/oauth`) under which the feature answers every request itself, with
   * Node's request and response: the endpoints of a protocol a library serves with its own router
   * (the authorization server's oidc-provider). Loaded on its first request; unknown while the feature is off.
   */
  readonly mount?: { readonly path: string; readonly load: () => Promise<MountHandler> }
  /** Its server-side functions, merged into what `Portcullis()` returns (whether on or off: each says what it needs). */
  api?(api: Api): object
  readonly hooks?: FeatureHooks
  /** The adapter methods it calls (KnexAdapter has them all; a custom adapter is checked at init). */
  readonly adapterMethods?: readonly string[]
  /** The event names it emits (`events` option), besides the core's. */
  readonly events?: readonly string[]
  /** The `AuthError` types it throws, besides the core's. */
  readonly errors?: readonly string[]
  /** The rate-limit buckets it counts in (`rateLimit` option). */
  readonly rateLimitBuckets?: readonly string[]
  /**
   * The cookies it sets, by their key in `cookies` (the option, and `CookiesOptions`, which the wing
   * augments): the name without the `__Secure-` prefix, and a lifetime in seconds if the cookie has
   * one of its own. In the table whether the feature is on or off, so an override is always accepted.
   */
  readonly cookies?: Readonly<Record<string, FeatureCookie>>
}

