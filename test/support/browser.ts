/**
 * A headless "browser" for OAuth flows: `fetch` with a cookie jar and manual redirects, and a
 * driver for the test IdP's development login and consent pages (see `./idp.js`).
 */
import { parseSetCookie, stringifyCookie, type SetCookie } from 'cookie'

/** How a page sends the browser on: a redirect (GET) or an auto-submitted form (POST). */
export type Navigation = { method: 'GET'; url: string } | { method: 'POST'; url: string; body: URLSearchParams }

/** What `Browser.request` may send. Without `method`, a request with a body is a POST. */
export interface BrowserRequestInit {
  method?: string
  body?: URLSearchParams | string
  headers?: Record<string, string>
}

interface StoredCookie {
  value: string
  path: string
  expiresAt: number
}

const MAX_HOPS = 20
const rawValue = (value: string) => value

/**
 * One user agent. Cookies are kept per `host:port` of the URL (Domain is ignored, so a cookie
 * never reaches another host or port), one per name: a later Set-Cookie of the same name replaces
 * it whatever its Path. Path is honoured when sending; Max-Age and Expires delete or expire a
 * cookie; Secure and SameSite are ignored (the tests run over http on one site). Values are kept
 * and sent as they appear on the wire.
 *
 * @example
 * const browser = new Browser()
 * const back = await browser.authorize(authorizationUrl)
 * const callback = await browser.navigate(back)
 * @see https://www.rfc-editor.org/rfc/rfc6265#section-5.3
 */
export class Browser {
  readonly #jars = new Map<string, Map<string, StoredCookie>>()

  /**
   * `fetch` with `redirect: 'manual'`, sending this browser's cookies for the URL (unless
   * `init.headers` has a `cookie` header of its own) and storing the ones the response sets.
   *
   * @param url An absolute URL.
   */
  async request(url: string, init: BrowserRequestInit = {}): Promise<Response> {
    const target = new URL(url)
    const headers = new Headers(init.headers)
    const cookieHeader = this.#cookieHeader(target)
    if (cookieHeader && !headers.has('cookie')) headers.set('cookie', cookieHeader)
    const method = init.method ?? (init.body === undefined ? 'GET' : 'POST')
    const response = await fetch(target, { method, headers, body: init.body, redirect: 'manual' })
    for (const header of response.headers.getSetCookie()) this.#store(target, parseSetCookie(header, { decode: rawValue }))
    return response
  }

  /** The value of cookie `name` that this browser would send to `url`, if any. */
  cookie(url: string, name: string): string | undefined {
    const target = new URL(url)
    const cookie = this.#jar(target).get(name)
    return cookie && isSendable(cookie, target) ? cookie.value : undefined
  }

  /** Stores a session cookie with Path `/`, as if `url`'s server had set it. */
  setCookie(url: string, name: string, value: string): void {
    this.#jar(new URL(url)).set(name, { value, path: '/', expiresAt: Infinity })
  }

  /** Forgets cookie `name` of `url`'s host. */
  deleteCookie(url: string, name: string): void {
    this.#jar(new URL(url)).delete(name)
  }

  /** Performs a navigation: the GET or form POST that `authorize` hands back. */
  navigate(navigation: Navigation): Promise<Response> {
    return navigation.method === 'GET'
      ? this.request(navigation.url)
      : this.request(navigation.url, { method: 'POST', body: navigation.body })
  }

  /**
   * Follows redirects from `response` with GETs while they stay on `origin` (default: the origin
   * of `response.url`), and resolves with the first response that is not such a redirect.
   */
  async follow(response: Response, origin = new URL(response.url).origin, maxHops = MAX_HOPS): Promise<Response> {
    for (let hop = 0; hop < maxHops; hop++) {
      const next = redirectTarget(response)
      if (!next || new URL(next).origin !== origin) return response
      await response.body?.cancel()
      response = await this.request(next)
    }
    throw new Error(`more than ${maxHops} redirects from ${response.url}`)
  }

  /**
   * Presses the button of the page's (first) form: POSTs its hidden fields to its action.
   * @throws Error when the page has no form.
   */
  async submitForm(page: Response, fields: Record<string, string> = {}): Promise<Response> {
    const form = await this.formOf(page)
    // What the user types into the form's visible inputs.
    for (const [name, value] of Object.entries(fields)) form.body.set(name, value)
    return this.navigate(form)
  }

  /**
   * The POST that pressing the button of the page's (first) form makes: its action and hidden fields.
   * @throws Error when the page has no form.
   */
  async formOf(page: Response): Promise<Navigation & { method: 'POST' }> {
    const text = await page.text()
    const form = readForm(text, page.url)
    if (!form) throw new Error(`no form on ${page.url} (${page.status}): ${pageText(text)}`)
    return { method: 'POST', url: form.action, body: form.fields }
  }

