/**
 * What the authorization server wing adds to the shared interfaces, by module augmentation: its
 * option on `PortcullisConfig`, its adapter methods on `Adapter`, its events on `EventsOptions`; and
 * the shapes its functions and `req.auth` use.
 */
import type { SessionUser } from '../../types.js'

/**
 * A client of the authorization server, as RFC 7591 §2 names its metadata (oidc-provider checks it
 * all at init): `client_id`, `redirect_uris`, `grant_types`, `token_endpoint_auth_method`, … and
 * Portcullis's `first_party`.
 */
export interface AuthorizationServerClient {
  client_id: string
  /** A confidential client's secret (32 characters or more); none for a public client (`token_endpoint_auth_method: 'none'`). */
  client_secret?: string | undefined
  /** What the consent page and the "apps with access" page call it. */
  client_name?: string | undefined
  /** `web` (default) or `native`: a native client may use loopback (`http://127.0.0.1:<any port>/…`) and private-use scheme (`com.example.app:/…`) redirect URIs, RFC 8252 §7. */
  application_type?: 'web' | 'native' | undefined
  redirect_uris?: string[] | undefined
  post_logout_redirect_uris?: string[] | undefined
  /** Default `['authorization_code', 'refresh_token']`; add `urn:ietf:params:oauth:grant-type:device_code` or `client_credentials`. */
  grant_types?: string[] | undefined
  /** Default `client_secret_basic`; `none` for a public client (an app on a phone or a CLI: it cannot keep a secret). */
  token_endpoint_auth_method?: string | undefined
  /** The scopes it may ask for, space-separated. Default: every scope the server knows. */
  scope?: string | undefined
  /** The company's own app: it is given what it asks for without a consent page. Default false. */
  first_party?: boolean | undefined
  /** OpenID Connect Back-Channel Logout 1.0: where the server POSTs a logout token when the user signs out. */
  backchannel_logout_uri?: string | undefined
  [metadata: string]: unknown
}

/** An API (a resource server, RFC 8707) tokens may be issued for, besides this app's own. */
export interface AuthorizationServerResource {
  /** The scopes a token for it may carry. */
  scopes: string[]
  /** Seconds its access tokens live. Default the server's `accessTokenTtl`. */
  accessTokenTtl?: number | undefined
}

/**
 * An MCP server of this app (a path such as `/mcp`): an OAuth protected resource of its own (RFC 9728),
 * whose tokens carry its URL as their audience (RFC 8707) and are accepted nowhere else. See docs/mcp.md.
 */
export interface AuthorizationServerMcp {
  /** Its path on this site, e.g. `/mcp`: the resource is the site's origin and this path. */
  path: string
  /** The scopes its tokens may carry. Default `['mcp']`. The first 401 asks for all of them. */
  scopes?: string[] | undefined
  /** What the consent page and its metadata (`resource_name`) call it. Default the site's host and the path. */
  name?: string | undefined
  /** A page about it for developers (`resource_documentation`). */
  documentation?: string | undefined
  /** Seconds its access tokens live. Default the server's `accessTokenTtl`. */
  accessTokenTtl?: number | undefined
}

/** What the Redis store uses of an ioredis client (`store: { redis }`). */
export interface OAuthRecordRedis {
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>
}

/**
 * The `authorizationServer` option: Portcullis as an OAuth 2.1 authorization server and OpenID
 * Provider (oidc-provider inside), for native apps, CLIs, services and the company's other apps.
 * See docs/authorization-server.md.
 */
export interface AuthorizationServerOptions {
  /** Clients declared in code (the company's own apps). Others are registered with `registerOAuthClient()`. */
  clients?: AuthorizationServerClient[] | undefined
  /** The scopes of this app's own API that clients may ask for (e.g. `reports:read`), besides `openid profile email offline_access`. */
  scopes?: string[] | undefined
  /** Other APIs tokens may be issued for, by their resource indicator (an absolute URL). */
  resources?: Record<string, AuthorizationServerResource> | undefined
  /** Seconds an access token lives. Default 600. */
  accessTokenTtl?: number | undefined
  /** Seconds a refresh token lives (each use gives a new one). Default 14 days. */
  refreshTokenTtl?: number | undefined
  /**
   * Seconds a process trusts what it last learned of a grant before an access token issued under it
   * is checked against the store again (a grant ended in this process is refused at once; another
   * process may accept its tokens this long). Default 5; 0 checks on every request.
   */
  grantCheckSeconds?: number | undefined
  /** The device authorization grant (RFC 8628) for CLIs and TVs. Default true. */
  deviceFlow?: boolean | undefined
  /**
   * Where the records (grants, codes, refresh tokens, interactions, stored clients) are kept: the
   * adapter's OAuthRecord table by default, or Redis, `{ redis: new Redis(process.env.REDIS_URL) }`
   * (ioredis; each record expires by Redis's TTL). `keyPrefix` default `portcullis:oauth`.
   */
  store?: { redis: import('../../types.js').SessionStoreRedis; keyPrefix?: string | undefined } | undefined
  /** This app's MCP servers, each a protected resource with its own audience (docs/mcp.md). */
  mcp?: AuthorizationServerMcp | AuthorizationServerMcp[] | undefined
  /**
   * Client ID metadata documents: a client whose `client_id` is an `https` URL is described by the JSON
   * document served there, fetched when it first asks (no private addresses, 5 KB, 2.5 s, cached as its
   * headers say). MCP clients use them. Default false.
   */
  clientIdMetadataDocuments?: boolean | undefined
  /**
   * RFC 7591 dynamic client registration at `<issuer>/reg`: anyone may register a client (it is never
   * first-party, and `application_type` is required). Default false.
   */
  registration?: boolean | undefined
  /**
   * Let the server's own requests (client ID metadata documents, back-channel logout tokens) reach
   * loopback and private network addresses (an MCP client or a second app on the developer's machine).
   * Refused when NODE_ENV is `production`. Default false: oidc-provider refuses such addresses, but for
   * the back-channel logout URIs of the clients declared in `clients`.
   */
  allowPrivateAddressesInDevelopment?: boolean | undefined
  /**
   * The fetch of the server's own requests (default the global one). Its `init.dispatcher` is
   * oidc-provider's, which refuses private addresses: pass it on.
   */
  fetch?: ((url: string, init: RequestInit & { dispatcher?: unknown }) => Promise<Response>) | undefined
}

