/**
 * The fields a log line takes from the request being served (logger.ts's LogFields): its id, method,
 * path and the provider of the auth route, and the signed-in user (and an impersonating administrator)
 * when `auth()` has set `req.auth`.
 * Read only when a line is written, so the requests that log nothing pay nothing for them.
 */
import { clientField, type LogFields } from '../logger.js'
import { currentRequest } from './request-scope.js'

// The auth routes that name a provider: /signin/:provider, /callback/:provider, /webauthn-options/:provider.
const PROVIDER_ROUTE = /\/(?:signin|callback|webauthn-options)\/([^/]+)\/?$/

/** The current request's fields, or undefined outside a request. */
export function requestLogFields(): LogFields | undefined {
  const store = currentRequest()
  if (!store) return undefined
  const { req } = store
  const fields: LogFields = {}
  const id = (req as { id?: unknown }).id
  const header = req.headers['x-request-id']
  const requestId = typeof id === 'string' || typeof id === 'number' ? String(id) : typeof header === 'string' ? header : undefined
  if (requestId) fields.requestId = clientField(requestId)
  if (req.method) fields.method = clientField(req.method)
  const target = req.originalUrl ?? req.url
  if (target) {
    const query = target.indexOf('?')
    const path = query === -1 ? target : target.slice(0, query)
    fields.route = clientField(path)
    const provider = PROVIDER_ROUTE.exec(path)?.[1]
    if (provider) fields.provider = clientField(safeDecode(provider))
  }
  const auth = (req as { auth?: { user?: { id?: unknown }; impersonatedBy?: unknown } | null }).auth
  const userId = auth?.user?.id
  if (typeof userId === 'string') fields.userId = userId
  if (typeof auth?.impersonatedBy === 'string') fields.impersonatedBy = auth.impersonatedBy
  return fields
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
