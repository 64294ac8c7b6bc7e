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

/** An allowed origin of the redirect proxy: exact, or `scheme://*.domain[:port]` for one more label. */
export interface OriginPattern {
  readonly scheme: string
  readonly host: string
  readonly port: string
  readonly wildcard: boolean
}

/**
 * Parses `https://staging.example.com` or `https://*.preview.example` into a pattern.
 * @returns undefined when `value` is not an origin (a path, a query, credentials, a `*` elsewhere).
 */
export function parseOriginPattern(value: string): OriginPattern | undefined {
  const wildcard = /^[a-z][a-z0-9+.-]*:\/\/\*\./i.test(value)
  let url: URL
  try {
    // A placeholder label for the star, so the URL parser checks the rest as a host.
    url = new URL(wildcard ? value.replace('*.', 'wildcard.') : value)
  } catch {
    return undefined
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined
  // An origin only: no credentials, path, query or fragment, and no other star.
  if (url.href !== `${url.origin}/` || url.hostname.includes('*')) return undefined
  return { scheme: url.protocol, host: wildcard ? url.hostname.slice('wildcard.'.length) : url.hostname, port: url.port, wildcard }
}

/** Whether `origin` (a URL's `origin`) matches one of the patterns. */
export function originAllowed(origin: string, patterns: readonly OriginPattern[]): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  return patterns.some((pattern) => {
    if (url.protocol !== pattern.scheme || url.port !== pattern.port) return false
    if (!pattern.wildcard) return url.hostname === pattern.host
    // One label in place of the star: `*.preview.example` takes `pr-1.preview.example`, not `a.b.preview.example`.
    const label = url.hostname.endsWith(`.${pattern.host}`) ? url.hostname.slice(0, -pattern.host.length - 1) : ''
    return /^[a-z0-9-]+$/.test(label)
  })
}
