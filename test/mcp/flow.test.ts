/**
 * The MCP example (examples/mcp) with the MCP TypeScript SDK's own client, end to end on SQLite: it
 * finds the authorization server from the first 401, becomes a client by its client ID metadata
 * document (served here over https) or by registration when that is on, signs the user in with PKCE,
 * calls a tool, refreshes its token, steps up to a wider scope when a tool asks for one, and signs the
 * user in again once the user has removed its access.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Client } from '@modelcontextprotocol/client'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, type TestDatabase } from '../support/databases.js'
import { UnauthorizedError } from '@modelcontextprotocol/client'
import { claimsOf, clientDocument, connected, httpsServer, signedIn, startMcpApp, TestOAuthProvider, type McpApp } from './mcp-app.js'

const server = await findDatabaseServer('sqlite')
const REDIRECT = 'http://127.0.0.1:43117/callback'

/** The text of a tool's answer. */
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as { content: { text: string }[]; isError?: boolean }
  if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`)
  return result.content[0]!.text
}

describe('an MCP server on Express, with the MCP SDK client', () => {
  let db: TestDatabase
  let documents: Awaited<ReturnType<typeof httpsServer>>
  let app: McpApp
  let clientId: string
  beforeAll(async () => {
    db = await server.createDatabase()
    documents = await httpsServer((path) => (path === '/agent.json' ? { status: 200, body: clientDocument(clientId, REDIRECT, { client_uri: 'https://agent.example/' }), headers: { 'cache-control': 'max-age=60' } } : { status: 404 }))
    clientId = `${documents.origin}/agent.json`
    // The document is on this machine's loopback address: let the server reach it, as in development.
    app = await startMcpApp(db.knex, { allowPrivateAddressesInDevelopment: true, fetch: documents.fetch })
  })
  afterAll(async () => {
    await closeAll()
    await documents.close()
    await db.destroy()
  })

  it('answers an unauthenticated request with the way to its metadata, which leads to the authorization server', async () => {
    const refused = await fetch(app.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${app.metadataUrl}", scope="notes:read"`)
    expect(refused.headers.get('access-control-expose-headers')).toBe('WWW-Authenticate')
    const resourceResponse = await fetch(app.metadataUrl, { headers: { origin: 'https://agent.example' } })
    expect(resourceResponse.headers.get('access-control-allow-origin')).toBe('*')
    const resource = (await resourceResponse.json()) as Record<string, unknown>
    expect(resource).toEqual({ resource: app.mcpUrl, authorization_servers: [app.issuer], scopes_supported: ['notes:read', 'notes:write'], bearer_methods_supported: ['header'], resource_name: 'Acme notes' })
    // RFC 8414's address at the site's root, which MCP clients try first.
    const metadataResponse = await fetch(`${app.origin}/.well-known/oauth-authorization-server/api/auth/oauth`, { headers: { origin: 'https://agent.example' } })
    // oidc-provider answers any origin with that origin.
    expect(metadataResponse.headers.get('access-control-allow-origin')).toBe('https://agent.example')
    const metadata = (await metadataResponse.json()) as Record<string, unknown>
    expect(metadata).toMatchObject({ issuer: app.issuer, code_challenge_methods_supported: ['S256'], client_id_metadata_document_supported: true, authorization_response_iss_parameter_supported: true })
    expect(metadata['registration_endpoint']).toBeUndefined()
  })

  it('signs the user in for a client described by its metadata document, and the tool acts for them', async () => {
    const browser = await signedIn(app)
    const provider = new TestOAuthProvider(REDIRECT, { clientMetadataUrl: clientId })
    const { client, asked } = await connected(app, provider, browser)
    expect(asked).toBe(true)
    expect(provider.client?.client_id).toBe(clientId)
    expect(await call(client, 'list_notes')).toBe('[]')
    // The token is for the MCP server alone (RFC 8707), with the scope the first 401 asked for.
    expect(claimsOf(provider.saved!.access_token)).toMatchObject({ aud: app.mcpUrl, scope: 'notes:read', client_id: clientId })
    await client.close()
  })

  it('refreshes a refused access token without the user', async () => {
    const browser = await signedIn(app)
    const provider = new TestOAuthProvider(REDIRECT, { clientMetadataUrl: clientId })
    const { client } = await connected(app, provider, browser)
    const first = provider.saved!
    // The server refuses the token (as it would an expired one): the SDK redeems its refresh token and tries again.
    provider.saved = { ...first, access_token: `${first.access_token.slice(0, -8)}AAAAAAAA` }
    expect(await call(client, 'list_notes')).toBe('[]')
    expect(provider.authorizationUrl).toBeUndefined()
    expect(provider.saved.refresh_token).not.toBe(first.refresh_token)
    expect(claimsOf(provider.saved.access_token)).toMatchObject({ aud: app.mcpUrl, scope: 'notes:read' })
    await client.close()
  })

  it('steps up to a wider scope when a tool needs one: the user is asked for that scope alone', async () => {
    const browser = await signedIn(app)
    const provider = new TestOAuthProvider(REDIRECT, { clientMetadataUrl: clientId })
    const { client, transport } = await connected(app, provider, browser)
    // add_note needs notes:write: the server answers 403 insufficient_scope, the SDK asks for more.
    await expect(call(client, 'add_note', { text: 'buy milk' })).rejects.toThrow(UnauthorizedError)
    const consent = await browser.follow(await browser.request(String(provider.authorizationUrl)))
    const page = await consent.clone().text()
    // The client as its document describes it, what vouches for it, the new scope alone on the MCP server, where the browser goes next.
    expect(page).toContain('<h1>Test Agent wants to use your account</h1>')
    expect(page).toContain(`It is described by <code>${clientId}</code>`)
    expect(page).toContain(`<strong>${new URL(clientId).host}</strong> is who vouches for it`)
    expect(page).toContain('href="https://agent.example/"')
    expect(page).toContain('<li>Use <code>notes:write</code> on Acme notes</li>')
    expect(page).not.toContain('<code>notes:read</code>')
    expect(page).toContain('You allowed it before: notes:read')
    expect(page).toContain('you go back to <strong>an app on this device</strong>')
    const form = await browser.formOf(consent)
    form.body.set('decision', 'allow')
    const back = await browser.follow(await browser.navigate(form), new URL(consent.url).origin)
    await transport.finishAuth(new URL(back.headers.get('location')!).searchParams)
    await client.close()
    const wider = await connected(app, provider, browser)
    expect(wider.asked).toBe(false)
    expect(await call(wider.client, 'add_note', { text: 'buy milk' })).toBe('Added. You have 1 notes.')
    expect(claimsOf(provider.saved!.access_token)).toMatchObject({ aud: app.mcpUrl, scope: 'notes:read notes:write' })
    await wider.client.close()
  })

  it('asks the user again once they removed its access', async () => {
    const browser = await signedIn(app)
    const provider = new TestOAuthProvider(REDIRECT, { clientMetadataUrl: clientId })
    const { client } = await connected(app, provider, browser)
    const apps = await browser.request(`${app.origin}/api/auth/oauth-apps`)
    const removal = await browser.formOf(apps)
    expect(removal.body.get('clientId')).toBe(clientId)
    expect((await browser.navigate(removal)).status).toBe(302)
    // Its token and its refresh token stopped working: the SDK sends the user to the authorization server again.
    await expect(call(client, 'list_notes')).rejects.toThrow(UnauthorizedError)
    expect(provider.authorizationUrl).toBeDefined()
    await client.close()
  })

  // Last: after the tests above, each of which had the document read for its authorizations.
  it('fetched the metadata document once for all of them, as its Cache-Control (max-age=60) allows', () => {
    expect(documents.requests.filter((path) => path === '/agent.json')).toEqual(['/agent.json'])
  })
})

describe('an MCP server with registration on (RFC 7591)', () => {
  let db: TestDatabase
  let app: McpApp
  beforeAll(async () => {
    db = await server.createDatabase()
    app = await startMcpApp(db.knex, { registration: true, clientIdMetadataDocuments: false })
  })
  afterAll(async () => {
    await closeAll()
    await db.destroy()
  })

  it('lets a client without a metadata document register, sign the user in and call a tool', async () => {
    const metadata = (await (await fetch(`${app.origin}/.well-known/oauth-authorization-server/api/auth/oauth`)).json()) as Record<string, unknown>
    expect(metadata['registration_endpoint']).toBe(`${app.issuer}/reg`)
    const browser = await signedIn(app)
    const provider = new TestOAuthProvider(REDIRECT)
    const { client, asked } = await connected(app, provider, browser)
    expect(asked).toBe(true)
    expect(provider.client?.client_id).toMatch(/^[\w-]{20,}$/)
    expect(await call(client, 'list_notes')).toBe('[]')
    await client.close()
  })
})
