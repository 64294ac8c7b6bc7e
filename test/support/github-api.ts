/**
 * An in-process GitHub (node:http on 127.0.0.1, an ephemeral port) for the GitHub provider's tests:
 * the OAuth web application flow and the two REST endpoints the provider reads. Point the provider
 * at it as a GitHub Enterprise Server, whose paths are the same with the API under `/api/v3`:
 *
 *   const github = await startGitHubMock({ clientId: 'id', clientSecret: 'secret' })
 *   GitHub({ enterprise: { baseUrl: github.baseUrl }, clientId: 'id', clientSecret: 'secret',
 *            dangerouslyAllowInsecureRequests: true })
 *
 * Built only from GitHub's documentation, so that a test passing here says something about GitHub:
 * - Web application flow (authorize parameters, code lifetime 10 minutes, token request parameters,
 *   form-encoded answer by default and JSON with `Accept: application/json`, `GET /user` with
 *   `Authorization: Bearer`, redirect URL matching rules, loopback ports):
 *   https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
 * - PKCE, S256 only, `code_verifier` required when a `code_challenge` was sent:
 *   https://github.blog/changelog/2025-07-14-pkce-support-for-oauth-and-github-app-authentication
 * - Authorization errors redirected to the callback (`access_denied`, `redirect_uri_mismatch`, with
 *   `error_description`, `error_uri`, `state`):
 *   https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-authorization-request-errors
 * - Token request errors (`incorrect_client_credentials`, `redirect_uri_mismatch`,
 *   `bad_verification_code`, `unverified_user_email`), answered in the body:
 *   https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors
 * - `GET /user` (public fields; private ones with `user` or `read:user`; 401 without valid credentials):
 *   https://docs.github.com/en/rest/users/users#get-the-authenticated-user
 * - `GET /user/emails` (needs `user:email` or `user`; `per_page` ≤ 100, default 30; `page`):
 *   https://docs.github.com/en/rest/users/emails#list-email-addresses-for-the-authenticated-user
 * - 404 rather than 403 for a token lacking the scope; `X-OAuth-Scopes`:
 *   https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api
 *   https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps
 * - A User-Agent is required on REST requests:
 *   https://docs.github.com/en/rest/using-the-rest-api/getting-started-with-the-rest-api#user-agent
 *
 * Where the docs are silent the mock refuses loudly rather than invent an answer: an unknown
 * `client_id` at /authorize is a 404 (GitHub shows a 404 page; no redirect is documented), a
 * `code_challenge_method` other than S256 is a 400, and a wrong `code_verifier` is answered as
 * `bad_verification_code` (the code "doesn't match what you received").
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { GitHubEmail, GitHubProfile } from 'portcullis/providers/github'

/** A GitHub account: the `GET /user` fields you care about (the rest get defaults) and its addresses. */
export type MockGitHubAccount = Pick<GitHubProfile, 'id' | 'login' | 'name' | 'email'> &
  Partial<Omit<GitHubProfile, 'id' | 'login' | 'name' | 'email'>> & {
    /** What `GET /user/emails` lists. */
    emails: GitHubEmail[]
  }

export interface GitHubMockOptions {
  /** The OAuth app's client id and secret. */
  clientId: string
  clientSecret: string
  /**
   * The callback URL registered for the app. When set, `redirect_uri` may be omitted and is checked
   * by GitHub's rules (same host or a subdomain, same port except on loopback, a sub-path). When
   * not set, any `redirect_uri` is accepted and one is required (the test's port is not known ahead).
   */
  callbackUrl?: string
}

/** One request as the mock received it. */
export interface MockGitHubRequest {
  method: string
  /** Path and query, e.g. `/api/v3/user/emails?per_page=100`. */
  url: string
  headers: IncomingMessage['headers']
}

export interface GitHubMock {
  /** `http://127.0.0.1:<port>`: the GitHub Enterprise Server base URL to give the provider. */
  readonly baseUrl: string
  /** The accounts, by login. Add or change them at will; a change shows in the next API answer. */
  users: Record<string, MockGitHubAccount>
  /** The login that the next authorizations sign in as (GitHub's signed-in user). Default `octocat`. */
  nextUser: string
  /** Set to refuse the next authorization as if the user clicked Cancel (`error=access_denied`); resets itself. */
  denyNext: boolean
  /** Requests per path (no query), e.g. `hits['/api/v3/user/emails']`. */
  readonly hits: Record<string, number>
  /** Every request, in order. */
  readonly requests: MockGitHubRequest[]
  /** An access token for `login` without the web flow (a personal access token, in effect). */
  issueToken(login: string, scopes?: string[]): string
  close(): Promise<void>
}

