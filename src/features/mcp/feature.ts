/**
 * MCP servers on the app (`authorizationServer.mcp`): the resource side of the MCP authorization
 * specification. `mcpAuth()` is one middleware, mounted at the app's root, that serves each MCP
 * server's protected resource metadata (RFC 9728) and the authorization server's metadata at the
 * site's root (RFC 8414), and lets a request to an MCP server's path through only with an access
 * token issued for that server (RFC 8707's audience), answering 401 and 403 with the
 * `WWW-Authenticate` parameters MCP clients follow. The authorization server's side (client ID
 * metadata documents, registration, consent) is that wing's. Nothing of this wing loads before
 * `mcpAuth()` is called.
 */
import type { Feature } from '../../composition/index.js'
import { createMcpAuth, type McpAuthFunction } from './api/mcp-auth.js'
import { mcpRequest, type McpRequestFunction } from './api/mcp-request.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface McpApi {
  /** The middleware of the app's MCP servers: their metadata, and their guard. */
  mcpAuth: McpAuthFunction
  /** The request of a route behind `mcpAuth()`, typed as the MCP SDK's transports take it. */
  mcpRequest: McpRequestFunction
}

export const mcpFeature: Feature = {
  name: 'mcp',
  requires: ['authorization-server'],
  api: (api): McpApi => ({ mcpAuth: createMcpAuth(api), mcpRequest }),
}
