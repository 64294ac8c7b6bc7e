/**
 * What an attacker tries against an MCP server on Express and its authorization server, each refused:
 * a token for another resource at the MCP server, the MCP server's token replayed at the app's own
 * API, a client ID metadata document on a private address (by IP and by name) or behind a redirect,
 * one whose redirect URIs, client_id or claims do not hold, a registration while it is off and one
 * that claims too much while it is on, an authorization without PKCE, every spelling of the MCP
 * path a router could take for it, HEAD, and a session cookie instead of a token.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, type TestDatabase } from '../support/databases.js'
import { rawRequest } from '../support/raw-http.js'
import { clientDocument, httpsServer, signedIn, startMcpApp, tokenFor, type McpApp } from './mcp-app.js'

const server = await findDatabaseServer('sqlite')
const REDIRECT = 'http://127.0.0.1:43117/callback'
const OTHER_API = 'https://other.example/'

/** A client ID metadata document for `clientId`, with `changes`. */
const documentOf = (clientId: string, changes: Record<string, unknown> = {}) => clientDocument(clientId, REDIRECT, changes)

describe('attacks on an MCP server and its authorization server', () => {
  let db: TestDatabase
  let documents: Awaited<ReturnType<typeof httpsServer>>
  /** Reaches documents on this machine (development), registration on, another API besides the MCP server. */
  let open: McpApp
  /** The defaults: no private address, registration off. */
  let strict: McpApp
  beforeAll(async () => {
    db = await server.createDatabase()
    documents = await httpsServer((path) => {
      const id = `${documents.origin}${path}`
      if (path === '/agent.json') return { status: 200, body: documentOf(id) }
      if (path === '/moved.json') return { status: 302, headers: { location: '/agent.json' } }
      if (path === '/mismatch.json') return { status: 200, body: documentOf(`${documents.origin}/agent.json`) }
      if (path === '/first-party.json') return { status: 200, body: documentOf(id, { first_party: true }) }
      if (path === '/machine.json') return { status: 200, body: documentOf(id, { grant_types: ['client_credentials'], response_types: [], redirect_uris: [] }) }
      return { status: 404 }
    })
    open = await startMcpApp(db.knex, { allowPrivateAddressesInDevelopment: true, fetch: documents.fetch, registration: true, resources: { [OTHER_API]: { scopes: ['other:read'] } } })
    strict = await startMcpApp(db.knex, { fetch: documents.fetch })
  })
  afterAll(async () => {
    await closeAll()
    await documents.close()
    await db.destroy()
  })

  /** The authorization server's answer to an authorization request with `params` (PKCE S256 unless given). */
  async function authorization(app: McpApp, params: Record<string, string>): Promise<Response> {
    const browser = await signedIn(app)
    const query = new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT, scope: 'notes:read', resource: app.mcpUrl, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 'abc', ...params })
    return browser.request(`${app.issuer}/auth?${query}`)
  }

  it('refuses at the MCP server a token for another API, naming where its metadata is', async () => {
    const token = await tokenFor(open, await signedIn(open), { clientId: `${documents.origin}/agent.json`, redirectUri: REDIRECT, scope: 'other:read', resource: OTHER_API })
    const refused = await fetch(open.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer error="invalid_token", error_description="The access token is for another API.", resource_metadata="${open.metadataUrl}"`)
  })

  it('refuses the MCP server\'s token at the app\'s own API (no token is passed on)', async () => {
    const token = await tokenFor(open, await signedIn(open), { clientId: `${documents.origin}/agent.json`, redirectUri: REDIRECT, scope: 'notes:read', resource: open.mcpUrl })
    const accepted = await fetch(open.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) })
    expect(accepted.status).toBe(200)
    const replayed = await fetch(`${open.origin}/api/notes`, { headers: { authorization: `Bearer ${token}` } })
    expect(replayed.status).toBe(401)
  })

  it('answers a token without the scope every request needs with 403 insufficient_scope and the scope to ask for', async () => {
    const token = await tokenFor(open, await signedIn(open), { clientId: `${documents.origin}/agent.json`, redirectUri: REDIRECT, scope: 'notes:write', resource: open.mcpUrl })
    const refused = await fetch(open.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })
    expect(refused.status).toBe(403)
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="notes:read", resource_metadata="${open.metadataUrl}"`)
  })

  it('never fetches a metadata document from a private address, by IP or by name, unless in development', async () => {
    documents.requests.length = 0
    for (const host of ['127.0.0.1', 'localhost']) {
      const port = new URL(documents.origin).port
      const refused = await authorization(strict, { client_id: `https://${host}:${port}/agent.json` })
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain('invalid_client')
    }
    // oidc-provider's guard ends the connection before a request is sent.
    expect(documents.requests).toEqual([])
  })

  it('follows no redirect of a metadata document', async () => {
    documents.requests.length = 0
    const refused = await authorization(open, { client_id: `${documents.origin}/moved.json` })
    expect(refused.status).toBe(400)
    expect(documents.requests.length).toBeGreaterThan(0)
    expect(new Set(documents.requests)).toEqual(new Set(['/moved.json']))
  })

  it('refuses a redirect URI the document does not list, a document for another client_id, first_party and client credentials', async () => {
    const evil = await authorization(open, { client_id: `${documents.origin}/agent.json`, redirect_uri: 'https://evil.example/callback' })
    expect(evil.status).toBe(400)
    expect(evil.headers.get('location')).toBeNull()
    expect(await evil.text()).toContain('redirect_uri')
    for (const path of ['/mismatch.json', '/first-party.json', '/machine.json']) {
      const refused = await authorization(open, { client_id: `${documents.origin}${path}` })
      expect(refused.status).toBe(400)
      expect(refused.headers.get('location')).toBeNull()
    }
  })

  it('refuses an authorization request without PKCE, back at the client', async () => {
    const refused = await authorization(open, { client_id: `${documents.origin}/agent.json`, code_challenge: '', code_challenge_method: '' })
    const location = new URL(refused.headers.get('location')!)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('error')).toBe('invalid_request')
    expect(location.searchParams.get('code')).toBeNull()
  })

  it('has no registration endpoint while registration is off', async () => {
    const metadata = (await (await fetch(`${strict.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>
    expect(metadata['registration_endpoint']).toBeUndefined()
    const refused = await fetch(`${strict.issuer}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT], application_type: 'native', token_endpoint_auth_method: 'none' }) })
    expect(refused.status).toBe(404)
  })

  it('refuses a registration without application_type, one that claims first_party, and one for client credentials', async () => {
    const register = (metadata: Record<string, unknown>) => fetch(`${open.issuer}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata }) })
    for (const [metadata, reason] of [
      [{}, 'application_type is required'],
      [{ application_type: 'native', first_party: true }, 'first_party'],
      [{ application_type: 'web', redirect_uris: [], response_types: [], grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_basic' }, 'client_credentials'],
    ] as const) {
      const refused = await register(metadata)
      expect(refused.status).toBe(400)
      const body = (await refused.json()) as { error: string; error_description: string }
      expect(body.error).toBe('invalid_client_metadata')
      expect(body.error_description).toContain(reason)
    }
    const registered = await register({ application_type: 'native', client_name: 'Agent' })
    expect(registered.status).toBe(201)
  })

  it('limits registrations from one address: 20 an hour, then 429 with Retry-After', async () => {
    const fresh = await startMcpApp(db.knex, { registration: true })
    const register = () => fetch(`${fresh.issuer}/reg`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', application_type: 'native' }) })
    for (let count = 0; count < 20; count++) expect((await register()).status).toBe(201)
    const limited = await register()
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(3000)
  })

  it('guards every spelling of the MCP path a router could take for it, HEAD and a bare OPTIONS included', async () => {
    for (const [method, path] of [['POST', '/MCP'], ['POST', '/mcp/'], ['POST', '/%6dcp'], ['POST', '//mcp'], ['POST', '/mcp/anything'], ['POST', '/mcp?x=1'], ['HEAD', '/mcp'], ['GET', '/Mcp'], ['OPTIONS', '/mcp']] as const) {
      const answer = await rawRequest(open.server, path, { method })
      expect([method, path, answer.status]).toEqual([method, path, 401])
      expect(answer.headers['www-authenticate']).toContain(`resource_metadata="${open.metadataUrl}"`)
    }
    // A CORS preflight carries no credential by design: it goes on to the app (which has no CORS here).
    const preflight = await rawRequest(open.server, '/mcp', { method: 'OPTIONS', headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' } })
    expect(preflight.status).not.toBe(401)
  })

  it('takes no session cookie for a token: a signed-in browser calling /mcp gets a 401', async () => {
    const browser = await signedIn(open)
    const answer = await browser.request(open.mcpUrl, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), headers: { 'content-type': 'application/json' } })
    expect(answer.status).toBe(401)
  })
})
