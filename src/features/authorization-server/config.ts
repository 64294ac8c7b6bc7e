/**
 * The `authorizationServer` option at init: its settings and what it needs (the site's URL, for a
 * fixed issuer; an adapter with the record methods), each with an error saying what to change. The
 * clients' metadata is checked by oidc-provider itself when the server starts (its first request).
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { PortcullisConfig, ResolvedConfig } from '../../config/types.js'
import type { Adapter } from '../../types.js'
import { redisRecords } from './redis.js'
import type { AuthorizationServerClient, AuthorizationServerMcp, AuthorizationServerOptions, OAuthRecordRedis, OAuthRecordStore } from './types.js'

/** An MCP server of the app (`mcp` option), resolved: its path, and what its resource is. */
export interface ResolvedMcpServer {
  /** `/mcp`: no trailing slash, no query. */
  readonly path: string
  readonly scopes: readonly string[]
  /** `resource_name`; undefined: the resource's URL. */
  readonly name: string | undefined
  readonly documentation: string | undefined
  readonly accessTokenTtl: number
}

/** The `authorizationServer` option, resolved. */
export interface ResolvedAuthorizationServer {
  readonly clients: readonly Readonly<AuthorizationServerClient>[]
  /** This app's own API's scopes. */
  readonly scopes: readonly string[]
  /** Other APIs, by resource indicator. */
  readonly resources: Readonly<Record<string, { readonly scopes: readonly string[]; readonly accessTokenTtl: number }>>
  readonly accessTokenTtl: number
  readonly refreshTokenTtl: number
  readonly deviceFlow: boolean
  /** Milliseconds a process trusts a grant check (`grantCheckSeconds`). */
  readonly grantCheckMs: number
  /** Where the records are kept: the adapter's methods, or the `store` option's. */
  readonly records: OAuthRecordStore
  /** The app's MCP servers, each a resource of its own (their URLs: `mcpResourceOf`). */
  readonly mcp: readonly ResolvedMcpServer[]
  /** Client ID metadata documents. */
  readonly clientIdMetadataDocuments: boolean
  /** RFC 7591 dynamic registration. */
  readonly registration: boolean
  /** The server's own requests may reach private addresses (development only). */
  readonly allowPrivateAddresses: boolean
  /** The fetch of the server's own requests; undefined: the global one. */
  readonly fetch: AuthorizationServerOptions['fetch']
}

/** The adapter methods the authorization server calls. */
export const AUTHORIZATION_SERVER_ADAPTER_METHODS = ['getUser', 'upsertOAuthRecord', 'findOAuthRecord', 'findOAuthRecordBy', 'consumeOAuthRecord', 'deleteOAuthRecord', 'deleteOAuthGrant', 'listOAuthRecords', 'deleteOAuthAccount'] as const

const RECORD_METHODS = ['upsertOAuthRecord', 'findOAuthRecord', 'findOAuthRecordBy', 'consumeOAuthRecord', 'deleteOAuthRecord', 'deleteOAuthGrant', 'listOAuthRecords', 'deleteOAuthAccount', 'pruneOAuthRecords'] as const

/** Where `config`'s authorization server keeps its records. */
export function recordsOf(config: ResolvedConfig): OAuthRecordStore {
  return authorizationServerOf(config)!.records
}

/** The adapter's record methods as a store, bound to it. */
function adapterRecords(adapter: Adapter): OAuthRecordStore {
  const store: Record<string, unknown> = {}
  for (const method of RECORD_METHODS) {
    const implementation = adapter[method] as ((...args: never[]) => unknown) | undefined
    if (implementation) store[method] = implementation.bind(adapter)
  }
  return Object.freeze(store) as unknown as OAuthRecordStore
}

/** The scopes OpenID Connect defines, which every client may ask for. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const

/** The issuer of `config`'s server: the site's origin, the base path, `/oauth` (e.g. `https://app.example.com/api/auth/oauth`). */
export function issuerOf(config: ResolvedConfig): string {
  return `${config.url!.origin}${config.basePath}/oauth`
}