/** One app with access to the user's account (the "apps with access" page, `listAuthorizedApps()`). */
export interface AuthorizedApp {
  clientId: string
  name: string
  /** The scopes it was granted, OpenID Connect's and every API's together. */
  scopes: string[]
  /** When the user last granted it something (ISO 8601). */
  grantedAt: string
}

/**
 * `req.auth` for a request that sent an access token this server issued: who it was issued to (the
 * client), for whom (`user`, null for a machine client's own token from client credentials), what it
 * may do (`scopes`) and until when.
 */
export interface BearerAuth {
  type: 'bearer'
  /** The user the token acts for; null for a client credentials token (the client acts for itself). */
  user: SessionUser | null
  client: { id: string }
  scopes: string[]
  /** When the access token expires (ISO 8601). */
  expires: string
  /** The token's id (`jti`), for the app's logs; never the token. */
  tokenId: string
  [key: string]: unknown
}

/**
 * Where the authorization server keeps its records: the adapter's methods of these names (KnexAdapter's
 * sixteenth migration) by default, or Redis (`store: { redis }`). See the `Adapter` methods for each.
 */
export interface OAuthRecordStore {
  upsertOAuthRecord(record: AdapterOAuthRecord): Promise<void>
  findOAuthRecord(model: string, id: string): Promise<{ payload: Record<string, unknown>; consumedAt: Date | null } | null>
  findOAuthRecordBy(model: string, field: 'uid' | 'userCode', value: string): Promise<{ payload: Record<string, unknown>; consumedAt: Date | null } | null>
  consumeOAuthRecord(model: string, id: string, at: Date): Promise<boolean>
  deleteOAuthRecord(model: string, id: string): Promise<void>
  deleteOAuthGrant(grantId: string): Promise<void>
  listOAuthRecords(accountId: string, model: string): Promise<AdapterOAuthRecord[]>
  deleteOAuthAccount(accountId: string): Promise<number>
  pruneOAuthRecords?(before: Date): Promise<number>
}

/** One stored record of the authorization server (an oidc-provider model instance). */
export interface AdapterOAuthRecord {
  model: string
  id: string
  payload: Record<string, unknown>
  /** null: it does not expire. */
  expiresAt: Date | null
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * Portcullis as an OAuth 2.1 authorization server and OpenID Provider: its endpoints under
     * `<basePath>/oauth`, sign-in and consent on Portcullis's pages, access tokens read by `auth()`.
     * Needs the site's URL (`AUTH_URL`) and an adapter with its methods (KnexAdapter after the
     * authorization server migration). See `AuthorizationServerOptions` and docs/authorization-server.md.
     */
    authorizationServer?: AuthorizationServerOptions | boolean | undefined
  }
}

declare module '../../types.js' {
  interface Adapter {
    /** Stores a record of the authorization server, replacing one of the same model and id. */
    upsertOAuthRecord?(record: AdapterOAuthRecord): Promise<void>
    /** The record of this model and id that has not expired, with when it was consumed (a code, a refresh token). */
    findOAuthRecord?(model: string, id: string): Promise<{ payload: Record<string, unknown>; consumedAt: Date | null } | null>
    /** The record of this model found by a field it is looked up by (a session's `uid`, a device flow's `userCode`). */
    findOAuthRecordBy?(model: string, field: 'uid' | 'userCode', value: string): Promise<{ payload: Record<string, unknown>; consumedAt: Date | null } | null>
    /** Marks a record consumed at `at`, in one conditional UPDATE: `false` when it was consumed already (or is gone). */
    consumeOAuthRecord?(model: string, id: string, at: Date): Promise<boolean>
    /** Deletes one record. */
    deleteOAuthRecord?(model: string, id: string): Promise<void>
    /** Deletes a grant and every record issued under it (codes, refresh tokens, device codes). */
    deleteOAuthGrant?(grantId: string): Promise<void>
    /** The user's records of a model that have not expired (their grants: the apps with access). */
    listOAuthRecords?(accountId: string, model: string): Promise<AdapterOAuthRecord[]>
    /** Deletes every record of the user (signing out everywhere, a ban): how many. */
    deleteOAuthAccount?(accountId: string): Promise<number>
    /** Deletes the records that expired before `before` (the background prune): how many. */
    pruneOAuthRecords?(before: Date): Promise<number>
  }
  interface EventsOptions {
    /** The user granted a client access (the consent page, or a first-party client's sign-in). */
    oauthConsentGiven?: ((message: { userId: string; clientId: string; scopes: string[] }) => import('../../types.js').Awaitable<void>) | undefined
    /** The user (or `revokeAuthorizedApp()`) ended a client's access. */
    oauthAccessRevoked?: ((message: { userId: string; clientId: string }) => import('../../types.js').Awaitable<void>) | undefined
  }
}
