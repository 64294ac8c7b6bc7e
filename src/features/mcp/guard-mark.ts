/**
 * Which `req.auth` values the MCP guard made: the ones it let through, and nothing a route or
 * another middleware could build (a plain object with the same fields is not one).
 */
import type { McpAuth } from './types.js'

const made = new WeakSet<object>()

/** Marks `auth` as the guard's. */
export function markMcpAuth(auth: McpAuth): McpAuth {
  made.add(auth)
  return auth
}

/** Whether `value` is an `McpAuth` the guard made. */
export function isMcpAuth(value: unknown): value is McpAuth {
  return typeof value === 'object' && value !== null && made.has(value)
}
