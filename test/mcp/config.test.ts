/**
 * The options of MCP and of the clients that describe themselves, checked at init: each mistake
 * named with what to change, and the switch for private addresses refused in production.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import Portcullis, { type AuthorizationServerOptions } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { findDatabaseServer, type TestDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'

const server = await findDatabaseServer('sqlite')

describe('the MCP options', () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await server.createDatabase()
    process.env['AUTH_URL'] = 'https://app.example.com/api/auth'
  })
  afterAll(async () => {
    delete process.env['AUTH_URL']
    await db.destroy()
  })
  const start = (authorizationServer: Partial<AuthorizationServerOptions> | Record<string, unknown>) => Portcullis({ secret: SECRET, adapter: KnexAdapter(db.knex), providers: [], authorizationServer: authorizationServer as AuthorizationServerOptions })

  it('names what is wrong with an MCP server\'s path, scopes or documentation', () => {
    expect(() => start({ mcp: { path: 'mcp' } })).toThrow('authorizationServer.mcp.path must be the MCP server\'s path on this site, e.g. "/mcp"')
    expect(() => start({ mcp: { path: '/a/../mcp' } })).toThrow('no query, fragment or dot segment')
    expect(() => start({ mcp: { path: '/mcp?x' } })).toThrow('authorizationServer.mcp.path')
    expect(() => start({ mcp: [{ path: '/mcp' }, { path: '/mcp/' }] })).toThrow('two MCP servers have the path "/mcp"')
    expect(() => start({ mcp: { path: '/mcp', scopes: [] } })).toThrow('must name at least one scope')
    expect(() => start({ mcp: { path: '/mcp', scopes: ['a b'] } })).toThrow('authorizationServer.mcp.scopes must be an array of scope names')
    expect(() => start({ mcp: { path: '/mcp', documentation: 'docs' } })).toThrow('authorizationServer.mcp.documentation must be an http(s) URL')
  })

  it('refuses private addresses in production, and a fetch that is not a function', () => {
    const environment = process.env['NODE_ENV']
    process.env['NODE_ENV'] = 'production'
    try {
      expect(() => start({ allowPrivateAddressesInDevelopment: true })).toThrow('is on while NODE_ENV is "production"')
    } finally {
      process.env['NODE_ENV'] = environment
    }
    expect(() => start({ fetch: 'fetch' })).toThrow('authorizationServer.fetch must be a function')
    expect(() => start({ registration: 'yes' })).toThrow('authorizationServer.registration must be true or false')
  })

  it('says how to turn MCP on when mcpAuth() is called without it, and refuses a scope that is none', () => {
    expect(() => start({}).mcpAuth()).toThrow('mcpAuth(): no MCP server is configured')
    expect(() => start({ mcp: { path: '/mcp' } }).mcpAuth({ scopes: ['two words'] })).toThrow('mcpAuth(): scopes must be an array of scope names')
    expect(typeof start({ mcp: { path: '/mcp' } }).mcpAuth()).toBe('function')
  })
})
