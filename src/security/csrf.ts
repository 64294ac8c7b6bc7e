/**
 * Double-submit CSRF protection, in the format Auth.js uses so its clients work unchanged: the
 * cookie holds `token|sha256(token + secret)`, every state-changing POST sends `csrfToken` in its
 * body. An attacker's page can make the browser send the cookie but cannot read it, so it cannot
 * put the matching token in the body. The hash means a cookie value must come from this server;
 * it does not stop a sibling subdomain from planting a genuine pair it fetched itself. Only the
 * `__Host-` prefix of the secure cookie name (HTTPS) stops that: browsers refuse to let another
 * host set it, and, over HTTP too, the check of `Sec-Fetch-Site`/`Origin` (sameOriginRequest).
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html#signed-double-submit-cookie-recommended
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** The CSRF state of one request. */
export interface CsrfState {
  /** The token to hand to forms and `GET /csrf`. */
  token: string
  /** A new cookie value to set, when the request had no valid one. */
  newCookieValue?: string
}

/** Reads the request's CSRF cookie, or makes a new token (signed with the first secret) when it is missing or forged. */
export function csrfState(cookieValue: string | undefined, secrets: readonly string[]): CsrfState {
  const token = cookieToken(cookieValue, secrets)
  if (token !== undefined) return { token }
  const fresh = randomBytes(32).toString('hex')
  return { token: fresh, newCookieValue: `${fresh}|${sha256Hex(fresh + secrets[0])}` }
}

/**
 * True when `bodyToken` matches a valid CSRF cookie. Both comparisons run in constant time: the
 * cookie's hash against each secret's, and the body token against the cookie's (through fixed-size
 * digests, so a length difference is not observable either).
 */
export function verifyCsrf(cookieValue: string | undefined, bodyToken: unknown, secrets: readonly string[]): boolean {
  if (typeof bodyToken !== 'string' || bodyToken.length === 0) return false
  const token = cookieToken(cookieValue, secrets)
  if (token === undefined) return false
  return timingSafeEqual(sha256(token), sha256(bodyToken))
}

/**
 * True unless the browser says the request comes from another origin: `Sec-Fetch-Site` when sent
 * (every current browser), else `Origin` compared with the site's origin. A request with neither
 * (a server-side client, an old browser) is left to the double-submit token. This stops what the
 * token alone cannot: a sibling subdomain that planted a genuine cookie-and-token pair.
 *
 * @see https://www.w3.org/TR/fetch-metadata/#sec-fetch-site-header
 * @see https://www.rfc-editor.org/rfc/rfc6454#section-7
 */
export function sameOriginRequest(headers: { 'sec-fetch-site'?: string | string[]; origin?: string | string[] }, origin: string): boolean {
  const site = headers['sec-fetch-site']
  // `none`: the user started it (a bookmark, the address bar), not another site.
  if (typeof site === 'string') return site === 'same-origin' || site === 'none'
  const sent = headers.origin
  return typeof sent === 'string' ? sent === origin : true
}

function cookieToken(cookieValue: string | undefined, secrets: readonly string[]): string | undefined {
  if (!cookieValue) return undefined
  const separator = cookieValue.indexOf('|')
  if (separator <= 0) return undefined
  const token = cookieValue.slice(0, separator)
  const hash = Buffer.from(cookieValue.slice(separator + 1), 'utf8')
  let valid = false
  for (const secret of secrets) {
    const expected = Buffer.from(sha256Hex(token + secret), 'utf8')
    // Every secret is tried, so the time taken does not tell which one matched.
    if (expected.length === hash.length && timingSafeEqual(expected, hash)) valid = true
  }
  return valid ? token : undefined
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}
