/** Odd request lines reach the router as they are (supertest would normalise them): never a 5xx. */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import Portcullis from 'portcullis'
import { SECRET, credentialsProvider } from '../support/flow.js'

let server: Server
beforeAll(async () => {
  const { handlers } = Portcullis({ secret: SECRET, providers: [credentialsProvider] })
  server = createServer((req, res) => void handlers(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path, method: 'GET' }, (res) => {
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
