/**
 * Shared steps of the MCP suites: the MCP example's app (examples/mcp/app.ts) on SQLite, listening on
 * 127.0.0.1; a browser signed in to it as ada; the MCP SDK's client with an OAuth client provider that
 * hands the authorization URL to that browser, which signs in and allows (the user's part), and gives
 * the callback back to the SDK; an https server on 127.0.0.1 serving a client ID metadata document.
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Knex } from 'knex'
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/client'
import { mcpExampleApp } from '../../examples/mcp/app.js'
import type { AuthorizationServerOptions } from 'portcullis'
import { listenApp } from '../support/app-rig.js'
import { SECRET } from '../support/flow.js'
import { Browser } from '../support/browser.js'
import { selfSignedCertificate, trustingDispatcher } from '../support/tls.js'
import { authorize, oauth, pkce } from '../authorization-server/as-app.js'

export { Browser, authorize }

/**
 * A token by the code flow with openid-client, for `clientId` (public, PKCE S256), `scope` and
 * `resource`, the user allowing in `browser`: what an MCP client would get, asked for as a test wants.
 */
export async function tokenFor(app: McpApp, browser: Browser, { clientId, redirectUri, scope, resource }: { clientId: string; redirectUri: string; scope: string; resource: string }): Promise<string> {
  const config = await oauth.discovery(new URL(app.issuer), clientId, undefined, oauth.None(), { execute: [oauth.allowInsecureRequests] })
  const { verifier, challenge } = await pkce()
  const state = oauth.randomState()
  const url = oauth.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope, resource, code_challenge: challenge, code_challenge_method: 'S256', state })
  const back = await authorize(browser, url)
  const tokens = await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state }, { resource })
  return tokens.access_token
}

/** The example app, where it listens, and the URLs MCP clients know it by. */
export interface McpApp {
  server: Server
  origin: string
  mcpUrl: string
  issuer: string
  metadataUrl: string
  portcullis: Awaited<ReturnType<typeof mcpExampleApp>>['portcullis']
}

/** The example app on `knex`, with `authorizationServer` options beyond the example's. */
export async function startMcpApp(knex: Knex, authorizationServer: Partial<AuthorizationServerOptions> = {}): Promise<McpApp> {
  let handler: (req: never, res: never) => void = () => undefined
  const { server, origin } = await listenApp((req, res) => handler(req as never, res as never))
  const previous = process.env['AUTH_URL']
  const { app, portcullis } = await mcpExampleApp({ db: knex, authUrl: `${origin}/api/auth`, authorizationServer, secret: SECRET })
  if (previous === undefined) delete process.env['AUTH_URL']
  else process.env['AUTH_URL'] = previous
  handler = app as never
  return { server, origin, mcpUrl: `${origin}/mcp`, issuer: `${origin}/api/auth/oauth`, metadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`, portcullis }
}

/** A browser signed in to the example as `username` (its password is the demo's). */
export async function signedIn(app: McpApp, username = 'ada', password = username === 'ada' ? 'lovelace' : 'hopper'): Promise<Browser> {
  const browser = new Browser()
  const csrf = ((await (await browser.request(`${app.origin}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
  const response = await browser.request(`${app.origin}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: csrf, username, password }) })
  if (response.status !== 302) throw new Error(`signing in answered ${response.status}`)
  return browser
}

/**
 * The SDK's OAuth client provider of one MCP client, kept in memory: its registration (a client ID
 * metadata document's URL, a registered client, or one given), tokens and PKCE verifier. The
 * authorization URL the SDK sends the user to is kept for the test's browser.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  client: { client_id: string; client_secret?: string } | undefined
  saved: { access_token: string; refresh_token?: string; scope?: string } | undefined
  verifier = ''
  discovery: unknown
  authorizationUrl: URL | undefined
  readonly clientMetadataUrl: string | undefined
  constructor(
    readonly redirect: string,
    options: { clientMetadataUrl?: string; client?: { client_id: string } } = {},
  ) {
    this.clientMetadataUrl = options.clientMetadataUrl
    this.client = options.client
  }
  get redirectUrl() {
    return this.redirect
  }
  get clientMetadata() {
    return { client_name: 'Test Agent', redirect_uris: [this.redirect], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', application_type: 'native' } as never
  }
  clientInformation() {
    return this.client as never
  }
  saveClientInformation(information: { client_id: string }) {
    this.client = information
  }
  tokens() {
    return this.saved as never
  }
  saveTokens(tokens: { access_token: string; refresh_token?: string }) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined
    if (scope === 'all' || scope === 'client') this.client = undefined
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined
  }
  saveDiscoveryState(state: unknown) {
    this.discovery = state
  }
  discoveryState() {
    return this.discovery as never
  }
}

/** A transport to the app's MCP server for `provider`. */
export function transportOf(app: McpApp, provider: TestOAuthProvider): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(app.mcpUrl), { authProvider: provider })
}

/**
 * Runs `step` with the SDK: when it stops for the user (UnauthorizedError: the SDK sent the user to
 * the authorization URL), `browser` signs in and allows, the SDK redeems the code, and `step` runs again.
 * @returns What `step` returned, and whether the user was asked.
 */
export async function withUser<T>(provider: TestOAuthProvider, browser: Browser, transport: () => StreamableHTTPClientTransport, step: (transport: StreamableHTTPClientTransport) => Promise<T>): Promise<{ result: T; asked: boolean }> {
  let current = transport()
  try {
    return { result: await step(current), asked: false }
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || !provider.authorizationUrl) throw error
  }
  const back = await authorize(browser, provider.authorizationUrl)
  provider.authorizationUrl = undefined
  await current.finishAuth(back.searchParams)
  current = transport()
  return { result: await step(current), asked: true }
}

/** An MCP client connected to the app through `provider`, the user asked in `browser` when needed. */
export async function connected(app: McpApp, provider: TestOAuthProvider, browser: Browser): Promise<{ client: Client; transport: StreamableHTTPClientTransport; asked: boolean }> {
  const { result, asked } = await withUser(provider, browser, () => transportOf(app, provider), async (transport) => {
    const client = new Client({ name: 'test-agent', version: '1.0.0' })
    await client.connect(transport)
    return { client, transport }
  })
  return { ...result, asked }
}

/** The claims of a JWT access token (read, not verified: the server verified it). */
export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>
}

/** The client ID metadata document of a native MCP client `clientId` redirecting to `redirectUri`, with `changes`. */
export function clientDocument(clientId: string, redirectUri: string, changes: Record<string, unknown> = {}): Record<string, unknown> {
  return { client_id: clientId, client_name: 'Test Agent', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', application_type: 'native', ...changes }
}

/** An https server on 127.0.0.1 answering `answer(path)`; `fetch` trusts its certificate. */
export async function httpsServer(answer: (path: string) => { status: number; body?: unknown; headers?: Record<string, string> }): Promise<{ origin: string; requests: string[]; fetch: NonNullable<AuthorizationServerOptions['fetch']>; close(): Promise<void> }> {
  const { cert, key } = selfSignedCertificate()
  const requests: string[] = []
  const server: HttpsServer = createHttpsServer({ cert, key }, (req, res) => {
    requests.push(req.url ?? '')
    const { status, body, headers = {} } = answer(req.url ?? '/')
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body === undefined ? undefined : JSON.stringify(body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const dispatcher = trustingDispatcher(cert)
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    // oidc-provider's own dispatcher (its guard against private addresses) when it gives one; this server's trust otherwise.
    fetch: (url, init) => globalThis.fetch(url, { ...init, dispatcher: init.dispatcher ?? dispatcher } as RequestInit),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
