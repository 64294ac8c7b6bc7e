/**
 * The middleware `mcpAuth()` returns, loaded on its first request. A request to an MCP server's path
 * passes only with an access token of this server whose audience is that MCP server (RFC 8707): a
 * token for the app's own API, for another MCP server or another API is refused, and a token for the
 * MCP server is refused by every other API of the app, so that none is good at two. Without one, the
 * answer is what MCP clients follow to sign in (RFC 9728 §5.1): 401 with
 * `WWW-Authenticate: Bearer resource_metadata="…"`. A session cookie is no credential here: MCP
 * clients send tokens, and a cookie would let any site's page call the tools as the user.
 *
 * The path is matched as Express matches routes, and wider: case-insensitive, with or without a
 * trailing slash, percent-decoded, repeated slashes as one, so that no spelling of `/mcp` that a
 * router could take for it goes past the guard.
 *
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
import type { ServerResponse } from 'node:http'
import type { Api } from '../../api/context.js'
import { answerBearer } from '../../api/require-scopes.js'
import type { NodeRequest } from '../../http/request.js'
import type { NextFunction } from '../../http/router.js'
import type { Session } from '../../types.js'
import { issuerOf, mcpMetadataUrlOf, mcpResourceOf, type ResolvedMcpServer } from '../authorization-server/config.js'
import { readAccessToken } from '../authorization-server/read.js'
import { bearerToken } from '../authorization-server/sent-token.js'
import type { BearerAuth } from '../authorization-server/types.js'
import { markMcpAuth } from './guard-mark.js'
import type { McpMiddleware } from './types.js'
import { protectedResourceMetadata, sendAuthorizationServerMetadata, sendDocument } from './metadata.js'

interface Guarded {
  readonly server: ResolvedMcpServer
  /** The server's path as `pathOf` spells paths. */
  readonly path: string
  readonly resource: string
  readonly metadataUrl: string
  readonly metadataPath: string
}

/** The middleware for `servers`, each request to them needing `required` scopes. */
export function mcpGuard(api: Api, servers: readonly ResolvedMcpServer[], required: readonly string[]): McpMiddleware {
  const { config } = api
  const guarded: Guarded[] = servers.map((server) => ({
    server,
    path: pathOf(server.path),
    resource: mcpResourceOf(config, server),
    metadataUrl: mcpMetadataUrlOf(config, server),
    metadataPath: pathOf(`/.well-known/oauth-protected-resource${server.path}`),
  }))
  const serverMetadataPath = pathOf(`/.well-known/oauth-authorization-server${new URL(issuerOf(config)).pathname}`)
  return (req, res, next) => {
    const path = pathOf((req as { originalUrl?: string }).originalUrl ?? req.url ?? '/')
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') {
      const described = guarded.find((target) => target.metadataPath === path)
      if (described) return sendDocument(req, res, protectedResourceMetadata(config, described.server))
      if (path === serverMetadataPath) return void sendAuthorizationServerMetadata(config, req, res).catch(next)
    }
    const target = guarded.find((candidate) => path === candidate.path || path.startsWith(`${candidate.path}/`))
    if (!target) return next()
    // A CORS preflight carries no credential by design; the route's own CORS middleware answers it.
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) return next()
    guardRequest(api, target, required, req, res, next).catch(next)
  }
}

async function guardRequest(api: Api, target: Guarded, required: readonly string[], req: NodeRequest, res: ServerResponse, next: NextFunction): Promise<void> {
  const metadata = `resource_metadata="${target.metadataUrl}"`
  const token = bearerToken(req)
  if (token === undefined) {
    if (req.headers.authorization !== undefined) return refuse(res, 401, `Bearer error="invalid_token", error_description="The Authorization header carries no access token of this server.", ${metadata}`, 'invalid_token', 'The Authorization header carries no access token of this server.')
    const scope = required.length > 0 ? `, scope="${required.join(' ')}"` : ''
    return refuse(res, 401, `Bearer ${metadata}${scope}`, 'unauthorized', `Send an access token for ${target.resource} (its metadata: ${target.metadataUrl}).`)
  }
  const read = await readAccessToken(api.config, req, target.resource)
  if (!read.auth) {
    const description = (read.refusal?.description ?? 'The access token is refused.').replace(/["\\]/g, '')
    return refuse(res, 401, `Bearer error="invalid_token", error_description="${description}", ${metadata}`, 'invalid_token', description)
  }
  const auth = read.auth as unknown as BearerAuth
  const missing = required.filter((scope) => !auth.scopes.includes(scope))
  if (missing.length > 0) {
    return refuse(res, 403, `Bearer error="insufficient_scope", scope="${required.join(' ')}", ${metadata}`, 'insufficient_scope', `This token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`)
  }
  const mcpAuth = markMcpAuth({ ...auth, token, clientId: auth.client.id, expiresAt: Math.floor(Date.parse(auth.expires) / 1000), resource: new URL(target.resource), resourceMetadataUrl: target.metadataUrl })
  api.settleSession(req, mcpAuth as unknown as Session)
  api.requestScope.runUntilClosed({ req, res }, () => next())
}

function refuse(res: ServerResponse, status: number, challenge: string, error: string, message: string): void {
  // A browser-based MCP client must be able to read the challenge.
  if (!res.headersSent) res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate')
  answerBearer(res, status, challenge, { error, message })
}

/** A request path as the guard compares it: its path part, percent-decoded, lower case, repeated and trailing slashes dropped. */
function pathOf(url: string): string {
  let path = url.split(/[?#]/, 1)[0]!
  try {
    path = decodeURIComponent(path)
  } catch {
    // Left encoded: still compared, lower case.
  }
  return path.replace(/\/{2,}/g, '/').replace(/\/+$/, '').toLowerCase() || '/'
}
