/**
 * Where the auth routes are, and the two ways this client talks to them: a GET for JSON, and a
 * form POST that asks for JSON instead of a redirect (`X-Auth-Return-Redirect: 1`, the header
 * Auth.js's own clients send).
 */
import { AuthClientError, type AuthErrorCode } from './types.js'

/** Options of `configure`. */
export interface ClientOptions {
  /**
   * Where the server mounts the auth routes: a path on this origin (default `/api/auth`) or an
   * absolute URL (another origin needs CORS with credentials, and a same-site origin for the
   * SameSite=Lax cookies).
   */
  basePath?: string
}

let basePath = '/api/auth'

/**
 * Sets where the auth routes are, for every function of this module.
 *
 * @example
 * configure({ basePath: '/auth' })
 */
export function configure(options: ClientOptions): void {
  if (options.basePath !== undefined) basePath = options.basePath.replace(/\/+$/, '')
}

/** The absolute URL of an auth route, e.g. `authUrl('/session')`. */
export function authUrl(path: string): string {
  return new URL(`${basePath}${path}`, location.href).href
}

/** GET a route's JSON; throws `AuthClientError` for a failed request or an error answer. */
export async function getJson<T>(path: string): Promise<T> {
  const response = await send(authUrl(path), { headers: { Accept: 'application/json' } })
  const body = await readJson(response)
  if (!response.ok) throw errorOf(body, response.status)
  return body as T
}

/** The `{ url, error, code }` answer of a state-changing route. */
export interface RedirectAnswer {
  status: number
  url?: string
  error?: AuthErrorCode
  code?: string
  message?: string
}

/** POSTs `fields` form-encoded, asking for the redirect as JSON. */
export async function postForm(url: string, fields: Record<string, string>): Promise<RedirectAnswer> {
  const response = await send(url, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/x-www-form-urlencoded', 'X-Auth-Return-Redirect': '1' },
    body: new URLSearchParams(fields),
  })
  const body = await readJson(response)
  if (!isObject(body)) throw unexpected(response.status)
  return { ...(body as Omit<RedirectAnswer, 'status'>), status: response.status }
}

/** POSTs `body` as JSON and reads the JSON answer; throws `AuthClientError` for a failed request or an error answer. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await send(authUrl(path), {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })
  const answer = await readJson(response)
  if (!response.ok) throw errorOf(answer, response.status)
  return answer as T
}

async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    // `include` sends the cookies to an absolute basePath on another origin too; same-origin
    // requests send them either way.
    return await fetch(url, { ...init, credentials: 'include', cache: 'no-store' })
  } catch (error) {
    throw new AuthClientError('NetworkError', 0, `Could not reach ${url}: ${String(error)}`)
  }
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return await response.json()
  } catch {
    throw unexpected(response.status)
  }
}

function errorOf(body: unknown, status: number): AuthClientError {
  const { error, message } = isObject(body) ? (body as { error?: AuthErrorCode; message?: string }) : {}
  return error ? new AuthClientError(error, status, message ?? error) : unexpected(status)
}

function unexpected(status: number): AuthClientError {
  return new AuthClientError('UnexpectedResponse', status, `The auth route answered ${status} without the JSON it gives: is basePath (${basePath}) right?`)
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}
