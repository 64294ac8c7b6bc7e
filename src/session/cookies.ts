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

/** A cookie a feature sets (`Feature.cookies`): its name without the `__Secure-` prefix, and its own lifetime if any. */
export interface FeatureCookie {
  readonly name: string
  readonly maxAge?: number
}

/** What the cookie table reads of a feature. */
interface CookieDeclarer {
  readonly cookies?: Readonly<Record<string, FeatureCookie>> | undefined
}

const FIFTEEN_MINUTES = 15 * 60
const FIVE_MINUTES = 5 * 60

/**
 * The default cookies: the core's, and those the features declare (`Feature.cookies`). `secure`
 * adds the `__Secure-` prefix (and `__Host-` for the CSRF cookie, which browsers then bind to this
 * exact host), so a plain-HTTP page cannot overwrite them.
 */
export function defaultCookies(secure: boolean, features: readonly CookieDeclarer[]): CookiesOptions {
  const prefix = secure ? '__Secure-' : ''
  const options = { httpOnly: true, sameSite: 'lax', path: '/', secure } as const
  const featureCookies = features.flatMap((feature) => Object.entries(feature.cookies ?? {}))
  // The features' keys are the ones their wings add to CookiesOptions.
  const declared = Object.fromEntries(
    featureCookies.map(([key, cookie]) => [key, { name: `${prefix}${cookie.name}`, options: cookie.maxAge === undefined ? { ...options } : { ...options, maxAge: cookie.maxAge } }]),
  ) as unknown as CookiesOptions
  return {
    ...declared,
    sessionToken: { name: `${prefix}authjs.session-token`, options: { ...options } },
    callbackUrl: { name: `${prefix}authjs.callback-url`, options: { ...options } },
    csrfToken: { name: `${secure ? '__Host-' : ''}authjs.csrf-token`, options: { ...options } },
    pkceCodeVerifier: { name: `${prefix}authjs.pkce.code_verifier`, options: { ...options, maxAge: FIFTEEN_MINUTES } },
    state: { name: `${prefix}authjs.state`, options: { ...options, maxAge: FIFTEEN_MINUTES } },
    nonce: { name: `${prefix}authjs.nonce`, options: { ...options, maxAge: FIFTEEN_MINUTES } },
    // Its lifetime is the e-mail provider's maxAge, given when it is set.
    emailLink: { name: `${prefix}authjs.email-link`, options: { ...options } },
    // A refused sign-in's form, read by the next sign-in page.
    signInForm: { name: `${prefix}authjs.signin-form`, options: { ...options, maxAge: FIVE_MINUTES } },
  }
}

/** Defaults with the caller's overrides; each overridden cookie is taken whole (spec §2.1). */
export function resolveCookies(secure: boolean, overrides: Partial<CookiesOptions> | undefined, features: readonly CookieDeclarer[]): CookiesOptions {
  const cookies = { ...defaultCookies(secure, features), ...overrides }
  for (const cookie of Object.values(cookies)) {
    Object.freeze(cookie.options)
    Object.freeze(cookie)
  }
  return Object.freeze(cookies)
}

/**
 * Bytes of value per cookie chunk. Same budget as Auth.js, so that both libraries split a value at
 * the same places: 4096 bytes per cookie, less ~160 for the name and attributes.
 */
export const COOKIE_CHUNK_SIZE = 4096 - 160

/**
 * The most chunks read, cleared or written for one cookie: ~39 KB of value. Every chunk a request
 * carries used to be read and, on sign-out or a failed read, cleared with its own `Set-Cookie`, so
 * a request with 10,000 one-byte chunks (planted by a page on a sibling subdomain, say) bought
 * 829 KB of response headers. A browser keeps a 4 KB cookie per name, so one session is as many
 * cookies as it has chunks; but what servers accept caps it well below 10: Node reads 16 KB of
 * request headers by default (fewer than 4 chunks with the other headers), nginx and Apache 8 KB
 * per header line. `jwt.maxSize` writes 3 by default and may be raised up to this cap, so the app
 * never writes what it would not read back. Chunks past the cap are ignored: never read, never
 * cleared (a request cannot buy more than 11 `Set-Cookie` headers for the session), and a genuine
 * token longer than the cap does not open.
 */
export const MAX_COOKIE_CHUNKS = 10

/** The two forms a possibly chunked cookie takes in a request, read within `MAX_COOKIE_CHUNKS`. */
export interface ChunkedCookieForms {
  /** `name` itself; undefined when absent or empty. */
  whole: string | undefined
  /**
   * `name.0`, `name.1`, … joined, up to the first missing (or empty) index and at most
   * `MAX_COOKIE_CHUNKS` of them; undefined when `name.0` is absent or empty.
   */
  chunked: string | undefined
  /** The chunk names the request carries within the cap (gaps included, empty values too): what clearing the chunked form clears. */
  chunkNames: string[]
}

/**
 * Reads both forms of a possibly chunked cookie apart, for a caller that can tell which one is
 * genuine (the JWT session opens each). Only the names `name.0` … `name.9` are looked up, and only
 * when a name of that shape is there, so `name.01` is no chunk.
 *
 * @param cookies The request's cookies.
 * @param name The cookie's name, e.g. `authjs.session-token`.
 * @example
 * ```ts
 * readChunkedCookieForms({ 'authjs.session-token.0': 'ab', 'authjs.session-token.1': 'c' }, 'authjs.session-token')
 * // { whole: undefined, chunked: 'abc', chunkNames: ['authjs.session-token.0', 'authjs.session-token.1'] }
 * ```
 */
