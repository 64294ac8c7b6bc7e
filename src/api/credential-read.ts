/**
 * The read of a request that carries a credential in its headers instead of a session cookie (an
 * API key; an OAuth access token later), for `auth()`, its middleware and `requireScopes()`. Only
 * built when a feature that reads credentials is on (`ResolvedConfig.credentials`): otherwise the
 * session read is the cookie read alone and looks at no header.
 *
 * A request that carries a session cookie is read by its cookie, whatever its headers say: a
 * credential authenticates scripts and servers, which hold no cookie. A credential's read never
 * makes a cookie session, sets no cookie, and needs no CSRF token (a cross-site page cannot set an
 * `Authorization` header without the app's CORS consent).
 */
import type { ServerResponse } from 'node:http'
import type { CredentialReader, CredentialRefusal, ResolvedConfig } from '../config/types.js'
import type { NodeRequest } from '../http/request.js'
import { readCookies } from '../http/request.js'
import type { OutgoingCookie } from '../session/cookies.js'
import type { Session } from '../types.js'

type Read = (req: NodeRequest, res: ServerResponse | undefined, sent: readonly OutgoingCookie[] | undefined) => Promise<Session | null>

// Why each request's credential was refused, for requireScopes()'s WWW-Authenticate answer.
const refusals = new WeakMap<NodeRequest, CredentialRefusal>()

/** Why the credential `req` carried was refused, after its read; undefined when it carried none or it was accepted. */
export function credentialRefusalOf(req: NodeRequest): CredentialRefusal | undefined {
  return refusals.get(req)
}

/**
 * The session read with `credentials` before the cookie read: a request that carries a credential
 * and no session cookie (and no cookie set by a call on it) is read by the feature that reads it.
 */
export function withCredentials(config: ResolvedConfig, credentials: CredentialReader, cookieRead: Read, setAuth: (req: NodeRequest, auth: Session | null) => void): Read {
  return (req, res, sent) => {
    if (sent || !credentials.carries(config, req) || carriesSessionCookie(config, req)) return cookieRead(req, res, sent)
    return credentials.read(config, req).then(({ auth, refusal }) => {
      if (refusal) refusals.set(req, refusal)
      setAuth(req, auth)
      return auth
    })
  }
}

/** Whether the request carries a session cookie of either flavour (chunked or not). */
function carriesSessionCookie(config: ResolvedConfig, req: NodeRequest): boolean {
  if (!req.headers.cookie) return false
  const cookies = readCookies(req)
  for (const set of [config.cookieSets.secure, config.cookieSets.insecure]) {
    const name = set.cookies.sessionToken.name
    if (cookies[name] !== undefined || cookies[`${name}.0`] !== undefined) return true
  }
  return false
}