/** The resource indicator of this app's own API: its origin (RFC 8707 §2), e.g. `https://app.example.com/`. */
export function ownResourceOf(config: ResolvedConfig): string {
  return new URL('/', config.url!).href
}

/** The resource indicator of an MCP server of the app: the site's origin and its path, e.g. `https://app.example.com/mcp`. */
export function mcpResourceOf(config: ResolvedConfig, server: ResolvedMcpServer): string {
  return `${config.url!.origin}${server.path}`
}

/** Where an MCP server's protected resource metadata is (RFC 9728 §3.1): `https://app.example.com/.well-known/oauth-protected-resource/mcp`. */
export function mcpMetadataUrlOf(config: ResolvedConfig, server: ResolvedMcpServer): string {
  return `${config.url!.origin}/.well-known/oauth-protected-resource${server.path}`
}

/** The resolved `authorizationServer` option of `config`; undefined when it is off. */
export function authorizationServerOf(config: ResolvedConfig): ResolvedAuthorizationServer | undefined {
  return config.features['authorization-server'] as ResolvedAuthorizationServer | undefined
}

// RFC 6749 §3.3 scope tokens.
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/

function positiveSeconds(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw new InvalidConfigurationError(`authorizationServer.${name} must be a whole number of seconds above 0; got ${JSON.stringify(value)}.`)
  return value
}

function scopeList(value: unknown, name: string): readonly string[] {
  if (value === undefined) return Object.freeze([])
  if (!Array.isArray(value) || value.some((scope) => typeof scope !== 'string' || !SCOPE_TOKEN.test(scope))) {
    throw new InvalidConfigurationError(`${name} must be an array of scope names (printable ASCII without spaces, quotes or backslashes), e.g. ["reports:read"].`)
  }
  const reserved = value.find((scope: string) => (OIDC_SCOPES as readonly string[]).includes(scope))
  if (reserved) throw new InvalidConfigurationError(`${name}: "${reserved}" is OpenID Connect's own scope, always known; list only your API's scopes.`)
  return Object.freeze([...new Set(value as string[])])
}

/**
 * Resolves `authorizationServer`: undefined when it is off.
 * @throws InvalidConfigurationError when it cannot work.
 */
