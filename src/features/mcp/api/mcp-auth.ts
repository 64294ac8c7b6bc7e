/** The server-side `mcpAuth()`. */
import type { Api } from '../../../api/context.js'
import { SCOPE_TOKEN } from '../../../api/require-scopes.js'
import { UnknownActionError } from '../../../errors.js'
import { authorizationServerOf } from '../../authorization-server/config.js'
import type { McpMiddleware } from '../types.js'

/** What `mcpAuth()` takes. */
export interface McpAuthOptions {
  /** Scopes every request to an MCP server needs (403 `insufficient_scope` without them). A tool's own: the SDK's `scopeChallenge`. */
  scopes?: string[] | undefined
}

/**
 * The middleware of the app's MCP servers (`authorizationServer.mcp`), to mount at the app's root
 * before them. It answers:
 * - `GET /.well-known/oauth-protected-resource/<path>`: each MCP server's protected resource metadata (RFC 9728);
 * - `GET /.well-known/oauth-authorization-server/<issuer path>`: the authorization server's metadata (RFC 8414);
 * - a request to an MCP server's path (and below it) without an access token issued for that server:
 *   401 with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`, which MCP clients follow to
 *   sign in; with one that lacks `scopes`: 403 `insufficient_scope`.
 *
 * A request it lets through has `req.auth`: the bearer read's (`type: 'bearer'`, `user`, `client`,
 * `scopes`) with the MCP SDK's `AuthInfo` fields (`token`, `clientId`, `expiresAt`, `resource`,
 * `resourceMetadataUrl`), which the SDK's transports hand to tools as `authInfo`.
 *
 * @throws UnknownActionError when no MCP server is configured; TypeError for a scope that is not one.
 * @example
 * ```ts
 * app.use(mcpAuth())
 * app.post('/mcp', express.json(), async (req, res) => {
 *   const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined })
 *   await mcpServer().connect(transport)
 *   await transport.handleRequest(mcpRequest(req), res, req.body)
 * })
 * ```
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
 * @see https://www.rfc-editor.org/rfc/rfc9728
 */
export type McpAuthFunction = (options?: McpAuthOptions) => McpMiddleware

export function createMcpAuth(api: Api): McpAuthFunction {
  return (options = {}) => {
    const servers = authorizationServerOf(api.config)?.mcp ?? []
    if (servers.length === 0) throw new UnknownActionError('mcpAuth(): no MCP server is configured. Set authorizationServer: { mcp: { path: "/mcp", scopes: [...] } } (the authorization server is on with it).')
    const scopes = options.scopes ?? []
    if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string' || !SCOPE_TOKEN.test(scope))) throw new TypeError('mcpAuth(): scopes must be an array of scope names, e.g. ["tools:read"].')
    let guard: Promise<McpMiddleware> | undefined
    return (req, res, next) => {
      // The guard's code loads on the first request, not at init.
      ;(guard ??= import('../guard.js').then(({ mcpGuard }) => mcpGuard(api, servers, [...scopes]))).then((middleware) => middleware(req, res, next), next)
    }
  }
}
