/**
 * Sign in with an existing Passport OAuth 2 strategy: `passport-oauth2`'s `OAuth2Strategy`, or any
 * strategy built on it (`passport-github2`, `passport-google-oauth20`, `passport-discord`, ...). The
 * strategy supplies what it knows about its provider: the authorization URL and scope, its extra
 * authorization and token parameters, the token exchange (its own `_oauth2` client, so custom headers
 * and quirks it handles keep working) and `userProfile`. Portcullis supplies the rest: the check
 * cookies (state, and PKCE when the strategy enables it), users and accounts through the adapter,
 * sessions, callbacks, events and pages, exactly as for a built-in provider.
 *
 * Passport itself is not used: no `passport.initialize()`, no `express-session`, no
 * `serializeUser`. The strategy's `verify` callback is **not** called (Portcullis decides who signs
 * in: use the `signIn` callback to refuse someone). OAuth 1.0a strategies (`passport-twitter`,
 * `passport-oauth1`) are refused at init: they need request-token signing that OAuth 2 has no place for.
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Passport from 'portcullis/providers/passport'
 * import { Strategy as GitHubStrategy } from 'passport-github2'
 *
 * // allRawEmails: the addresses with GitHub's `verified` flag; without it no address is taken.
 * const github = new GitHubStrategy(
 *   { clientID: process.env.GH_ID!, clientSecret: process.env.GH_SECRET!, callbackURL: '/api/auth/callback/github', scope: ['user:email'], allRawEmails: true },
 *   () => {}, // not called: Portcullis signs the user in
 * )
 * const { handlers, auth } = Portcullis({ providers: [Passport(github)] })
 * ```
 * @see https://www.passportjs.org/packages/passport-oauth2/
 */
import type { User } from '../types.js'
import type { OAuthCheck, OAuthConfig, Profile, TokenRequestContext, TokenSet } from './oauth.js'

/**
 * A user profile as Passport strategies normalise it ("Passport's user profile" convention), with
 * the provider's own JSON in `_json`.
 * @see https://www.passportjs.org/reference/normalized-profile/
 */
export interface PassportProfile {
  /** The strategy's name, e.g. `github`. */
  provider?: string | undefined
  id: string | number
  displayName?: string | undefined
  username?: string | undefined
  name?: { familyName?: string | undefined; givenName?: string | undefined; middleName?: string | undefined } | null | undefined
  emails?: { value: string; type?: string | undefined; primary?: boolean | undefined; verified?: boolean | undefined }[] | undefined
  photos?: { value: string }[] | undefined
  /** The provider's answer, parsed. */
  _json?: Record<string, unknown> | undefined
}

/**
 * The parts of a `passport-oauth2` strategy the bridge uses: its `_oauth2` client (from the `oauth`
 * package; documented by passport-oauth2 as the "protected" property subclasses use) and the
 * options the constructor stored. Typed structurally: no Passport types are needed.
 */
export interface PassportOAuth2Strategy {
  name?: string | undefined
  _oauth2: {
    _clientId: string
    _clientSecret?: string | undefined
    _baseSite?: string | undefined
    _authorizeUrl: string
    _accessTokenUrl: string
    getOAuthAccessToken(code: string, params: Record<string, string>, callback: (error: unknown, accessToken?: string, refreshToken?: string, results?: Record<string, unknown>) => void): void
  }
  _scope?: string | string[] | undefined
  _scopeSeparator?: string | undefined
  _pkceMethod?: string | false | undefined
  userProfile(accessToken: string, done: (error: unknown, profile?: PassportProfile) => void): void
  authorizationParams?(options: object): Record<string, unknown>
  tokenParams?(options: object): Record<string, unknown>
  parseErrorResponse?(body: string, status: number): Error | null
}

/**
 * Any Passport strategy object, as its own typings declare it: `@types/passport-oauth2` makes
 * `_oauth2` protected, so a typed `new GitHubStrategy(…)` cannot match `PassportOAuth2Strategy`.
 * `Passport()` takes it and checks at run time that it is built on passport-oauth2.
 */
export interface PassportStrategy {
  name?: string | undefined
  authenticate(...args: never[]): unknown
}