export function resolveAuthorizationServer(input: PortcullisConfig['authorizationServer'], adapter: Adapter | undefined): ResolvedAuthorizationServer | undefined {
  if (input === undefined || input === false) return undefined
  if (input !== true && (input === null || typeof input !== 'object')) throw new InvalidConfigurationError('authorizationServer must be true or an object { clients?, scopes?, resources?, … }.')
  const options: AuthorizationServerOptions = input === true ? {} : input
  if (!adapter) throw new InvalidConfigurationError('authorizationServer stores its grants, codes and refresh tokens: it needs an adapter, e.g. adapter: KnexAdapter(knex) from "portcullis/adapters/knex" (run its migrations; the authorization server migration creates the OAuthRecord table).')
  const redis = redisStoreOf(options.store)
  const missing = (redis ? (['getUser'] as const) : AUTHORIZATION_SERVER_ADAPTER_METHODS).filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) throw new InvalidConfigurationError(`authorizationServer: the adapter has no ${missing.join(', ')}. KnexAdapter has them all (after the portcullis_authorization_server migration); another adapter must implement them, or keep the records in Redis (store: { redis }).`)
  const accessTokenTtl = positiveSeconds(options.accessTokenTtl, 'accessTokenTtl', 600)
  const resources: Record<string, { scopes: readonly string[]; accessTokenTtl: number }> = {}
  for (const [indicator, resource] of Object.entries(options.resources ?? {})) {
    let url: URL
    try {
      url = new URL(indicator)
    } catch {
      throw new InvalidConfigurationError(`authorizationServer.resources: "${indicator}" is no absolute URL; a resource indicator is the API's URL (RFC 8707 §2), e.g. "https://api.example.com/".`)
    }
    if (url.hash || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new InvalidConfigurationError(`authorizationServer.resources: "${indicator}" must be an http(s) URL without a fragment (RFC 8707 §2).`)
    resources[url.href] = Object.freeze({ scopes: scopeList(resource?.scopes, `authorizationServer.resources["${indicator}"].scopes`), accessTokenTtl: positiveSeconds(resource?.accessTokenTtl, `resources["${indicator}"].accessTokenTtl`, accessTokenTtl) })
  }
  return Object.freeze({
    clients: Object.freeze(clientList(options.clients)),
    scopes: scopeList(options.scopes, 'authorizationServer.scopes'),
    resources: Object.freeze(resources),
    accessTokenTtl,
    refreshTokenTtl: positiveSeconds(options.refreshTokenTtl, 'refreshTokenTtl', 14 * 24 * 3600),
    deviceFlow: options.deviceFlow !== false,
    grantCheckMs: (options.grantCheckSeconds === 0 ? 0 : positiveSeconds(options.grantCheckSeconds, 'grantCheckSeconds', 5)) * 1000,
    records: redis ?? adapterRecords(adapter),
    mcp: mcpList(options.mcp, accessTokenTtl),
    clientIdMetadataDocuments: booleanOption(options.clientIdMetadataDocuments, 'clientIdMetadataDocuments'),
    registration: booleanOption(options.registration, 'registration'),
    allowPrivateAddresses: privateAddressesOption(options.allowPrivateAddressesInDevelopment),
    fetch: fetchOption(options.fetch),
  })
}

function booleanOption(value: unknown, name: string): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new InvalidConfigurationError(`authorizationServer.${name} must be true or false; got ${JSON.stringify(value)}.`)
  return value === true
}

