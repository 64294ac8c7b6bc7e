/**
 * The authorization server itself: one oidc-provider instance per Portcullis instance, built on the
 * first request to its endpoints (nothing of oidc-provider loads before that) from the resolved
 * config, and kept. This file is its configuration: what is on, where its storage, keys, accounts
 * and pages come from. The protocol is oidc-provider's; nothing here speaks OAuth itself.
 *
 * On: authorization code with PKCE (S256 only, required of every client), refresh tokens rotated on
 * each use (a replayed one ends its grant), the device authorization grant, client credentials,
 * revocation, introspection, resource indicators with JWT access tokens, DPoP (for clients that
 * send it), RFC 9207's `iss`, userinfo, discovery, RP-initiated and back-channel logout.
 * Opt-in: client ID metadata documents and dynamic registration (dynamic-clients.ts: MCP's clients).
 * Off: the implicit and hybrid flows (OAuth 2.1 drops them), registration management (RFC 7592),
 * PAR/JAR/CIBA/mTLS (no caller asks for them yet; each is one option of oidc-provider's to turn on).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ResolvedConfig } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { sessionRequestFor } from '../../http/request.js'
import { appendCookies } from '../../http/respond.js'
import { endSession, signedInUserId } from '../../session/strategy.js'
import { authorizationServerOf, issuerOf, mcpResourceOf, OIDC_SCOPES, ownResourceOf, recordsOf, type ResolvedAuthorizationServer } from './config.js'
import { dynamicClientFeatures, dynamicClientMetadataCheck } from './dynamic-clients.js'
import { outgoingFetch } from './outgoing.js'
import { forgetGrant } from './grants.js'
import { serverKeys, type ServerKeys } from './keys.js'
import { renderDeviceDonePage, renderLoggedOutPage, renderLogoutPage, renderProtocolErrorPage, renderUserCodeConfirmPage, renderUserCodePage } from './pages/protocol.js'
import { modelStores } from './store.js'
import type { OAuthRecordStore } from './types.js'

type OidcProvider = import('oidc-provider').default
type KoaContext = import('oidc-provider').KoaContextWithOIDC

/** The running server of one Portcullis instance. */
export interface AuthorizationServer {
  readonly provider: OidcProvider
  /** `https://app.example.com/api/auth/oauth`. */
  readonly issuer: string
  /** This app's own API's resource indicator: its origin, `https://app.example.com/`. */
  readonly ownResource: string
  readonly keys: ServerKeys
  /** The Node handler of its endpoints (Koa's callback). */
  readonly callback: (req: IncomingMessage, res: ServerResponse) => Promise<void>
}

const servers = new WeakMap<ResolvedConfig, Promise<AuthorizationServer>>()

/** The server of `config`, built on the first call. */
export function serverOf(config: ResolvedConfig): Promise<AuthorizationServer> {
  let server = servers.get(config)
  if (!server) {
    server = buildServer(config)
    servers.set(config, server)
    // A failed start (a client's metadata oidc-provider refuses) is tried again on the next request, and says why each time.
    server.catch(() => servers.delete(config))
  }
  return server
}

