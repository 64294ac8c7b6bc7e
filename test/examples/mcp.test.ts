/**
 * Starts examples/mcp as its README says, so the example cannot rot (STYLE.md, Tests): its MCP server
 * answers an MCP client's first request with the 401 that leads to its metadata, and the metadata to
 * the authorization server, with registration on as MCP_REGISTRATION=on asks. test/mcp runs the same
 * app with the MCP SDK's client through every flow.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startExampleProcess, type ExampleProcess } from '../support/example-process.js'
import { examplePort } from '../support/ports.js'

const root = fileURLToPath(new URL('../..', import.meta.url))

describe('examples/mcp', () => {
  const port = examplePort()
  const origin = `http://localhost:${port}`
  let dir: string
  let server: ExampleProcess
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-mcp-example-'))
    const env = { ...process.env, NODE_OPTIONS: '', PORT: String(port), MCP_REGISTRATION: 'on', AUTH_SECRET: 'test-secret-for-the-mcp-example-0123456789', DATABASE_FILE: join(dir, 'example.sqlite') }
    server = await startExampleProcess(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/mcp/server.ts'], { cwd: root, env, ready: 'running at', name: 'server.ts' })
  }, 30_000)
  afterAll(async () => {
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('leads an MCP client from its first 401 to the authorization server, registration open', async () => {
    const refused = await fetch(`${origin}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize' }) })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", scope="notes:read"`)
    const resource = (await (await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`)).json()) as { authorization_servers: string[] }
    expect(resource.authorization_servers).toEqual([`${origin}/api/auth/oauth`])
    const metadata = (await (await fetch(`${origin}/.well-known/oauth-authorization-server/api/auth/oauth`)).json()) as Record<string, unknown>
    expect(metadata).toMatchObject({ issuer: `${origin}/api/auth/oauth`, registration_endpoint: `${origin}/api/auth/oauth/reg`, client_id_metadata_document_supported: true, code_challenge_methods_supported: ['S256'] })
  })
})
