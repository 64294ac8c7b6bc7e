/**
 * Whether a request carries an access token of this server's form (`Authorization: Bearer <JWT>`),
 * told from its header alone: three base64url parts, the first a JSON object (`eyJ`). An API key
 * (its own prefix) or another header is left to the other readers.
 */
import type { IncomingMessage } from 'node:http'

const JWT = /^ey[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
// RFC 6750 §2.1: the scheme is case-insensitive; 16 KB is far more than any token this server issues.
const BEARER = /^bearer +/i
const MAX_TOKEN = 16_384

/** The JWT the request's Authorization header carries as a bearer token, or undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization
  if (typeof header !== 'string' || header.length > MAX_TOKEN || !BEARER.test(header)) return undefined
  const token = header.replace(BEARER, '')
  return JWT.test(token) ? token : undefined
}
