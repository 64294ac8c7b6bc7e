/** The shapes of the MCP wing: its middleware, and `req.auth` on a request it let through. */
import type { ServerResponse } from 'node:http'
import type { NodeRequest } from '../../http/request.js'
import type { NextFunction } from '../../http/router.js'
import type { BearerAuth } from '../authorization-server/types.js'

/** Express/Connect middleware from `mcpAuth()`. */
export type McpMiddleware = (req: NodeRequest, res: ServerResponse, next: NextFunction) => void

/** `req.auth` on a request `mcpAuth()` let through: the bearer read's, with the MCP SDK's `AuthInfo`. */
export interface McpAuth extends BearerAuth {
  /** The access token, as the SDK's `AuthInfo` carries it. It is good at this MCP server only: never send it on. */
  token: string
  clientId: string
  /** Seconds since the epoch. */
  expiresAt: number
  /** The MCP server's resource indicator. */
  resource: URL
  resourceMetadataUrl: string
}
