/**
 * Same-origin redirects. Every URL Portcullis redirects to after sign-in or sign-out passes through
 * here (through the default `redirect` callback), so `callbackUrl` cannot send a user to another site.
 *
 * The check parses the candidate with the WHATWG URL parser against the site's origin, the same
 * parser browsers use on a `Location` header, and compares origins. String prefix checks miss the
 * ways browsers read `//evil.example`, `/\evil.example`, `https:evil.example` or tab-split schemes.
 */

/**
 * The absolute URL for `candidate` if it stays on `origin`, else undefined. Relative paths resolve
 * against the origin. The returned string is the parsed, normalised URL: what is checked is what
 * is sent.
 */
export function sameOriginUrl(candidate: unknown, origin: string): string | undefined {
  if (typeof candidate !== 'string' || candidate.length === 0 || candidate.length > 4096) return undefined
  let url: URL
  try {
    url = new URL(candidate, `${origin}/`)
  } catch {
    return undefined
  }
  if (url.origin !== origin || url.username || url.password) return undefined
  return url.href
}

/** The default `redirect` callback: same-origin URLs and relative paths, anything else → the site's root. */
export function defaultRedirect({ url, baseUrl }: { url: string; baseUrl: string }): string {
  return sameOriginUrl(url, baseUrl) ?? baseUrl
}