/** The default account: private address, so the provider must ask `/user/emails`. */
export function octocat(): MockGitHubAccount {
  return {
    id: 1,
    login: 'octocat',
    name: 'The Octocat',
    email: null,
    emails: [
      { email: 'octocat@github.com', primary: true, verified: true, visibility: 'private' },
      { email: 'secondary@example.com', primary: false, verified: true, visibility: null },
    ],
  }
}

const CODE_LIFETIME_MS = 10 * 60 * 1000
const AUTHORIZATION_ERROR_URI = '/apps/building-integrations/setting-up-and-registering-oauth-apps/troubleshooting-authorization-request-errors/'
const TOKEN_ERROR_URI = '/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/'

/** What GitHub answers at the token endpoint for each documented failure. */
const TOKEN_ERRORS = {
  incorrect_client_credentials: ['The client_id and/or client_secret passed are incorrect.', `${TOKEN_ERROR_URI}#incorrect-client-credentials`],
  redirect_uri_mismatch: [
    'The redirect_uri MUST match the registered callback URL for this application.',
    '/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch2',
  ],
  bad_verification_code: ['The code passed is incorrect or expired.', `${TOKEN_ERROR_URI}#bad-verification-code`],
  unverified_user_email: ['The user must have a verified primary email.', `${TOKEN_ERROR_URI}#unverified_user_email`],
} as const

interface IssuedCode {
  clientId: string
  /** As sent to /authorize; absent when the registered callback was used. */
  redirectUri: string | undefined
  codeChallenge: string | undefined
  login: string
  scopes: string[]
  expiresAt: number
}

interface IssuedToken {
  login: string
  scopes: string[]
}

/**
 * Starts the mock GitHub.
 *
 * @param options The app's client id and secret (and optionally its registered callback URL).
 * @example
 * ```ts
 * const github = await startGitHubMock({ clientId: 'id', clientSecret: 'secret' })
 * github.users['hubot'] = { id: 2, login: 'hubot', name: null, email: 'hubot@example.com', emails: [] }
 * github.nextUser = 'hubot'
 * // ... sign in ...
 * expect(github.hits['/api/v3/user/emails']).toBe(0)
 * await github.close()
 * ```
 */