/** Options of the bridge; every field optional. */
export interface PassportOptions {
  /** The provider id in URLs and env names. Default: the strategy's `name` (`github` for passport-github2). */
  id?: string | undefined
  /** Shown on the sign-in button. Default: the id, capitalised. */
  name?: string | undefined
  /**
   * Maps the Passport profile to the user. Default: `id`, `displayName` (else `username`), an
   * address of `emails` (a verified one first, the primary one among them), `emailVerified` (true
   * only when that entry says `verified: true`), the first photo. Return `emailVerified: true` from
   * your own only for an address your provider has verified: the core takes no other.
   */
  profile?: ((profile: PassportProfile, tokens: TokenSet) => User | Promise<User>) | undefined
  /** As for every OAuth provider: see `OAuthProviderOptions`. */
  allowDangerousEmailAccountLinking?: boolean | undefined
  redirectProxyUrl?: string | undefined
  /** For a local development provider on http only. */
  dangerouslyAllowInsecureRequests?: boolean | undefined
}

/**
 * The strategy as a Portcullis `oauth` provider.
 *
 * Register `https://<your-site>/api/auth/callback/<id>` with the provider: the strategy's own
 * `callbackURL` is not used (Portcullis sends its callback route as `redirect_uri`).
 *
 * @throws TypeError for something that is not a passport-oauth2 strategy, or an OAuth 1.0a one.
 */
export default function Passport(strategy: PassportOAuth2Strategy | PassportStrategy, options: PassportOptions = {}): OAuthConfig {
  return bridge(strategy as PassportOAuth2Strategy, options)
}

function bridge(strategy: PassportOAuth2Strategy, options: PassportOptions): OAuthConfig {
  const oauth2 = strategy?._oauth2
  if (!strategy || typeof strategy !== 'object') throw new TypeError('Passport(strategy): pass a constructed strategy, e.g. Passport(new GitHubStrategy(options, verify)).')
  if (!oauth2 || typeof oauth2.getOAuthAccessToken !== 'function') {
    const oauth1 = '_oauth' in strategy && (strategy as { _oauth?: { _requestUrl?: unknown } })._oauth?._requestUrl !== undefined
    throw new TypeError(
      oauth1
        ? `Passport(strategy): "${strategy.name ?? 'this strategy'}" is an OAuth 1.0a strategy; only OAuth 2 strategies (built on passport-oauth2) are supported.`
        : `Passport(strategy): "${strategy.name ?? 'this strategy'}" is not built on passport-oauth2 (it has no _oauth2 client); only OAuth 2 strategies are supported.`,
    )
  }
  const id = options.id ?? strategy.name
  if (typeof id !== 'string' || !id || id === 'oauth2') {
    throw new TypeError('Passport(strategy, { id }): give the provider an id (it names the callback route /callback/<id>); the strategy\'s own name is missing or the generic "oauth2".')
  }

  const scope = Array.isArray(strategy._scope) ? strategy._scope.join(strategy._scopeSeparator ?? ' ') : strategy._scope
  const authorizationParams = stringParams({ ...(scope ? { scope } : {}), ...strategy.authorizationParams?.({}) })
  // passport-oauth2 needs state with PKCE; without PKCE, state is what ties the callback to the browser.
  const checks: OAuthCheck[] = strategy._pkceMethod ? ['pkce', 'state'] : ['state']

  return {
    id,
    name: options.name ?? id.charAt(0).toUpperCase() + id.slice(1),
    type: 'oauth',
    clientId: oauth2._clientId,
    clientSecret: oauth2._clientSecret || undefined,
    // The `oauth` client posts client_id and client_secret in the body; a refresh does the same.
    client: { token_endpoint_auth_method: oauth2._clientSecret ? 'client_secret_post' : 'none' },
    authorization: { url: absolute(oauth2._baseSite, oauth2._authorizeUrl), params: authorizationParams },
    token: { url: absolute(oauth2._baseSite, oauth2._accessTokenUrl), request: (context) => exchangeCode(strategy, context) },
    // A Passport profile's `name` is an object ({ givenName, familyName }), not the OIDC claim.
    userinfo: { request: ({ tokens }) => loadProfile(strategy, tokens.access_token!) as unknown as Promise<Profile> },
    checks,
    profile: (options.profile ?? passportUser) as unknown as OAuthConfig['profile'],
    allowDangerousEmailAccountLinking: options.allowDangerousEmailAccountLinking,
    redirectProxyUrl: options.redirectProxyUrl,
    dangerouslyAllowInsecureRequests: options.dangerouslyAllowInsecureRequests,
  }
}