// Long: oidc-provider's configuration, one option after another, each with why.
async function buildServer(config: ResolvedConfig): Promise<AuthorizationServer> {
  const { default: Provider, errors, interactionPolicy } = await importProvider()
  const options = authorizationServerOf(config)!
  const records = recordsOf(config)
  const users = config.adapter!
  const issuer = issuerOf(config)
  const ownResource = ownResourceOf(config)
  const keys = serverKeys(config.secrets)
  const secure = config.url!.protocol === 'https:'
  const theme = config.theme
  const mcpResources = Object.fromEntries(options.mcp.map((server) => [mcpResourceOf(config, server), { scopes: server.scopes, accessTokenTtl: server.accessTokenTtl }]))
  const resources = { [ownResource]: { scopes: options.scopes, accessTokenTtl: options.accessTokenTtl }, ...options.resources, ...mcpResources }
  const apiScopes = [...new Set(Object.values(resources).flatMap((resource) => resource.scopes))]

  const policy = interactionPolicy.base()
  // oidc-provider keeps a session of its own (its cookie): it stands only while the same user is
  // signed in to the site. Signed out of Portcullis, or signed in as someone else, the next
  // authorization request asks for a sign-in again (the interaction page sends the browser to the
  // site's sign-in page).
  policy.get('login')!.checks.unshift(
    new interactionPolicy.Check('portcullis_session', 'the user is not signed in to the site as the provider session says', async (ctx: KoaContext) => {
      const userId = await signedInUserId(sessionRequestFor(ctx.req, config))
      return userId === null || userId !== ctx.oidc.session?.accountId
    }),
  )

  const declared = new Set(options.clients.map((client) => client.client_id))
  const provider = new Provider(issuer, {
    adapter: modelStores(records, (grantId) => forgetGrant(config, grantId), () => new errors.InvalidGrant('grant request is invalid')) as never,
    clients: options.clients.map((client) => ({ ...client })) as never,
    jwks: { keys: keys.signing.map((key) => ({ ...key.jwk })) as never },
    cookies: {
      keys: [...keys.cookieKeys],
      names: { session: 'portcullis.oauth-session', interaction: 'portcullis.oauth-interaction', resume: 'portcullis.oauth-resume' },
      long: { signed: true, httpOnly: true, sameSite: 'lax', secure },
      short: { signed: true, httpOnly: true, sameSite: 'lax', secure },
    },
    async findAccount(_ctx: KoaContext, sub: string) {
      const user = await users.getUser!(sub)
      if (!user) return undefined
      return {
        accountId: user.id,
        async claims() {
          return { sub: user.id, email: user.email ?? undefined, email_verified: user.email ? Boolean(user.emailVerified) : undefined, name: user.name ?? undefined, picture: user.image ?? undefined }
        },
      }
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    scopes: [...OIDC_SCOPES, ...apiScopes],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], id_token_signed_response_alg: 'ES256', token_endpoint_auth_method: 'client_secret_basic' },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'], userinfoSigningAlgValues: ['ES256'], introspectionSigningAlgValues: ['ES256'] } as never,
    extraClientMetadata: {
      properties: ['first_party'],
      validator(ctx: KoaContext | undefined, key: string, value: unknown, metadata: Record<string, unknown>) {
        if (key === 'first_party' && value !== undefined && typeof value !== 'boolean') throw new errors.InvalidClientMetadata('first_party must be a boolean')
        dynamicClientMetadataCheck(ctx, key, value, metadata, declared, errors)
      },
    },
    rotateRefreshToken: true,
    // A client that may use refresh tokens gets one with its code, `offline_access` or not: OpenID
    // Connect honours that scope only with prompt=consent (a consent page every time), and an OAuth
    // 2.1 app (a CLI, a phone) asks for no OpenID scope at all. Each is rotated on use, and ends
    // with the grant.
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) => token.resourceServer?.accessTokenTTL ?? options.accessTokenTtl,
      ClientCredentials: (_ctx: unknown, token: { resourceServer?: { accessTokenTTL?: number } }) => token.resourceServer?.accessTokenTTL ?? options.accessTokenTtl,
      AuthorizationCode: 60,
      DeviceCode: 600,
      IdToken: 3600,
      Interaction: 3600,
      RefreshToken: options.refreshTokenTtl,
      Grant: options.refreshTokenTtl,
      Session: options.refreshTokenTtl,
    },
    interactions: {
      url: (_ctx: KoaContext, interaction: { uid: string }) => `${config.basePath}/oauth-interaction/${interaction.uid}`,
      policy,
    },
    // A grant is per user and client, whatever browser the request came from: the consent given once
    // is found again (the provider's own session only remembers it in one browser).
    async loadExistingGrant(ctx: KoaContext) {
      const accountId = ctx.oidc.session?.accountId
      const clientId = ctx.oidc.client?.clientId
      if (!accountId || !clientId) return undefined
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(clientId) ?? (await latestGrantId(records, accountId, clientId))
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined
    },
    fetch: outgoingFetch(options),
    features: {
      ...dynamicClientFeatures(options),
      devInteractions: { enabled: false },
      deviceFlow: {
        enabled: options.deviceFlow,
        async userCodeInputSource(ctx: KoaContext, form: string, _out: unknown, error?: { name?: string; userCode?: unknown }) {
          const failed = !error ? undefined : error.userCode || error.name === 'NoCodeError' ? 'That code is not right: check it and try again.' : error.name === 'AbortedError' ? 'The sign-in was stopped.' : 'The code could not be checked: try again.'
          sendPage(ctx, renderUserCodePage(theme, form, failed))
        },
        async userCodeConfirmSource(ctx: KoaContext, form: string, client: { clientName?: string; clientId: string }, _info: unknown, userCode: string) {
          sendPage(ctx, renderUserCodeConfirmPage(theme, form, client.clientName ?? client.clientId, userCode))
        },
        async successSource(ctx: KoaContext) {
          sendPage(ctx, renderDeviceDonePage(theme, ctx.oidc.client?.clientName ?? ctx.oidc.client?.clientId ?? 'The device'))
        },
      },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      dPoP: { enabled: true },
      backchannelLogout: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx: KoaContext, form: string) {
          sendPage(ctx, renderLogoutPage(theme, form, config.url!.host))
        },
        async postLogoutSuccessSource(ctx: KoaContext) {
          sendPage(ctx, renderLoggedOutPage(theme))
        },
      },
      resourceIndicators: {
        enabled: true,
        // A request for API scopes without a `resource` is for this app's own API; one for OpenID
        // Connect's scopes alone gets a token for the userinfo endpoint.
        async defaultResource(ctx: KoaContext) {
          const asked = String(ctx.oidc.params?.scope ?? '').split(' ')
          return asked.some((scope) => options.scopes.includes(scope)) ? ownResource : undefined
        },
        useGrantedResource: () => true,
        async getResourceServerInfo(_ctx: unknown, indicator: string) {
          const resource = resources[indicator]
          if (!resource) throw new errors.InvalidTarget(`${indicator} is no API this server issues tokens for`)
          return { scope: resource.scopes.join(' '), audience: indicator, accessTokenTTL: resource.accessTokenTtl, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }
        },
      },
    },
    // Which grant an access token belongs to, so that the bearer read can refuse it once the grant ends.
    async extraTokenClaims(_ctx: unknown, token: { grantId?: string }) {
      return token.grantId ? { gid: token.grantId } : undefined
    },
    async renderError(ctx: KoaContext, out: { error: string; error_description?: string }) {
      sendPage(ctx, renderProtocolErrorPage(theme, out.error, out.error_description), 400)
    },
  } as never)
  // Behind the app's proxy the request's host and scheme are the issuer's (mount.ts sets them).
  provider.proxy = true
  // Signing out at the provider (RP-initiated logout, the user said yes) signs out of the site too:
  // the site's session is the provider's sign-in, and would otherwise sign the next request in again.
  provider.use(async (ctx, next) => {
    await next()
    const { oidc } = ctx as KoaContext
    if (oidc?.route === 'end_session_confirm' && oidc.params?.['logout'] && ctx.status === 303) appendCookies(ctx.res, await endSession(sessionRequestFor(ctx.req, config)))
  })
  provider.on('server_error', (_ctx: unknown, error: Error) => config.logger.error('AuthorizationServerError', `oidc-provider: ${error.name}: ${error.message}`))
  // Koa's own errors (a client that hung up): logged like the rest, never on the console.
  ;(provider as unknown as NodeJS.EventEmitter).on('error', (error: Error) => config.logger.error('AuthorizationServerError', `oidc-provider: ${error.name}: ${error.message}`))
  return Object.freeze({ provider, issuer, ownResource, keys, callback: provider.callback() as unknown as AuthorizationServer['callback'] })
}

