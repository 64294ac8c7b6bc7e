/** Where a request carries an API key: the Authorization header, the configured header, or (refused) its URL. */
import type { IncomingMessage } from 'node:http'
import type { ResolvedApiKeys } from './config.js'

/** The key a request sends: `Authorization: Bearer <key>` with the prefix, or the configured header. */
export function sentKey(options: ResolvedApiKeys, req: IncomingMessage): string | undefined {
  const authorization = req.headers.authorization
  if (typeof authorization === 'string' && authorization.length > 7 && authorization.slice(0, 7).toLowerCase() === 'bearer ') {
    const token = authorization.slice(7).trim()
    if (token.startsWith(options.prefix)) return token
  }
  if (options.header) {
    const value = req.headers[options.header]
    if (typeof value === 'string') return value.trim()
    // Sent twice: refused as malformed by read.ts, never one picked.
    if (Array.isArray(value)) return value.join(',')
  }
  return undefined
}

/** Whether the request's query string holds something with the key prefix (a key where it leaks: logs, referrers, history). */
export function keyInUrl(options: ResolvedApiKeys, req: IncomingMessage): boolean {
  const url = req.url ?? ''
  const query = url.indexOf('?')
  return query >= 0 && (url.includes(options.prefix, query) || url.includes(encodeURIComponent(options.prefix), query))
}
