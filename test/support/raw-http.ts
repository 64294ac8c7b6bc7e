/**
 * Requests sent over node:http exactly as written: fetch and supertest normalise a path
 * (`/a/%2e%2e/b` becomes `/b`) before it leaves, which hides what a server does with the raw one.
 *
 * @example
 * ```ts
 * const { status, body } = await rawRequest(server, '/dashboard/%2e%2e/api/auth')
 * ```
 */
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What came back. */
export interface RawResponse {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** Sends `method path` (GET by default) to a listening server, the path untouched. */
export function rawRequest(server: Server, path: string, options: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {}): Promise<RawResponse> {
  return rawRequestAt((server.address() as AddressInfo).port, path, options)
}

/** `rawRequest` to whatever listens on 127.0.0.1:`port` (a server the suite does not hold, e.g. a listener's URL's). */
export function rawRequestAt(port: number, path: string, options: { method?: string; headers?: OutgoingHttpHeaders; body?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/** Listens on 127.0.0.1, a free port. */
export async function listen(server: Server): Promise<Server> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

/** Closes the server and its idle keep-alive connections. */
export function close(server: Server): Promise<void> {
  server.closeAllConnections?.()
  return new Promise((resolve) => server.close(() => resolve()))
}