  /**
   * Drives the IdP from an authorization URL through its development login (submitting `login`,
   * any password) and consent pages, until the IdP sends the browser elsewhere: a redirect to the
   * client (with `code` or `error`) or an auto-submitted `form_post`. A second sign-in skips the
   * pages the IdP remembers (its session, a granted consent). Does not visit the client.
   *
   * @throws Error with the page's text when the IdP shows an error page (e.g. an unknown
   *   `redirect_uri`, which it cannot redirect to).
   */
  async authorize(authorizationUrl: string, login = 'alice'): Promise<Navigation> {
    const idpOrigin = new URL(authorizationUrl).origin
    let response = await this.request(authorizationUrl)
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const next = redirectTarget(response)
      if (next) {
        await response.body?.cancel()
        if (new URL(next).origin !== idpOrigin) return { method: 'GET', url: next }
        response = await this.request(next)
        continue
      }
      const page = await response.text()
      const form = readForm(page, response.url)
      if (!form) throw new Error(`IdP page ${response.url} (${response.status}): ${pageText(page)}`)
      if (new URL(form.action).origin !== idpOrigin) return { method: 'POST', url: form.action, body: form.fields }
      response = await this.request(form.action, { method: 'POST', body: fillInteraction(form.fields, login) })
    }
    throw new Error(`the IdP did not send the browser back within ${MAX_HOPS} steps`)
  }

  #jar(url: URL): Map<string, StoredCookie> {
    let jar = this.#jars.get(url.host)
    if (!jar) this.#jars.set(url.host, (jar = new Map()))
    return jar
  }

  #store(url: URL, cookie: SetCookie) {
    const jar = this.#jar(url)
    const expiresAt = cookie.maxAge !== undefined ? Date.now() + cookie.maxAge * 1000 : (cookie.expires?.getTime() ?? Infinity)
    if (expiresAt <= Date.now()) jar.delete(cookie.name)
    else jar.set(cookie.name, { value: cookie.value ?? '', path: cookie.path ?? defaultPath(url), expiresAt })
  }

  #cookieHeader(url: URL): string {
    const sendable = [...this.#jar(url)].filter(([, cookie]) => isSendable(cookie, url))
    return stringifyCookie(Object.fromEntries(sendable.map(([name, cookie]) => [name, cookie.value])), { encode: rawValue })
  }
}

function isSendable(cookie: StoredCookie, url: URL): boolean {
  return cookie.expiresAt > Date.now() && pathMatches(url.pathname, cookie.path)
}

/** RFC 6265 §5.1.4. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true
  if (!requestPath.startsWith(cookiePath)) return false
  return cookiePath.endsWith('/') || requestPath.charAt(cookiePath.length) === '/'
}

/** RFC 6265 §5.1.4: the directory of the request path. */
function defaultPath(url: URL): string {
  const slash = url.pathname.lastIndexOf('/')
  return slash > 0 ? url.pathname.slice(0, slash) : '/'
}

function redirectTarget(response: Response): string | undefined {
  const location = response.headers.get('location')
  return response.status >= 300 && response.status < 400 && location ? new URL(location, response.url).href : undefined
}

/** The dev login page posts `prompt=login` with `login` and `password`; consent posts `prompt=consent`. */
function fillInteraction(fields: URLSearchParams, login: string): URLSearchParams {
  const filled = new URLSearchParams(fields)
  if (filled.get('prompt') === 'login') {
    filled.set('login', login)
    filled.set('password', 'any password')
  }
  return filled
}

/**
 * The first form of a page oidc-provider rendered (its interaction and form_post pages), read
 * with patterns fitted to that markup: double-quoted attributes, hidden inputs.
 */
function readForm(page: string, pageUrl: string): { action: string; fields: URLSearchParams } | undefined {
  const formTag = /<form\b[^>]*>/i.exec(page)?.[0]
  if (!formTag) return undefined
  const fields = new URLSearchParams()
  for (const [input] of page.matchAll(/<input\b[^>]*>/gi)) {
    const name = attribute(input, 'name')
    if (name !== undefined && attribute(input, 'type') === 'hidden') fields.append(name, attribute(input, 'value') ?? '')
  }
  return { action: new URL(attribute(formTag, 'action') ?? '', pageUrl).href, fields }
}

function attribute(tag: string, name: string): string | undefined {
  const value = new RegExp(`\\s${name}="([^"]*)"`, 'i').exec(tag)?.[1]
  return value === undefined ? undefined : unescapeHtml(value)
}

const HTML_ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#96;': '`' }

/** Reverses oidc-provider's `htmlSafe` (these five characters) and Portcullis's escapeHtml (also the backtick). */
function unescapeHtml(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|#39|#96);/g, (entity) => HTML_ENTITIES[entity] ?? entity)
}

function pageText(page: string): string {
  return unescapeHtml(page.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, '').replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ').trim()
}
