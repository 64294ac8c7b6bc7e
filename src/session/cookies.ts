/**
 * The cookies Portcullis sets: Auth.js v5 names and options, `__Secure-`/`__Host-` prefixes, and
 * the chunking of values too large for one cookie.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6265#section-6.1 (browsers keep at least 4096 bytes per cookie)
 */
import type { CookieOption, CookiesOptions } from '../types.js'

/** A cookie to set (or, with `maxAge: 0`, to clear) on the response. */
export interface OutgoingCookie {
  name: string
  value: string
  options: CookieOption['options']
}

const FIFTEEN_MINUTES = 15 * 60

/**
 * The default cookies. `secure` adds the `__Secure-` prefix (and `__Host-` for the CSRF cookie,
 * which browsers then bind to this exact host), so a plain-HTTP page cannot overwrite them.
 */
export function defaultCookies(secure: boolean): CookiesOptions {
  const prefix = secure ? '__Secure-' : ''
  const options = { httpOnly: true, sameSite: 'lax', path: '/', secure } as const
  return {
    sessionToken: { name: `${prefix}authjs.session-token`, options: { ...options } },
    callbackUrl: { name: `${prefix}authjs.callback-url`, options: { ...options } },
    csrfToken: { name: `${secure ? '__Host-' : ''}authjs.csrf-token`, options: { ...options } },
    pkceCodeVerifier: { name: `${prefix}authjs.pkce.code_verifier`, options: { ...options, maxAge: FIFTEEN_MINUTES } },
    state: { name: `${prefix}authjs.state`, options: { ...options, maxAge: FIFTEEN_MINUTES } },
    nonce: { name: `${prefix}authjs.nonce`, options: { ...options, maxAge: FIFTEEN_MINUTES } },
  }
}

/** Defaults with the caller's overrides; each overridden cookie is taken whole (spec §2.1). */
export function resolveCookies(secure: boolean, overrides: Partial<CookiesOptions> | undefined): CookiesOptions {
  const cookies = { ...defaultCookies(secure), ...overrides }
  for (const cookie of Object.values(cookies)) {
    Object.freeze(cookie.options)
    Object.freeze(cookie)
  }
  return Object.freeze(cookies)
}

// Same budget as Auth.js, so that both libraries split a value at the same places: 4096 bytes
// per cookie, less ~160 for the name and attributes.
const CHUNK_SIZE = 4096 - 160
const CHUNK_NAME = /\.(\d+)$/

/**
 * Reads a possibly chunked cookie: `name` itself, or `name.0`, `name.1`, … joined in index order.
 * Returns undefined when neither is present.
 */
export function readChunkedCookie(cookies: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const whole = cookies[name]
  if (whole) return whole
  const chunks: [number, string][] = []
  for (const [cookieName, value] of Object.entries(cookies)) {
    if (!value || !cookieName.startsWith(name)) continue
    const index = chunkIndex(cookieName, name)
    if (index !== undefined) chunks.push([index, value])
  }
  if (chunks.length === 0) return undefined
  chunks.sort((a, b) => a[0] - b[0])
  return chunks.map(([, value]) => value).join('')
}

/**
 * The cookies that store `value` under `cookie.name`, split into chunks when it is too large, and
 * that clear every chunk (or the unchunked cookie) the request still carries from before.
 */
export function writeChunkedCookie(
  cookie: CookieOption,
  value: string,
  options: CookieOption['options'],
  requestCookies: Readonly<Record<string, string | undefined>>,
): OutgoingCookie[] {
  const merged = { ...cookie.options, ...options }
  const outgoing: OutgoingCookie[] = []
  if (value.length <= CHUNK_SIZE) {
    outgoing.push({ name: cookie.name, value, options: merged })
  } else {
    for (let i = 0; i * CHUNK_SIZE < value.length; i++) {
      outgoing.push({ name: `${cookie.name}.${i}`, value: value.slice(i * CHUNK_SIZE, (i + 1) * CHUNK_SIZE), options: merged })
    }
  }
  const written = new Set(outgoing.map((c) => c.name))
  for (const name of existingCookieNames(requestCookies, cookie.name)) {
    if (!written.has(name)) outgoing.push(expiredCookie(cookie, name))
  }
  return outgoing
}

/** The cookies that clear `cookie.name` and all its chunks present in the request. */
export function clearChunkedCookie(cookie: CookieOption, requestCookies: Readonly<Record<string, string | undefined>>): OutgoingCookie[] {
  const names = existingCookieNames(requestCookies, cookie.name)
  if (names.length === 0) names.push(cookie.name)
  return names.map((name) => expiredCookie(cookie, name))
}

/** A cookie that tells the browser to drop `name`. */
export function expiredCookie(cookie: CookieOption, name = cookie.name): OutgoingCookie {
  const { expires: _expires, ...options } = cookie.options
  return { name, value: '', options: { ...options, maxAge: 0 } }
}

function existingCookieNames(cookies: Readonly<Record<string, string | undefined>>, name: string): string[] {
  return Object.keys(cookies).filter((cookieName) => cookieName === name || chunkIndex(cookieName, name) !== undefined)
}

function chunkIndex(cookieName: string, name: string): number | undefined {
  if (cookieName.length <= name.length + 1 || !cookieName.startsWith(name)) return undefined
  const match = CHUNK_NAME.exec(cookieName)
  if (!match || match.index !== name.length) return undefined
  return Number(match[1])
}
