/** The server-side `mcpRequest()`. */
import type { IncomingMessage } from 'node:http'
import type { McpAuth } from '../types.js'
import { isMcpAuth } from '../guard-mark.js'

/**
 * The request of a route behind `mcpAuth()`, typed as the MCP SDK's transports take it
 * (`req.auth` is the token's `McpAuth`, their `AuthInfo`), for `transport.handleRequest(mcpRequest(req), res, req.body)`.
 * Portcullis types `req.auth` as any request's (a session or null), which the SDK's type does not accept.
 *
 * @throws TypeError when the request did not pass `mcpAuth()` (a route mounted before it, or on another path).
 * @example
 * ```ts
 * app.post('/mcp', express.json(), async (req, res) => {
 *   const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined })
 *   await server.connect(transport)
 *   await transport.handleRequest(mcpRequest(req), res, req.body)
 * })
 * ```
 */
export type McpRequestFunction = (req: IncomingMessage) => IncomingMessage & { auth: McpAuth }

export const mcpRequest: McpRequestFunction = (req) => {
  const auth = (req as { auth?: unknown }).auth
  if (!isMcpAuth(auth)) throw new TypeError('mcpRequest(): this request did not pass mcpAuth(): mount app.use(mcpAuth()) before the MCP route, and give the route an MCP server\'s path (authorizationServer.mcp).')
  return req as IncomingMessage & { auth: McpAuth }
}
