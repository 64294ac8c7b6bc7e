/**
 * Odd request lines reach the router as they are (supertest would normalise them): never a 5xx,
 * and never a warning a visitor can trigger by how they spell the path.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import express4 from 'express4'
import request from 'supertest'
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import Portcullis, { type LoggerInstance, type PortcullisConfig } from 'portcullis'
import { SECRET, credentialsProvider } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

let server: Server
beforeAll(async () => {
  const { handlers } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider] })
  server = createServer((req, res) => void handlers(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function get(path: string, target: Server = server): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: (target.address() as AddressInfo).port, path, method: 'GET' }, (res) => {
      let body = ''
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('request lines', () => {
  it('treats //host/path as a path, not as another host', async () => {
    const response = await get('//evil.example/api/auth/session')
    expect(response.status).toBe(400)
    expect(JSON.parse(response.body).error).toBe('UnknownAction')
  })

  it('serves an absolute-form request target by its path (RFC 9112 §3.2.2), and refuses an asterisk', async () => {
    expect(await get('http://127.0.0.1/api/auth/session')).toEqual({ status: 200, body: 'null' })
    const asterisk = await get('*')
    expect(asterisk.status).toBe(400)
    expect(JSON.parse(asterisk.body).error).toBe('InvalidRequest')
  })

  it('still serves the real route', async () => {
    const response = await get('/api/auth/session')
    expect(response.status).toBe(200)
    expect(response.body).toBe('null')
  })
})

describe('the mount path as a visitor spells it', () => {
  function portcullis(config: Partial<PortcullisConfig> = {}) {
    const warn = jest.fn<LoggerInstance['warn']>()
    // trustHost: the origin comes from Host without the once-per-instance development warning.
    const result = Portcullis({ secret: SECRET, providers: [credentialsProvider], trustHost: true, logger: { warn, error: () => {}, debug: () => {} }, ...config })
    return { ...result, warn }
  }

  // Regression: Express and Connect match mount paths case-insensitively, so `/API/AUTH/session`
  // reached handlers mounted at /api/auth with req.baseUrl "/API/AUTH": a BasePathMismatch warning
  // any visitor could write, and pages that linked to the visitor's spelling.
  it.each([
    ['Express 5', express],
    ['Express 4', express4],
  ])('on %s, /API/Auth is the configured /api/auth: no warning, links as configured', async (_name, createExpress) => {
    const { handlers, warn } = portcullis()
    const app = (createExpress as () => express.Express)()
    app.use('/api/auth', handlers)
    const page = await request(app).get('/Api/Auth/signin').expect(200)
    expect(page.text).toContain('action="/api/auth/callback/credentials"')
    const providers = await request(app).get('/API/AUTH/providers').expect(200)
    expect(new URL(providers.body.credentials.signinUrl).pathname).toBe('/api/auth/signin/credentials')
    await request(app).get('/api/AUTH/session').expect(200)
    expect(warn).not.toHaveBeenCalled()
  })

  it('reads a Connect-style mount (no req.baseUrl) from the raw target: /api/auth/../signin was mounted at /api/auth', async () => {
    const { handlers, warn } = portcullis()
    const connect = connectStyleServer('/api/auth', handlers)
    await new Promise<void>((resolve) => connect.listen(0, '127.0.0.1', resolve))
    try {
      const page = await get('/api/auth/../signin', connect)
      expect(page.status).toBe(200)
      expect(page.body).toContain('action="/api/auth/callback/credentials"')
      expect((await get('/API/AUTH/session', connect)).body).toBe('null')
      expect((await get('/api/auth', connect)).status).toBe(400)
      expect(warn).not.toHaveBeenCalled()
    } finally {
      await new Promise<void>((resolve) => connect.close(() => resolve()))
    }
  })

  it('warns once per instance, not per request, when the app mounts the handlers elsewhere than basePath', async () => {
    const { handlers, warn } = portcullis()
    const app = express()
    app.use('/auth', handlers)
    for (const path of ['/auth/session', '/AUTH/session', '/auth/providers', '/auth/csrf']) await request(app).get(path).expect(200)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(warn).toHaveBeenCalledWith('BasePathMismatch', expect.stringContaining('mounted at "/auth" but basePath is "/api/auth"'))

    // Told where it is mounted, it says nothing.
    const configured = portcullis({ basePath: '/auth' })
    const fixed = express()
    fixed.use('/auth', configured.handlers)
    await request(fixed).get('/auth/session').expect(200)
    expect(configured.warn).not.toHaveBeenCalled()
  })
})

/** Mounts `handlers` as Connect's `app.use(route, fn)` does: case-insensitive prefix, stripped from req.url, no req.baseUrl. */
function connectStyleServer(route: string, handlers: (req: never, res: never) => Promise<void>): Server {
  return createServer((req, res) => {
    const url = req.url ?? '/'
    const after = url[route.length]
    if (url.slice(0, route.length).toLowerCase() !== route.toLowerCase() || (after !== undefined && after !== '/' && after !== '.')) {
      res.statusCode = 404
      return void res.end()
    }
    Object.assign(req, { originalUrl: url })
    const rest = url.slice(route.length)
    req.url = rest.startsWith('/') ? rest : `/${rest}`
    void handlers(req as never, res as never)
  })
}
