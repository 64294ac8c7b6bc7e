/**
 * The MCP example's app (server.ts runs it; the tests run it in their own process): an Express app
 * whose users sign in with a username and password, with an MCP server at `/mcp` whose tools read and
 * write the signed-in user's notes. MCP clients (an AI agent, the MCP Inspector, the SDK's client)
 * find everything from the first 401: the protected resource metadata, this app's authorization
 * server, and how to become its client (a client ID metadata document, or registration when on).
 *
 * - `list_notes` needs `notes:read`, which every request to `/mcp` needs (`mcpAuth({ scopes })`) and
 *   which the first sign-in asks for;
 * - `add_note` needs `notes:write` too: a token without it gets a 403 that asks for it, and the
 *   client asks the user again for the wider scope (step-up).
 */
import express from 'express'
import type { Knex } from 'knex'
import { McpServer, requireScopes as toolNeeds } from '@modelcontextprotocol/server'
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node'
import * as z from 'zod'
import Portcullis, { type AuthorizationServerOptions, type McpAuth } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { demoUsers, verifyDemoUser } from '../demo-users.js'

/** What the app is built with. */
export interface McpExampleOptions {
  db: Knex
  /** AUTH_URL: `http://localhost:3000/api/auth`. The MCP server's resource is its origin and `/mcp`. */
  authUrl: string
  /** The authorization server's options beyond the example's (registration, private addresses in development). */
  authorizationServer?: Partial<AuthorizationServerOptions>
  /** AUTH_SECRET; without it Portcullis keeps a development secret in .portcullis/dev-secret. */
  secret?: string | undefined
}

/** The example's Express app, its database migrated and its demo users created. */
export async function mcpExampleApp({ db, authUrl, authorizationServer = {}, secret }: McpExampleOptions) {
  await db.migrate.latest({ migrationSource: migrationSource() })
  const adapter = KnexAdapter(db)
  for (const user of demoUsers) if (!(await adapter.getUserByEmail(user.email))) await adapter.createUser({ name: user.name, email: user.email, emailVerified: new Date() })

  // Every token names the issuer, so it is fixed by AUTH_URL, read once here.
  process.env.AUTH_URL = authUrl
  const portcullis = Portcullis({
    ...(secret ? { secret } : {}),
    adapter,
    providers: [
      Credentials({
        name: 'username and password',
        credentials: { username: { label: 'Username', type: 'text', placeholder: 'ada', required: true }, password: { label: 'Password', type: 'password', required: true } },
        authorize: async ({ username, password }) => {
          const user = typeof username === 'string' && typeof password === 'string' ? await verifyDemoUser(username, password) : null
          return user ? adapter.getUserByEmail(user.email) : null
        },
      }),
    ],
    authorizationServer: {
      // The MCP server: its tokens are for http://localhost:3000/mcp and nothing else.
      mcp: { path: '/mcp', name: 'Acme notes', scopes: ['notes:read', 'notes:write'] },
      // MCP clients identify themselves by the URL of a JSON document that describes them (fetched from the public internet only).
      clientIdMetadataDocuments: true,
      ...authorizationServer,
    },
  })
  const { handlers, auth, mcpAuth, mcpRequest } = portcullis

  const notes = new Map<string, string[]>()
  /** One MCP server per request (stateless): its tools act for the user the token was issued for. */
  function notesServer(): McpServer {
    const server = new McpServer({ name: 'acme-notes', version: '1.0.0' })
    server.registerTool('list_notes', { description: 'Lists your notes.' }, async (ctx) => {
      const caller = ctx.http?.authInfo as McpAuth | undefined
      return { content: [{ type: 'text', text: JSON.stringify(notes.get(caller?.user?.id ?? '') ?? []) }] }
    })
    server.registerTool('add_note', { description: 'Adds a note.', inputSchema: z.object({ text: z.string().min(1).max(500) }), scopeChallenge: toolNeeds('notes:write') }, async ({ text }, ctx) => {
      const caller = ctx.http?.authInfo as McpAuth | undefined
      const userId = caller?.user?.id
      if (!userId) return { isError: true, content: [{ type: 'text', text: 'This tool acts for a user.' }] }
      notes.set(userId, [...(notes.get(userId) ?? []), text])
      return { content: [{ type: 'text', text: `Added. You have ${notes.get(userId)!.length} notes.` }] }
    })
    return server
  }

  const app = express()
  app.use('/api/auth', handlers)
  // The metadata MCP clients read (/.well-known/oauth-protected-resource/mcp and the authorization
  // server's at /.well-known/oauth-authorization-server/api/auth/oauth), and the guard of /mcp.
  app.use(mcpAuth({ scopes: ['notes:read'] }))
  app.post('/mcp', express.json(), async (req, res) => {
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    const server = notesServer()
    res.on('close', () => void transport.close().then(() => server.close()))
    await server.connect(transport)
    // mcpAuth() set req.auth to the token's McpAuth, the SDK's AuthInfo: mcpRequest(req) says so to TypeScript.
    await transport.handleRequest(mcpRequest(req), res, req.body)
  })
  // Stateless: no server-sent stream to open, no session to end.
  app.all('/mcp', (_req, res) => void res.status(405).set('Allow', 'POST').json({ error: 'method_not_allowed' }))

  // The app's own API, for its pages (a cookie session). A token of the MCP server is refused here: it
  // is for /mcp alone (its audience), so a tool's token cannot be replayed against the rest of the app.
  app.get('/api/notes', async (req, res) => {
    const session = await auth(req, res)
    if (!session) return void res.status(401).json({ error: 'unauthorized' })
    res.json({ notes: notes.get(session.user.id) ?? [] })
  })

  app.get('/', async (req, res) => {
    const session = await auth(req, res)
    res.type('html').send(
      session
        ? `<p>Signed in as ${escapeHtml(session.user.name)}. <a href="/api/auth/oauth-apps">Apps with access to your account</a> · <a href="/api/auth/signout">Sign out</a></p><p>Point an MCP client at <code>${escapeHtml(new URL('/mcp', authUrl).href)}</code>.</p>`
        : `<p>Not signed in. <a href="/api/auth/signin?callbackUrl=%2F">Sign in</a> as <code>ada</code> / <code>lovelace</code> or <code>grace</code> / <code>hopper</code>.</p>`,
    )
  })
  return { app, portcullis }
}

function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}