// A path of the site: `/` and segments of URL path characters, no query, fragment, dot segment or trailing slash.
const MCP_PATH = /^(\/[A-Za-z0-9\-._~!$&'()*+,;=:@%]+)+$/

function mcpList(given: AuthorizationServerOptions['mcp'], accessTokenTtl: number): readonly ResolvedMcpServer[] {
  if (given === undefined) return Object.freeze([])
  const list = Array.isArray(given) ? given : [given]
  const seen = new Set<string>()
  return Object.freeze(list.map((server: AuthorizationServerMcp, index) => {
    const name = `authorizationServer.mcp${Array.isArray(given) ? `[${index}]` : ''}`
    if (!server || typeof server !== 'object') throw new InvalidConfigurationError(`${name} must be { path: '/mcp', scopes?, name? }.`)
    const path = typeof server.path === 'string' ? server.path.replace(/\/+$/, '') : server.path
    if (typeof path !== 'string' || !MCP_PATH.test(path) || path.split('/').some((segment) => segment === '.' || segment === '..')) {
      throw new InvalidConfigurationError(`${name}.path must be the MCP server's path on this site, e.g. "/mcp" (no query, fragment or dot segment); got ${JSON.stringify(server.path)}.`)
    }
    if (seen.has(path)) throw new InvalidConfigurationError(`authorizationServer.mcp: two MCP servers have the path "${path}".`)
    seen.add(path)
    for (const key of ['name', 'documentation'] as const) {
      if (server[key] !== undefined && (typeof server[key] !== 'string' || server[key].length === 0)) throw new InvalidConfigurationError(`${name}.${key} must be a non-empty string.`)
    }
    if (server.documentation !== undefined && !/^https?:\/\//.test(server.documentation)) throw new InvalidConfigurationError(`${name}.documentation must be an http(s) URL.`)
    const scopes = server.scopes === undefined ? Object.freeze(['mcp']) : scopeList(server.scopes, `${name}.scopes`)
    if (scopes.length === 0) throw new InvalidConfigurationError(`${name}.scopes must name at least one scope, e.g. ["mcp"] (the default).`)
    return Object.freeze({ path, scopes, name: server.name, documentation: server.documentation, accessTokenTtl: positiveSeconds(server.accessTokenTtl, `${name.replace('authorizationServer.', '')}.accessTokenTtl`, accessTokenTtl) })
  }))
}

function privateAddressesOption(value: unknown): boolean {
  if (!booleanOption(value, 'allowPrivateAddressesInDevelopment')) return false
  if (process.env['NODE_ENV'] === 'production') {
    throw new InvalidConfigurationError('authorizationServer.allowPrivateAddressesInDevelopment is on while NODE_ENV is "production": a client\'s metadata URL could then make this server fetch addresses of your own network. Turn it off in production.')
  }
  return true
}

function fetchOption(value: unknown): AuthorizationServerOptions['fetch'] {
  if (value !== undefined && typeof value !== 'function') throw new InvalidConfigurationError('authorizationServer.fetch must be a function (url, init) => Promise<Response>, e.g. one that passes init on to the global fetch.')
  return value as AuthorizationServerOptions['fetch']
}

function clientList(given: unknown): Readonly<AuthorizationServerClient>[] {
  if (given === undefined) return []
  if (!Array.isArray(given)) throw new InvalidConfigurationError('authorizationServer.clients must be an array of client metadata objects ({ client_id, redirect_uris, … }).')
  const seen = new Set<string>()
  return given.map((client: AuthorizationServerClient, index) => {
    if (!client || typeof client !== 'object' || typeof client.client_id !== 'string' || client.client_id.length === 0) {
      throw new InvalidConfigurationError(`authorizationServer.clients[${index}] needs a client_id (a non-empty string).`)
    }
    if (seen.has(client.client_id)) throw new InvalidConfigurationError(`authorizationServer.clients: two clients have the client_id "${client.client_id}".`)
    seen.add(client.client_id)
    if (client.first_party !== undefined && typeof client.first_party !== 'boolean') throw new InvalidConfigurationError(`authorizationServer.clients[${index}].first_party must be true or false.`)
    if (typeof client.client_secret === 'string' && client.client_secret.length < 32) {
      throw new InvalidConfigurationError(`authorizationServer.clients[${index}].client_secret is shorter than 32 characters: use a random one (openssl rand -base64 32), or none for a public client (token_endpoint_auth_method: "none").`)
    }
    return Object.freeze(structuredClone(client))
  })
}

/** The Redis store of the `store` option, or undefined for the adapter's table. */
function redisStoreOf(store: AuthorizationServerOptions['store']): OAuthRecordStore | undefined {
  if (store === undefined) return undefined
  const client = (store as { redis?: { eval?: unknown; hgetall?: unknown } } | null)?.redis
  // hgetall in lower case tells ioredis from node-redis (hGetAll), whose eval takes other arguments.
  if (!client || typeof client.eval !== 'function' || typeof client.hgetall !== 'function') {
    throw new InvalidConfigurationError('authorizationServer.store must be { redis } with an ioredis client, e.g. { redis: new Redis(process.env.REDIS_URL) } from ioredis; leave it out to keep the records in the adapter\'s OAuthRecord table.')
  }
  const prefix = store.keyPrefix ?? 'portcullis:oauth'
  if (typeof prefix !== 'string' || prefix.length === 0 || prefix.length > 100) throw new InvalidConfigurationError('authorizationServer.store.keyPrefix must be a non-empty string of at most 100 characters.')
  return redisRecords(store.redis as unknown as OAuthRecordRedis, prefix)
}

/** The checks that need the resolved config: a fixed site URL for the issuer. */
export function checkAuthorizationServer(config: ResolvedConfig): void {
  if (!authorizationServerOf(config)) return
  if (!config.url) {
    throw new InvalidConfigurationError('authorizationServer needs the site\'s URL, so that its issuer (which every token names) is fixed: set AUTH_URL, e.g. https://app.example.com/api/auth.')
  }
}
