/**
 * The MCP example: `npx tsx examples/mcp/server.ts` (see README.md). Its app is app.ts; this file
 * opens its database (embedded SQLite) and listens.
 *
 * Environment: PORT (default 3000), DATABASE_FILE (default examples/mcp/example.sqlite), AUTH_SECRET
 * (without it Portcullis keeps a development secret in .portcullis/dev-secret), MCP_REGISTRATION=on
 * (RFC 7591 registration, for MCP clients that do not use client ID metadata documents yet).
 */
import { fileURLToPath } from 'node:url'
import knex from 'knex'
import { mcpExampleApp } from './app.js'

const port = Number(process.env.PORT ?? 3000)
const databaseFile = process.env.DATABASE_FILE ?? fileURLToPath(new URL('example.sqlite', import.meta.url))
const db = knex({ client: 'better-sqlite3', connection: { filename: databaseFile }, useNullAsDefault: true })
// In production AUTH_URL comes from the environment: https://app.example.com/api/auth.
const { app } = await mcpExampleApp({ db, authUrl: `http://localhost:${port}/api/auth`, authorizationServer: { registration: process.env.MCP_REGISTRATION === 'on' }, secret: process.env.AUTH_SECRET })

app.listen(port, 'localhost', () => {
  console.log(`MCP example running at http://localhost:${port}: its MCP server is http://localhost:${port}/mcp (database: ${databaseFile})`)
})