export async function startGitHubMock(options: GitHubMockOptions): Promise<GitHubMock> {
  const codes = new Map<string, IssuedCode>()
  const tokens = new Map<string, IssuedToken>()
  const hits: Record<string, number> = {
    '/login/oauth/authorize': 0,
    '/login/oauth/access_token': 0,
    '/api/v3/user': 0,
    '/api/v3/user/emails': 0,
  }

  const issueToken = (login: string, scopes: string[] = ['read:user', 'user:email']): string => {
    const accessToken = `gho_${randomBytes(18).toString('hex')}`
    tokens.set(accessToken, { login, scopes })
    return accessToken
  }

  // The port is known once listening; nothing can reach the server before then.
  const mock: { -readonly [K in keyof GitHubMock]: GitHubMock[K] } = {
    baseUrl: '',
    users: { octocat: octocat() },
    nextUser: 'octocat',
    denyNext: false,
    hits,
    requests: [],
    issueToken,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      }),
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    hits[url.pathname] = (hits[url.pathname] ?? 0) + 1
    mock.requests.push({ method: req.method ?? 'GET', url: url.pathname + url.search, headers: req.headers })
    route(req, res, url).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { message: `mock GitHub: ${String(error)}` })
      else res.destroy()
    })
  })

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname
    if (path === '/login/oauth/authorize' && req.method === 'GET') return authorize(res, url)
    if (path === '/login/oauth/access_token' && req.method === 'POST') return accessToken(req, res, url)
    if (path.startsWith('/api/v3/')) {
      if (!req.headers['user-agent']) {
        return sendJson(res, 403, {
          message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header.',
          documentation_url: 'https://docs.github.com/rest/using-the-rest-api/getting-started-with-the-rest-api#user-agent',
        })
      }
      if (path === '/api/v3/user' && req.method === 'GET') return user(req, res)
      if (path === '/api/v3/user/emails' && req.method === 'GET') return emails(req, res, url)
    }
    sendJson(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' })
  }

  /** `GET /login/oauth/authorize`: the user is signed in as `nextUser` and approves at once. */
  function authorize(res: ServerResponse, url: URL): void {
    const query = url.searchParams
    if (query.get('client_id') !== options.clientId) return sendText(res, 404, 'Not Found')
    const given = query.get('redirect_uri') ?? undefined
    const state = query.get('state') ?? undefined
    if (given === undefined && options.callbackUrl === undefined) {
      return sendText(res, 400, 'mock GitHub: send redirect_uri, or start the mock with callbackUrl.')
    }
    if (given !== undefined && options.callbackUrl !== undefined && !redirectUriAllowed(given, options.callbackUrl)) {
      return redirectWithError(res, options.callbackUrl, 'redirect_uri_mismatch', 'The redirect_uri MUST match the registered callback URL for this application.', 'redirect-uri-mismatch', state)
    }
    const redirectUri = (given ?? options.callbackUrl) as string
    if (mock.denyNext) {
      mock.denyNext = false
      return redirectWithError(res, redirectUri, 'access_denied', 'The user has denied your application access.', 'access-denied', state)
    }
    const codeChallenge = query.get('code_challenge') ?? undefined
    if (codeChallenge !== undefined && query.get('code_challenge_method') !== 'S256') {
      return sendText(res, 400, 'mock GitHub: code_challenge_method must be S256 (GitHub does not support plain).')
    }
    const login = mock.nextUser
    if (!mock.users[login]) return sendText(res, 500, `mock GitHub: nextUser "${login}" is not in users.`)

    const code = randomBytes(10).toString('hex')
    codes.set(code, {
      clientId: options.clientId,
      redirectUri: given,
      codeChallenge,
      login,
      scopes: parseScopes(query.get('scope')),
      expiresAt: Date.now() + CODE_LIFETIME_MS,
    })
    const location = new URL(redirectUri)
    location.searchParams.set('code', code)
    if (state !== undefined) location.searchParams.set('state', state)
    res.writeHead(302, { Location: location.href }).end()
  }

  /** `POST /login/oauth/access_token`: exchanges a code (once) for a bearer token. */
  async function accessToken(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    // GitHub takes the parameters in the query or the form body.
    const params = new URLSearchParams(url.searchParams)
    for (const [key, value] of new URLSearchParams(await readBody(req))) params.set(key, value)
    const answer = (body: Record<string, string>) => sendTokenAnswer(req, res, body)
    const fail = (error: keyof typeof TOKEN_ERRORS) => {
      const [description, uri] = TOKEN_ERRORS[error]
      answer({ error, error_description: description, error_uri: uri })
    }

    // Client authentication: HTTP Basic (RFC 6749 §2.3.1) or client_id/client_secret in the body.
    const client = basicCredentials(req.headers.authorization) ?? { id: params.get('client_id'), secret: params.get('client_secret') }
    if (client.id !== options.clientId || client.secret !== options.clientSecret) return fail('incorrect_client_credentials')

    const code = params.get('code') ?? ''
    const issued = codes.get(code)
    codes.delete(code) // single use, whatever happens next
    if (!issued || issued.clientId !== client.id || issued.expiresAt <= Date.now()) return fail('bad_verification_code')
    const redirectUri = params.get('redirect_uri')
    if (redirectUri !== null && issued.redirectUri !== undefined && redirectUri !== issued.redirectUri) return fail('redirect_uri_mismatch')
    if (issued.codeChallenge !== undefined) {
      const verifier = params.get('code_verifier')
      if (!verifier || createHash('sha256').update(verifier).digest('base64url') !== issued.codeChallenge) return fail('bad_verification_code')
    }
    const account = mock.users[issued.login]
    if (!account?.emails.some((entry) => entry.primary && entry.verified)) return fail('unverified_user_email')

    answer({ access_token: issueToken(issued.login, issued.scopes), scope: issued.scopes.join(','), token_type: 'bearer' })
  }

  /** `GET /api/v3/user`. */
  function user(req: IncomingMessage, res: ServerResponse): void {
    const token = authenticate(req, res, 'https://docs.github.com/rest/users/users#get-the-authenticated-user')
    if (!token) return
    const account = mock.users[token.login]
    if (!account) return sendJson(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' })
    const withPrivate = token.scopes.includes('user') || token.scopes.includes('read:user')
    sendJson(res, 200, userResponse(account, mock.baseUrl, withPrivate), scopeHeaders(token))
  }

  /** `GET /api/v3/user/emails`, paginated. */
  function emails(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const documentation = 'https://docs.github.com/rest/users/emails#list-email-addresses-for-the-authenticated-user'
    const token = authenticate(req, res, documentation)
    if (!token) return
    const account = mock.users[token.login]
    if (!account || !(token.scopes.includes('user:email') || token.scopes.includes('user'))) {
      return sendJson(res, 404, { message: 'Not Found', documentation_url: documentation }, scopeHeaders(token))
    }
    const perPage = Math.min(Math.max(Number(url.searchParams.get('per_page') ?? 30) || 30, 1), 100)
    const page = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1)
    sendJson(res, 200, account.emails.slice((page - 1) * perPage, page * perPage), scopeHeaders(token))
  }

  /** The token of `Authorization: Bearer <token>` (or the older `token <token>`), or a 401 sent. */
  function authenticate(req: IncomingMessage, res: ServerResponse, documentation: string): IssuedToken | undefined {
    const match = /^(?:bearer|token)\s+(\S+)$/i.exec(req.headers.authorization ?? '')
    if (!match) {
      sendJson(res, 401, { message: 'Requires authentication', documentation_url: documentation })
      return undefined
    }
    const token = tokens.get(match[1] as string)
    if (!token) sendJson(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' })
    return token
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  mock.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return mock
}

/** The documented `GET /user` body for `account`, with GitHub's defaults for fields not set. */
function userResponse(account: MockGitHubAccount, baseUrl: string, withPrivate: boolean): GitHubProfile {
  const { emails: _emails, ...fields } = account
  const api = `${baseUrl}/api/v3/users/${account.login}`
  const publicUser: GitHubProfile = {
    login: account.login,
    id: account.id,
    node_id: Buffer.from(`04:User${account.id}`).toString('base64'),
    avatar_url: `https://avatars.githubusercontent.com/u/${account.id}?v=4`,
    gravatar_id: '',
    url: api,
    html_url: `${baseUrl}/${account.login}`,
    followers_url: `${api}/followers`,
    following_url: `${api}/following{/other_user}`,
    gists_url: `${api}/gists{/gist_id}`,
    starred_url: `${api}/starred{/owner}{/repo}`,
    subscriptions_url: `${api}/subscriptions`,
    organizations_url: `${api}/orgs`,
    repos_url: `${api}/repos`,
    events_url: `${api}/events{/privacy}`,
    received_events_url: `${api}/received_events`,
    type: 'User',
    site_admin: false,
    name: account.name,
    company: null,
    blog: '',
    location: null,
    email: account.email,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: '2008-01-14T04:33:35Z',
    updated_at: '2008-01-14T04:33:35Z',
  }
  const privateFields = withPrivate
    ? { private_gists: 0, total_private_repos: 0, owned_private_repos: 0, disk_usage: 0, collaborators: 0, two_factor_authentication: true, plan: { name: 'free', space: 976562499, private_repos: 10000, collaborators: 0 } }
    : {}
  return { ...publicUser, ...privateFields, ...fields }
}

/**
 * GitHub's redirect URL rule: the callback's host or a subdomain of it, the same port (any port on
 * a loopback callback), and the callback's path or a path below it.
 */
function redirectUriAllowed(given: string, registered: string): boolean {
  let redirect: URL
  const callback = new URL(registered)
  try {
    redirect = new URL(given)
  } catch {
    return false
  }
  const loopback = callback.hostname === '127.0.0.1' || callback.hostname === '[::1]'
  const hostMatches = redirect.hostname === callback.hostname || redirect.hostname.endsWith(`.${callback.hostname}`)
  const portMatches = loopback || redirect.port === callback.port
  const base = callback.pathname.replace(/\/+$/, '')
  const pathMatches = redirect.pathname === callback.pathname || redirect.pathname.startsWith(`${base}/`)
  return redirect.protocol === callback.protocol && hostMatches && portMatches && pathMatches
}

function redirectWithError(res: ServerResponse, to: string, error: string, description: string, anchor: string, state: string | undefined): void {
  const location = new URL(to)
  location.searchParams.set('error', error)
  location.searchParams.set('error_description', description)
  location.searchParams.set('error_uri', `${AUTHORIZATION_ERROR_URI}#${anchor}`)
  if (state !== undefined) location.searchParams.set('state', state)
  res.writeHead(302, { Location: location.href }).end()
}

/** Requested scopes, space- (or comma-) separated, deduplicated; none requested is none granted. */
function parseScopes(scope: string | null): string[] {
  return [...new Set((scope ?? '').split(/[\s,]+/).filter(Boolean))]
}

function scopeHeaders(token: IssuedToken): Record<string, string> {
  return { 'X-OAuth-Scopes': token.scopes.join(', ') }
}

/** `Basic base64(urlencode(id):urlencode(secret))`, decoded; `undefined` for any other scheme. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const match = /^basic\s+(\S+)$/i.exec(header ?? '')
  if (!match) return undefined
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '))
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) }
}

/** The token endpoint answers 200 in the format the Accept header asks for: JSON, else form-encoded. */
function sendTokenAnswer(req: IncomingMessage, res: ServerResponse, body: Record<string, string>): void {
  if ((req.headers.accept ?? '').includes('application/json')) return sendJson(res, 200, body)
  const form = new URLSearchParams(body).toString()
  res.writeHead(200, { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8', 'Content-Length': Buffer.byteLength(form) }).end(form)
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) }).end(text)
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) }).end(text)
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > 64 * 1024) throw new Error('request body over 64 KiB')
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
