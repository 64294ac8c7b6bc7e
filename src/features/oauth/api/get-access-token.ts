/**
 * The server-side `getAccessToken`: a valid access token of the signed-in user's account at a
 * provider, refreshed when it has expired. The refresh code (and openid-client) is imported on the
 * first call, never to read sessions.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ResolvedConfig } from '../../../config/types.js'
import { MissingRequestContextError, RefreshAccessTokenError } from '../../../errors.js'
import { sessionRequestFor, type NodeRequest } from '../../../http/request.js'
import { appendCookies } from '../../../http/respond.js'
import type { AccessTokenOptions } from '../access-token.js'
import type { OAuthProvider } from '../provider.js'
import { withSentCookies, type OutgoingCookie } from '../../../session/cookies.js'
import { contextRequest, type Api } from '../../../api/context.js'

/**
 * The server-side `getAccessToken`: a valid access token of the signed-in user's account at a
 * provider, refreshed with the stored refresh token when it has expired or expires within
 * `skewSeconds` (default 60). The new tokens are re-sealed into the session cookie (JWT sessions,
 * sent on `res`) or stored through the adapter's `updateAccount` (database sessions). Concurrent
 * calls share one refresh.
 *
 * Inside a request context (`handlers`, the `auth` middleware, `auth(handler)`): `getAccessToken(providerId)`;
 * elsewhere: `getAccessToken({ req, res }, providerId)`. JWT sessions need `res`, before the response is sent.
 *
 * @throws RefreshAccessTokenError when there is no valid token to give (see its `code`); the session
 *   is then marked (`error: 'RefreshAccessTokenError'`) for the codes that need a new sign-in.
 * @throws TypeError for a provider id that is not a configured OAuth/OIDC provider, or a JWT session without a writable `res`.
 * @example
 * ```ts
 * app.get('/events', auth(async (req, res) => {
 *   const token = await getAccessToken('google')
 *   const api = await fetch('https://www.googleapis.com/calendar/v3/users/me/calendarList', { headers: { authorization: `Bearer ${token}` } })
 *   res.json(await api.json())
 * }))
 * ```
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-6
 */
export interface GetAccessTokenFunction {
  (providerId: string, options?: GetAccessTokenOptions): Promise<string>
  (context: { req: IncomingMessage; res?: ServerResponse | undefined }, providerId: string, options?: GetAccessTokenOptions): Promise<string>
}

/** Options of `getAccessToken`. */
export type GetAccessTokenOptions = AccessTokenOptions

let accessTokenModule: Promise<typeof import('../access-token.js')> | undefined

/** The access-token code (and openid-client), imported on the first `getAccessToken()` call. */
function loadAccessToken(): Promise<typeof import('../access-token.js')> {
  return (accessTokenModule ??= import('../access-token.js'))
}

/** Builds `getAccessToken` for one instance. */
export function createGetAccessToken(api: Api): GetAccessTokenFunction {
  const { config } = api
  // The session cookies getAccessToken() set on each request's response, newest last.
  const sentSessionCookies = new WeakMap<IncomingMessage, OutgoingCookie[]>()

  return (async (...args: unknown[]): Promise<string> => {
    const { req, res, providerId, options } = callOf(api, args)
    const provider = oauthProvider(config, providerId)
    // A refresh rotates the refresh token: with JWT sessions the new one exists only in the cookie
    // this response carries, so refreshing without sending it would lose it.
    if (config.session.strategy === 'jwt' && (!res || res.headersSent)) {
      throw new TypeError('getAccessToken() with JWT sessions needs the response, before it is sent: a refresh re-seals the session cookie. Pass { req, res }, or call it inside the request context.')
    }
    // The session as auth() reads it, callbacks included: a session the app ended (a jwt callback
    // returning null, an expired or deleted row) gets no provider token, whatever its cookie holds.
    if (!(await api.session(req, res))) {
      throw new RefreshAccessTokenError('not_signed_in', provider.id, `getAccessToken(): nobody is signed in on this request.`)
    }
    // A second call in the same request starts from the cookie the first one sent, so a refresh of
    // another provider (or of the same one again) keeps what the first stored.
    const base = sessionRequestFor(req, config)
    const sent = sentSessionCookies.get(req)
    const sessionRequest = sent ? { ...base, requestCookies: withSentCookies(base.requestCookies, sent) } : base
    const result = await (await loadAccessToken()).freshAccessToken(sessionRequest, provider, options)
    if (result.cookies.length > 0) {
      sentSessionCookies.set(req, [...(sent ?? []), ...result.cookies])
      sendSessionCookies(config, res!, result.cookies)
    }
    if (result.accessToken !== undefined) return result.accessToken
    if (result.error.code === 'no_refresh_token' || result.error.code === 'invalid_grant') {
      // The rest of this request sees the mark too (JWT sessions also carry it in the new cookie).
      const session = await api.pendingSession(req)?.catch(() => null)
      if (session) session.error = 'RefreshAccessTokenError'
    }
    const { error } = result
    config.logger[error.logLevel](error.type, error.message)
    throw error
  }) as GetAccessTokenFunction
}

/** The request and the arguments of a call in either form. */
function callOf(api: Api, args: unknown[]): { req: NodeRequest; res: ServerResponse | undefined; providerId: unknown; options: GetAccessTokenOptions | undefined } {
  const [first] = args
  if (typeof first === 'string') {
    const store = api.requestScope.getStore()
    if (!store) throw new MissingRequestContextError('getAccessToken()')
    return { req: store.req, res: store.res, providerId: args[0], options: args[1] as GetAccessTokenOptions | undefined }
  }
  const context = contextRequest(first)
  if (!context) throw new TypeError('getAccessToken() takes (providerId, options) inside a request, or ({ req, res }, providerId, options).')
  return { req: context.req, res: context.res, providerId: args[1], options: args[2] as GetAccessTokenOptions | undefined }
}

/** @throws TypeError for an id that is not a configured OAuth/OIDC provider. */
function oauthProvider(config: ResolvedConfig, providerId: unknown): OAuthProvider {
  const provider = typeof providerId === 'string' ? config.providerById.get(providerId) : undefined
  if (provider && (provider.type === 'oauth' || provider.type === 'oidc')) return provider as OAuthProvider
  const known = config.providers.filter((candidate) => candidate.type === 'oauth' || candidate.type === 'oidc').map((candidate) => candidate.id)
  throw new TypeError(`getAccessToken(): "${String(providerId)}" is not a configured OAuth/OIDC provider (configured: ${known.join(', ') || 'none'}).`)
}

function sendSessionCookies(config: ResolvedConfig, res: ServerResponse, cookies: OutgoingCookie[]): void {
  if (!res.headersSent) return appendCookies(res, cookies)
  config.logger.error(
    'SessionCookieNotRefreshed',
    'getAccessToken() stored new provider tokens in the session cookie, but the response was sent meanwhile. This instance answers the old cookie with the new tokens for a day; call getAccessToken() before sending the response.',
  )
}
