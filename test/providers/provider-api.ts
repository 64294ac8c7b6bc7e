/**
 * A small in-process stand-in for a third-party provider's OAuth and profile endpoints (node:http on
 * 127.0.0.1, an ephemeral port), for the provider tests that cannot reach the real API. Each test
 * file writes the routes from that provider's documentation (URL in the file); this module only
 * records the requests and keeps the authorization codes, with their PKCE challenge, between
 * /authorize and /token, so the routes can check what the provider checks.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A request as the mock received it. */
export interface RecordedRequest {
  method: string
  /** Path and query, e.g. `/2/users/me?user.fields=profile_image_url`. */
  url: string
  headers: IncomingHttpHeaders
  /** The raw body ('' when there was none). */
  body: string
  /** Whether the request carried a body at all (a Content-Length above 0, or chunks). */
  hasBody: boolean
}

/** A route's answer: JSON, a redirect, or text. */
export type MockAnswer = { status?: number; json: unknown } | { redirect: string } | { status: number; text: string; contentType?: string }

/** `METHOD /path` → handler. */
export type MockRoutes = Record<string, (request: RecordedRequest, url: URL, api: ProviderApi) => MockAnswer | Promise<MockAnswer>>

/** An authorization code the mock issued, with what the token request must match. */
export interface IssuedCode {
  clientId: string
  redirectUri: string
  scope: string
  codeChallenge: string | undefined
  codeChallengeMethod: string | undefined
  used: boolean
}

export interface ProviderApi {
  /** e.g. `http://127.0.0.1:43210` */
  baseUrl: string
  requests: RecordedRequest[]
  codes: Map<string, IssuedCode>
  /** Issues a code for an /authorize request's parameters. */
  issueCode(params: URLSearchParams): string
  /**
   * Checks a token request's code against what was issued (client, redirect URI, PKCE S256 when a
   * challenge was sent): the issued code, or the OAuth error to answer (RFC 6749 §5.2).
   */
  redeemCode(form: URLSearchParams, clientId: string): IssuedCode | { error: string; error_description: string }
  close(): Promise<void>
}

/** Starts the mock with `routes`; unknown routes answer 404 JSON. */
export async function startProviderApi(routes: MockRoutes): Promise<ProviderApi> {
  const requests: RecordedRequest[] = []
  const codes = new Map<string, IssuedCode>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined
      const recorded: RecordedRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body, hasBody }
      requests.push(recorded)
      const url = new URL(recorded.url, api.baseUrl)
      const route = routes[`${recorded.method} ${url.pathname}`]
      try {
        const answer: MockAnswer = route ? await route(recorded, url, api) : { status: 404, json: { error: 'not_found', path: url.pathname } }
        if ('redirect' in answer) res.writeHead(302, { location: answer.redirect }).end()
        else if ('json' in answer) res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json))
        else res.writeHead(answer.status, { 'content-type': answer.contentType ?? 'text/plain' }).end(answer.text)
      } catch (error) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const api: ProviderApi = {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    codes,
    issueCode(params) {
      const code = randomBytes(16).toString('hex')
      codes.set(code, {
        clientId: params.get('client_id') ?? '',
        redirectUri: params.get('redirect_uri') ?? '',
        scope: params.get('scope') ?? '',
        codeChallenge: params.get('code_challenge') ?? undefined,
        codeChallengeMethod: params.get('code_challenge_method') ?? undefined,
        used: false,
      })
      return code
    },
    redeemCode(form, clientId) {
      const issued = codes.get(form.get('code') ?? '')
      if (!issued || issued.used || issued.clientId !== clientId) return { error: 'invalid_grant', error_description: 'unknown, used or foreign code' }
      if (form.get('grant_type') !== 'authorization_code') return { error: 'unsupported_grant_type', error_description: 'grant_type' }
      if (form.get('redirect_uri') !== issued.redirectUri) return { error: 'invalid_grant', error_description: 'redirect_uri differs' }
      if (issued.codeChallenge !== undefined) {
        const verifier = form.get('code_verifier') ?? ''
        if (issued.codeChallengeMethod !== 'S256' || createHash('sha256').update(verifier).digest('base64url') !== issued.codeChallenge) {
          return { error: 'invalid_grant', error_description: 'code_verifier does not match' }
        }
      }
      issued.used = true
      return issued
    },
    close() {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
  return api
}

/** The client id and secret of an `Authorization: Basic` header, or `undefined`. */
export function basicCredentials(headers: IncomingHttpHeaders): { id: string; secret: string } | undefined {
  const match = /^Basic (.+)$/i.exec(headers.authorization ?? '')
  if (!match) return undefined
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  // RFC 6749 §2.3.1: both are form-urlencoded before base64.
  return { id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')) }
}

/** The bearer token of an `Authorization` header, or `undefined`. */
export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  return /^Bearer (\S+)$/.exec(headers.authorization ?? '')?.[1]
}
