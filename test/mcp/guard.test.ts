/**
 * `mcpAuth()` in an app of its own (not the example): what a route behind it reads of the caller
 * (`req.auth` and `auth(req)` are the token's `McpAuth`, the SDK's `AuthInfo` fields included), and two
 * MCP servers in one app, whose tokens are good at their own path only.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { findDatabaseServer, migratedDatabase } from '../support/databases.js'
import { authorize, oauth, pkce, relyingParty, signedInBrowser, startServerApp, type ServerApp } from '../authorization-server/as-app.js'

const server = await findDatabaseServer('sqlite')
const REDIRECT = 'http://127.0.0.1:40123/callback'

describe('mcpAuth() in an app', () => {
  const db = migratedDatabase(server)
  afterAll(closeAll)
  let app: ServerApp
  beforeAll(async () => {
    app = await startServerApp(db.knex, {
      authorizationServer: {
        mcp: [{ path: '/mcp', scopes: ['tools'] }, { path: '/admin-mcp', scopes: ['admin'], name: 'Admin tools' }],
        clients: [{ client_id: 'agent', client_name: 'Agent', application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/callback'] }],
      },
    })
    app.app.use(app.mcpAuth())
    for (const path of ['/mcp', '/admin-mcp']) app.app.post(path, async (req, res) => void res.json({ reqAuth: (req as { auth?: unknown }).auth, viaAuth: await app.auth(req, res) }))
  })

  async function tokenFor(resource: string, scope: string): Promise<string> {
    const config = await relyingParty(app, 'agent')
    const { verifier, challenge } = await pkce()
    const url = oauth.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, resource, code_challenge: challenge, code_challenge_method: 'S256' })
    const back = await authorize(await signedInBrowser(app, 'ada@example.com'), url)
    return (await oauth.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier }, { resource })).access_token
  }

  it('gives the route the token\'s McpAuth, in req.auth and from auth(req)', async () => {
    const token = await tokenFor(`${app.origin}/mcp`, 'tools')
    const answer = await fetch(`${app.origin}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    expect(answer.status).toBe(200)
    const { reqAuth, viaAuth } = (await answer.json()) as { reqAuth: Record<string, unknown>; viaAuth: Record<string, unknown> }
    expect(reqAuth).toMatchObject({ type: 'bearer', client: { id: 'agent' }, clientId: 'agent', scopes: ['tools'], token, resource: `${app.origin}/mcp`, resourceMetadataUrl: `${app.origin}/.well-known/oauth-protected-resource/mcp`, user: { email: 'ada@example.com' } })
    expect(typeof reqAuth['expiresAt']).toBe('number')
    expect(viaAuth).toEqual(reqAuth)
  })

  it('types a guarded request for the SDK with mcpRequest(), and refuses one the guard did not pass', async () => {
    app.app.post('/not-mcp', (req, res) => {
      try {
        app.mcpRequest(req)
        res.json({ typed: true })
      } catch (error) {
        res.status(500).json({ error: (error as Error).message })
      }
    })
    app.app.post('/mcp/typed', (req, res) => void res.json({ clientId: app.mcpRequest(req).auth.clientId }))
    const token = await tokenFor(`${app.origin}/mcp`, 'tools')
    const typed = await fetch(`${app.origin}/mcp/typed`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    expect(await typed.json()).toEqual({ clientId: 'agent' })
    // Another path: the guard did not run there.
    const refused = await fetch(`${app.origin}/not-mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    expect(((await refused.json()) as { error: string }).error).toContain('mcpRequest(): this request did not pass mcpAuth()')
  })

  it('keeps two MCP servers apart: each has its metadata, and a token of one is refused by the other', async () => {
    const admin = (await (await fetch(`${app.origin}/.well-known/oauth-protected-resource/admin-mcp`)).json()) as Record<string, unknown>
    expect(admin).toMatchObject({ resource: `${app.origin}/admin-mcp`, scopes_supported: ['admin'], resource_name: 'Admin tools' })
    const token = await tokenFor(`${app.origin}/mcp`, 'tools')
    const refused = await fetch(`${app.origin}/admin-mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${app.origin}/.well-known/oauth-protected-resource/admin-mcp"`)
    // Nor does a token for one carry a scope of the other, asked for or not.
    const asked = await tokenFor(`${app.origin}/mcp`, 'tools admin')
    expect(JSON.parse(Buffer.from(asked.split('.')[1]!, 'base64url').toString())).toMatchObject({ aud: `${app.origin}/mcp`, scope: 'tools' })
  })
})