export function readChunkedCookieForms(cookies: Readonly<Record<string, string | undefined>>, name: string): ChunkedCookieForms {
  if (!hasChunkName(cookies, name)) return { whole: cookies[name] || undefined, chunked: undefined, chunkNames: [] }
  const chunks: string[] = []
  const chunkNames: string[] = []
  let contiguous = true
  for (const chunkName of chunkNamesOf(name)) {
    if (!Object.hasOwn(cookies, chunkName)) {
      contiguous = false
      continue
    }
    chunkNames.push(chunkName)
    const value = cookies[chunkName]
    if (!value) contiguous = false
    else if (contiguous) chunks.push(value)
  }
  return { whole: cookies[name] || undefined, chunked: chunks.length > 0 ? chunks.join('') : undefined, chunkNames }
}

/**
 * Whether any of the cookies' names could be one of `name`'s chunks: `name.` and one character more.
 * Most requests carry no chunk, and looking at the names a request carries (a handful; cookie
 * parsing already went through each) costs a fraction of looking up all ten chunk names in them.
 */
function hasChunkName(cookies: Readonly<Record<string, string | undefined>>, name: string): boolean {
  const length = name.length + 2
  for (const key in cookies) if (key.length === length && key.charCodeAt(length - 2) === DOT && key.startsWith(name)) return true
  return false
}

const DOT = 46

/**
 * `name.0` … `name.9`, made once per cookie name: this runs on every session read. The names are the
 * configured cookies' (and `getToken`'s `cookieName`), a handful; the memo stops growing at 64.
 */
const chunkNameLists = new Map<string, readonly string[]>()
function chunkNamesOf(name: string): readonly string[] {
  let names = chunkNameLists.get(name)
  if (!names) {
    // As property keys (internalised strings): Object.hasOwn with a string made at run time looks
    // it up in the string table on every call, ten times slower than with the key itself.
    names = Object.keys(Object.fromEntries(Array.from({ length: MAX_COOKIE_CHUNKS }, (_, index) => [`${name}.${index}`, index])))
    if (chunkNameLists.size < 64) chunkNameLists.set(name, names)
  }
  return names
}

/**
 * Reads a possibly chunked cookie: `name` itself, else `name.0`, `name.1`, … joined in index order
 * (see `readChunkedCookieForms` for the cap and gaps). For callers that cannot open the value to
 * choose between the two forms; the JWT session does (jwt-strategy.ts).
 * Returns undefined when neither is present.
 */
export function readChunkedCookie(cookies: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const { whole, chunked } = readChunkedCookieForms(cookies, name)
  return whole ?? chunked
}

/**
 * The cookies that store `value` under `cookie.name`, split into chunks when it is too large, and
 * that clear every chunk (or the unchunked cookie) the request still carries from before.
 *
 * @throws TypeError when `value` needs more than `MAX_COOKIE_CHUNKS` chunks: it would not be read back.
 */
export function writeChunkedCookie(
  cookie: CookieOption,
  value: string,
  options: CookieOption['options'],
  requestCookies: Readonly<Record<string, string | undefined>>,
): OutgoingCookie[] {
  if (value.length > MAX_COOKIE_CHUNKS * COOKIE_CHUNK_SIZE) {
    throw new TypeError(`writeChunkedCookie: a value of ${value.length} bytes needs more than ${MAX_COOKIE_CHUNKS} chunks of ${COOKIE_CHUNK_SIZE}.`)
  }
  const merged = { ...cookie.options, ...options }
  const outgoing: OutgoingCookie[] = []
  if (value.length <= COOKIE_CHUNK_SIZE) {
    outgoing.push({ name: cookie.name, value, options: merged })
  } else {
    for (let i = 0; i * COOKIE_CHUNK_SIZE < value.length; i++) {
      outgoing.push({ name: `${cookie.name}.${i}`, value: value.slice(i * COOKIE_CHUNK_SIZE, (i + 1) * COOKIE_CHUNK_SIZE), options: merged })
    }
  }
  const written = new Set(outgoing.map((c) => c.name))
  for (const name of existingCookieNames(requestCookies, cookie.name)) {
    if (!written.has(name)) outgoing.push(expiredCookie(cookie, name))
  }
  return outgoing
}

/** The cookies that clear `cookie.name` and its chunks present in the request (within `MAX_COOKIE_CHUNKS`). */
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

/** `name` and its chunks within the cap, as far as the request carries them: at most 1 + `MAX_COOKIE_CHUNKS` names. */
function existingCookieNames(cookies: Readonly<Record<string, string | undefined>>, name: string): string[] {
  const { chunkNames } = readChunkedCookieForms(cookies, name)
  return Object.hasOwn(cookies, name) ? [name, ...chunkNames] : chunkNames
}

/**
 * The request's cookies as the browser will hold them once `sent` (cookies set on the response, in
 * order) arrives: set ones replaced, cleared ones gone. For a read later in the same request that
 * must see what an earlier call of it changed (a sign-in, a sign-out, new provider tokens).
 */
export function withSentCookies(cookies: Readonly<Record<string, string | undefined>>, sent: readonly OutgoingCookie[]): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = { ...cookies }
  for (const cookie of sent) merged[cookie.name] = cookie.value === '' || cookie.options.maxAge === 0 ? undefined : cookie.value
  return merged
}