/** oidc-provider, an optional peer dependency: when it is not installed, an error that says so. */
async function importProvider(): Promise<typeof import('oidc-provider')> {
  try {
    return await import('oidc-provider')
  } catch (error) {
    if ((error as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND' && (error as { code?: string }).code !== 'MODULE_NOT_FOUND') throw error
    throw new InvalidConfigurationError('authorizationServer runs oidc-provider, which is not installed: npm install oidc-provider (a peer dependency of Portcullis, needed only with this option).')
  }
}

/** A themed page as oidc-provider's answer, with the headers of the site's other pages. */
function sendPage(ctx: KoaContext, page: string, status = 200): void {
  ctx.status = status
  ctx.type = 'html'
  ctx.set('Cache-Control', 'no-store')
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: http: data:; frame-ancestors 'none'; base-uri 'none'")
  ctx.set('X-Frame-Options', 'DENY')
  ctx.set('Referrer-Policy', 'same-origin')
  ctx.body = page
}

/** The user's newest grant for the client, if any. */
async function latestGrantId(records: OAuthRecordStore, accountId: string, clientId: string): Promise<string | undefined> {
  const grants = await records.listOAuthRecords(accountId, 'Grant')
  let newest: { id: string; iat: number } | undefined
  for (const grant of grants) {
    const iat = Number(grant.payload['iat'] ?? 0)
    if (grant.payload['clientId'] === clientId && (!newest || iat > newest.iat)) newest = { id: grant.id, iat }
  }
  return newest?.id
}

export type { ResolvedAuthorizationServer }
