/**
 * The documents MCP clients read before they sign in: each MCP server's protected resource metadata
 * (RFC 9728: which authorization server issues its tokens, which scopes it knows), and the
 * authorization server's own metadata at the address RFC 8414 gives it at the site's root, which
 * MCP clients try first (the same document as the issuer's OpenID Connect discovery, served by
 * oidc-provider). Both are public and readable from any origin (a browser-based client reads them).
 *
 * @see https://www.rfc-editor.org/rfc/rfc9728#section-3
 * @see https://www.rfc-editor.org/rfc/rfc8414#section-3
 */
import type { ServerResponse } from 'node:http'
import type { ResolvedConfig } from '../../config/types.js'
import type { NodeRequest } from '../../http/request.js'
import { issuerOf, mcpResourceOf, type ResolvedMcpServer } from '../authorization-server/config.js'

/** RFC 9728 §2's metadata of an MCP server. */
export function protectedResourceMetadata(config: ResolvedConfig, server: ResolvedMcpServer): Record<string, unknown> {
  return {
    resource: mcpResourceOf(config, server),
    authorization_servers: [issuerOf(config)],
    scopes_supported: [...server.scopes],
    bearer_methods_supported: ['header'],
    resource_name: server.name ?? `${config.url!.host}${server.path}`,
    ...(server.documentation ? { resource_documentation: server.documentation } : {}),
  }
}

/** Answers a metadata request (GET, HEAD, or a CORS preflight) with `document`. */
export function sendDocument(req: NodeRequest, res: ServerResponse, document: Record<string, unknown>): void {
  res.setHeader('Access-Control-Allow-Origin', '*')
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS')
    res.setHeader('Access-Control-Allow-Headers', 'MCP-Protocol-Version')
    res.statusCode = 204
    return void res.end()
  }
  const body = JSON.stringify(document)
  res.statusCode = 200
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Cache-Control', 'public, max-age=300')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(req.method === 'HEAD' ? undefined : body)
}

/** Answers RFC 8414's address with the issuer's metadata, which oidc-provider serves (loaded on this first request). */
export async function sendAuthorizationServerMetadata(config: ResolvedConfig, req: NodeRequest, res: ServerResponse): Promise<void> {
  const { authorizationServerMount } = await import('../authorization-server/mount.js')
  await authorizationServerMount(req, res, { config, url: '/.well-known/openid-configuration', mountPath: `${config.basePath}/oauth` })
}
