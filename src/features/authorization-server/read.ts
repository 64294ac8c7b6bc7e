/**
 * Reading an access token this server issued (`auth()`, its middleware, `requireScopes()`), loaded on
 * the first request that carries one. The token is a JWT (RFC 9068) signed by one of the server's
 * own keys (keys.ts), so it is verified in this process: the signature (ES256, on node:crypto), the
 * type, the issuer, the audience (this app's own API), once per token (then kept, verified, in a
 * bounded map), and the expiry on each request; then the grant it was issued under still stands
 * (grants.ts: one lookup per grant every few seconds, not per request). Nothing here logs the token.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9068 JWT profile for OAuth 2.0 access tokens
 * @see https://www.rfc-editor.org/rfc/rfc6750 bearer token usage
 */
import { verify, type KeyObject } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { CredentialRead, ResolvedConfig } from '../../config/types.js'
import type { Session } from '../../types.js'
import { issuerOf, ownResourceOf } from './config.js'
import { grantUser } from './grants.js'
import { signingKeyOf } from './keys.js'
import { bearerToken } from './sent-token.js'
import type { BearerAuth } from './types.js'

interface Verifier {
  readonly issuer: string
  /** This app's own API: the audience `auth()` accepts. */
  readonly audience: string
  readonly keys: ReadonlyMap<string, KeyObject>
}

const verifiers = new WeakMap<ResolvedConfig, Verifier>()

// The keys are derived here from the secrets (as provider.ts derives them), so that a read never
// waits for oidc-provider to load: a process that only serves the API verifies tokens without it.
function verifierOf(config: ResolvedConfig): Verifier {
  let verifier = verifiers.get(config)
  if (!verifier) {
    const keys = new Map(config.secrets.map((secret) => { const key = signingKeyOf(secret); return [key.kid, key.publicKey] as const }))
    verifier = { issuer: issuerOf(config), audience: ownResourceOf(config), keys }
    verifiers.set(config, verifier)
  }
  return verifier
}

function refused(description: string): CredentialRead {
  return { auth: null, refusal: { error: 'invalid_token', description } }
}

function part(segment: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

// Tokens whose signature and static claims (type, issuer) verified, by their whole text:
// an ES256 verification costs some 75 µs, and a client sends the same token for its whole life.
// Only verified tokens are kept, so a flood of forged ones cannot fill it.
const MAX_VERIFIED = 10_000
const verifiedTokens = new WeakMap<ResolvedConfig, Map<string, Record<string, unknown>>>()

/** The claims of `token` once its signature, type and issuer are verified; else why it is refused. */
function verifiedClaims(config: ResolvedConfig, token: string): Record<string, unknown> | string {
  let cache = verifiedTokens.get(config)
  if (!cache) verifiedTokens.set(config, (cache = new Map()))
  const cached = cache.get(token)
  if (cached) return cached
  const [headerPart, payloadPart, signaturePart] = token.split('.') as [string, string, string]
  const header = part(headerPart)
  const claims = part(payloadPart)
  if (!header || !claims) return 'The access token is malformed.'
  const { issuer, keys } = verifierOf(config)
  const key = typeof header['kid'] === 'string' ? keys.get(header['kid']) : undefined
  if (header['alg'] !== 'ES256' || !key) return 'The access token was not issued by this server.'
  const signature = Buffer.from(signaturePart, 'base64url')
  if (signature.length !== 64 || !verify('sha256', Buffer.from(`${headerPart}.${payloadPart}`), { key, dsaEncoding: 'ieee-p1363' }, signature)) {
    return 'The access token was not issued by this server.'
  }
  // Signed by this server: from here on its claims are the server's own.
  if (typeof header['typ'] !== 'string' || header['typ'].toLowerCase() !== 'at+jwt' || claims['iss'] !== issuer) return 'The token is no access token of this server.'
  if (cache.size >= MAX_VERIFIED) cache.delete(cache.keys().next().value!)
  cache.set(token, claims)
  return claims
}

/**
 * Reads the request's access token: who it acts for, or why it is refused. `audience` is the API
 * the request is for: this app's own by default (`auth()`), an MCP server's URL for its middleware;
 * a token for any other is refused, so that no token is good at two APIs.
 */
// Long: the checks of RFC 9068 §4 in order, each refusal with its reason, read top to bottom.
export async function readAccessToken(config: ResolvedConfig, req: IncomingMessage, audience = verifierOf(config).audience): Promise<CredentialRead> {
  const token = bearerToken(req)
  if (token === undefined) return refused('The access token is malformed.')
  const claims = verifiedClaims(config, token)
  if (typeof claims === 'string') return refused(claims)
  const aud = claims['aud']
  if (!(aud === audience || (Array.isArray(aud) && aud.includes(audience)))) return refused('The access token is for another API.')
  const now = Date.now()
  const exp = claims['exp']
  if (typeof exp !== 'number' || exp * 1000 <= now) {
    verifiedTokens.get(config)?.delete(token)
    return refused('The access token has expired.')
  }
  // A DPoP-bound token (RFC 9449) proves its holder with a proof per request: as a bearer token it is refused.
  if (claims['cnf'] !== undefined) return refused('The access token is bound to a key (DPoP): this API accepts bearer tokens only.')
  const clientId = typeof claims['client_id'] === 'string' ? claims['client_id'] : undefined
  const sub = claims['sub']
  if (!clientId || typeof sub !== 'string') return refused('The token is no access token of this server.')
  const scopes = typeof claims['scope'] === 'string' && claims['scope'] ? claims['scope'].split(' ') : []
  const base = { type: 'bearer' as const, client: { id: clientId }, scopes, expires: new Date(exp * 1000).toISOString(), tokenId: String(claims['jti'] ?? '') }
  const gid = claims['gid']
  // Client credentials: the client acts for itself, under no grant of a user's.
  // Its `user` is null (BearerAuth): the one credential whose session has no user, so the cast.
  if (gid === undefined) return sub === clientId ? { auth: { ...base, user: null } satisfies BearerAuth as unknown as Session } : refused('The token is no access token of this server.')
  if (typeof gid !== 'string') return refused('The token is no access token of this server.')
  const user = await grantUser(config, gid, sub, now)
  if (!user) return refused('The access token was revoked: its grant ended, or its user is gone.')
  return { auth: { ...base, user: { id: user.id, name: user.name ?? null, email: user.email ?? null, image: user.image ?? null } } satisfies BearerAuth }
}