/** The code for tokens through the strategy's own client, with its `tokenParams`, as its `authenticate` would. */
function exchangeCode(strategy: PassportOAuth2Strategy, { code, redirectUri, codeVerifier }: TokenRequestContext): Promise<TokenSet> {
  const params: Record<string, string> = { ...stringParams(strategy.tokenParams?.({}) ?? {}), grant_type: 'authorization_code', redirect_uri: redirectUri }
  if (codeVerifier) params.code_verifier = codeVerifier
  return new Promise((resolve, reject) => {
    strategy._oauth2.getOAuthAccessToken(code, params, (error, accessToken, refreshToken, results = {}) => {
      if (error) return reject(tokenError(strategy, error))
      if (!accessToken) return reject(new Error('the token endpoint answered without an access_token.'))
      const tokens: TokenSet = { ...results, access_token: accessToken }
      if (refreshToken) tokens.refresh_token = refreshToken
      // A form-encoded answer (some providers) gives strings.
      if (typeof results.expires_in === 'string' && /^\d+$/.test(results.expires_in)) tokens.expires_in = Number(results.expires_in)
      resolve(tokens)
    })
  })
}

/** The provider's error (RFC 6749 §5.2), as the strategy parses it, without the response body. */
function tokenError(strategy: PassportOAuth2Strategy, error: unknown): Error {
  const { statusCode, data } = (error ?? {}) as { statusCode?: number; data?: unknown }
  if (typeof statusCode === 'number' && typeof data === 'string') {
    let parsed: (Error & { code?: unknown }) | null = null
    try {
      parsed = strategy.parseErrorResponse?.(data, statusCode) ?? null
    } catch {
      // Not JSON: fall through to the status alone.
    }
    const code = typeof parsed?.code === 'string' ? ` error=${JSON.stringify(parsed.code.slice(0, 100))}` : ''
    return new Error(`the token endpoint answered ${statusCode}${code}`)
  }
  return error instanceof Error ? error : new Error(String(error))
}

function loadProfile(strategy: PassportOAuth2Strategy, accessToken: string): Promise<PassportProfile> {
  return new Promise((resolve, reject) => {
    strategy.userProfile(accessToken, (error, profile) => {
      if (error) return reject(error instanceof Error ? error : new Error(String(error)))
      if (!profile || typeof profile !== 'object') return reject(new Error('userProfile gave no profile (is skipUserProfile set?).'))
      // passport-oauth2's own userProfile answers {}: without an id every user would be one account.
      const { id } = profile as { id?: unknown }
      if ((typeof id !== 'string' && typeof id !== 'number') || id === '') {
        return reject(new Error("the strategy's userProfile gave no id: a bare OAuth2Strategy has no userProfile of its own; subclass it, or use a strategy for your provider."))
      }
      // `_raw` is the JSON text again; `_json` keeps it parsed.
      const { _raw, ...rest } = profile as PassportProfile & { _raw?: unknown }
      resolve(rest)
    })
  })
}

/**
 * Passport's normalised profile as the user. The address: the primary verified entry of `emails`,
 * else the first verified one, else the primary (or first) one, unverified. `emailVerified` is true
 * only when the chosen entry says `verified: true`: what the strategy does not say is not a yes.
 * passport-google-oauth20 copies Google's `email_verified` into `verified`; passport-github2 says
 * `verified` only with `allRawEmails: true` (its default gives the primary address bare, verified
 * or not, so its address is not taken); strategies that give no flag are never taken.
 */
function passportUser(profile: PassportProfile): { id: string; name: string | null; email: string | null; emailVerified: boolean; image: string | null } {
  const emails = (Array.isArray(profile.emails) ? profile.emails : []).filter((entry) => typeof entry?.value === 'string' && entry.value.length > 0)
  const verified = emails.filter((entry) => entry.verified === true)
  const email =
    verified.find((entry) => entry.primary === true) ?? verified[0] ?? emails.find((entry) => entry.primary === true) ?? emails[0]
  return {
    id: String(profile.id),
    name: profile.displayName || profile.username || null,
    email: email?.value ?? null,
    emailVerified: email?.verified === true,
    image: Array.isArray(profile.photos) ? (profile.photos[0]?.value ?? null) : null,
  }
}

function stringParams(params: Record<string, unknown>): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null) result[key] = String(value)
  return result
}

function absolute(baseSite: string | undefined, url: string): string {
  return `${baseSite ?? ''}${url}`
}
