/**
 * `requireScopes(...scopes)`: middleware that lets a request through only when it is signed in and,
 * when its credential carries scopes (an API key, an OAuth access token), when they include every
 * scope named. Answers as RFC 6750 §3 says a protected resource does, so any OAuth client library
 * understands it: 401 with `WWW-Authenticate: Bearer` when nobody is signed in (`error="invalid_token"`
 * when a credential was sent and refused), 400 `invalid_request` for a credential sent where it may
 * not be (the URL), 403 `error="insufficient_scope"` with the scopes needed, 429 with `Retry-After`
 * when the credential's rate limit is reached.
 *
 * A cookie session carries no scopes: its user acts for themselves, so it passes. Scopes restrict
 * what a credential made for a script or another service may do.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
import type { ServerResponse } from 'node:http'
import type { NodeRequest } from '../http/request.js'
import type { NextFunction } from '../http/router.js'
import type { Session } from '../types.js'
import type { Api } from './context.js'
import { credentialRefusalOf } from './credential-read.js'

/** A session read from a credential rather than a cookie: it says what it is and what it may do. */
export interface CredentialAuth extends Session {
  /** What authenticated the request, e.g. `apiKey`. */
  type: string
  /** What the credential may do (`requireScopes()` checks them). */
  scopes: string[]
}

/** Express/Connect middleware from `requireScopes()`. */
export type ScopesMiddleware = (req: NodeRequest, res: ServerResponse, next: NextFunction) => Promise<void>

/**
 * Builds middleware that refuses a request that is not signed in (401), or whose credential lacks
 * one of `scopes` (403), with RFC 6750's `WWW-Authenticate: Bearer` answers.
 *
 * @param scopes Scope names (RFC 6749 §3.3 scope tokens: printable ASCII without space, `"` or `\`).
 * @throws TypeError when a scope is not such a token.
 * @example
 * ```ts
 * app.get('/api/reports', requireScopes('reports:read'), (req, res) => res.json({ owner: req.auth?.user.id }))
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export type RequireScopesFunction = (...scopes: string[]) => ScopesMiddleware

/** Whether `auth` came from a credential that carries scopes, and which. */
export function credentialScopes(auth: Session): readonly string[] | undefined {
  const { type, scopes } = auth as Partial<CredentialAuth>
  return typeof type === 'string' && Array.isArray(scopes) ? scopes : undefined
}

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

export function createRequireScopes(api: Api): RequireScopesFunction {
  return (...scopes) => {
    for (const scope of scopes) {
      if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)) throw new TypeError(`requireScopes(): ${JSON.stringify(scope)} is not a scope: use printable ASCII without spaces, quotes or backslashes, e.g. "reports:read".`)
    }
    const needed = [...scopes]
    return async (req, res, next) => {
      let auth: Session | null
      try {
        auth = await api.session(req, res)
      } catch (error) {
        return next(error)
      }
      if (!auth) return refuseSignedOut(req, res)
      const granted = credentialScopes(auth)
      const missing = granted ? needed.filter((scope) => !granted.includes(scope)) : []
      if (missing.length > 0) {
        return answerBearer(res, 403, `Bearer error="insufficient_scope", scope="${needed.join(' ')}"`, {
          error: 'insufficient_scope',
          message: `This credential lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
          scopes: needed,
        })
      }
      api.requestScope.runUntilClosed({ req, res }, () => next())
    }
  }
}

function refuseSignedOut(req: NodeRequest, res: ServerResponse): void {
  const refusal = credentialRefusalOf(req)
  if (!refusal) return answerBearer(res, 401, 'Bearer', { error: 'unauthorized', message: 'Sign in, or send a credential in the Authorization header.' })
  const description = refusal.description.replace(/["\\]/g, '')
  if (refusal.error === 'rate_limited') {
    res.setHeader('Retry-After', String(refusal.retryAfter ?? 1))
    return answerBearer(res, 429, undefined, { error: 'rate_limited', message: refusal.description })
  }
  const status = refusal.error === 'invalid_request' ? 400 : 401
  answerBearer(res, status, `Bearer error="${refusal.error}", error_description="${description}"`, { error: refusal.error, message: refusal.description })
}

/** Answers a protected resource's refusal: `status`, the `WWW-Authenticate` challenge if any, a JSON body, never cached. */
export function answerBearer(res: ServerResponse, status: number, challenge: string | undefined, body: Record<string, unknown>): void {
  if (res.headersSent) return void res.end()
  res.statusCode = status
  if (challenge) res.setHeader('WWW-Authenticate', challenge)
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Cache-Control', 'no-store')
  res.end(JSON.stringify(body))
}
