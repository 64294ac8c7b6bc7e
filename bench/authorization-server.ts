/**
 * Authorization server benchmark (`npm run bench -- authorization-server`): the token endpoint's
 * authorization code exchange (PKCE S256, a confidential client with client_secret_basic, an ID token
 * and a refresh token issued, the code consumed in the OAuthRecord table) per second, and the
 * authorization round trips that make the codes (the authorization request, the site's session as the
 * sign-in, a first-party client: no consent page), over HTTP on loopback against one process, the
 * store on SQLite (better-sqlite3, in memory).
 *
 * Method: one user signed in through the credentials form; per round, CODES codes are made one after
 * another (timed: authorizations per second), then exchanged CONCURRENCY at a time (timed: exchanges
 * per second). 1 untimed round, then 5 (BENCH_ROUNDS). BENCH_QUICK=1: 3 rounds of 50.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { loadavg } from 'node:os'
import express from 'express'
import knex from 'knex'
import Portcullis from '../src/index.js'
import { KnexAdapter, migrationSource } from '../src/adapters/knex/index.js'
import Credentials from '../src/providers/credentials.js'
import { QUICK, rounds } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const CODES = QUICK ? 50 : 200
const CONCURRENCY = 10
const ROUNDS = rounds(5)
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
const CLIENT_SECRET = 'bench-client-secret-0123456789abcdef0123456789'
const REDIRECT = 'https://dashboard.example.com/callback'

const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
await db.migrate.latest({ migrationSource: migrationSource() })
const adapter = KnexAdapter(db)
const user = await adapter.createUser({ email: 'ada@example.com', emailVerified: new Date(), name: 'Ada' })

let handler: RequestListener = (_req, res) => void res.writeHead(503).end()
const server = createServer((req, res) => handler(req, res))
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
process.env.AUTH_URL = `${origin}/api/auth`
const portcullis = Portcullis({
  secret: SECRET,
  adapter,
  logger: { error() {}, warn() {}, debug() {} },
  providers: [Credentials({ authorize: async ({ email }) => (email === 'ada@example.com' ? user : null) })],
  authorizationServer: { scopes: ['reports:read'], clients: [{ client_id: 'dashboard', client_secret: CLIENT_SECRET, redirect_uris: [REDIRECT], first_party: true }] },
})
delete process.env.AUTH_URL
const app = express()
app.use('/api/auth', portcullis.handlers)
handler = app

// One browser's cookies, by name (one host, and the server's cookies are not path-shadowed here).
const jar = new Map<string, string>()
async function browse(url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') } })
  for (const cookie of response.headers.getSetCookie()) {
    const [pair] = cookie.split(';')
    const at = pair!.indexOf('=')
    jar.set(pair!.slice(0, at), pair!.slice(at + 1))
  }
  return response
}

const csrf = ((await (await browse(`${origin}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
await browse(`${origin}/api/auth/callback/credentials`, { method: 'POST', body: new URLSearchParams({ csrfToken: csrf, email: 'ada@example.com', password: 'x' }) })

/** One authorization code: the request, then the redirects (interaction, resume) until the client's. */
async function code(): Promise<{ code: string; verifier: string }> {
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  let url = `${origin}/api/auth/oauth/auth?${new URLSearchParams({ client_id: 'dashboard', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid offline_access reports:read', code_challenge: challenge, code_challenge_method: 'S256' })}`
  for (let hop = 0; hop < 8; hop++) {
    const response = await browse(url)
    await response.arrayBuffer()
    const location = new URL(response.headers.get('location') ?? '', url)
    if (location.href.startsWith(REDIRECT)) return { code: location.searchParams.get('code')!, verifier }
    url = location.href
  }
  throw new Error('the authorization did not end at the client')
}

const basic = `Basic ${Buffer.from(`dashboard:${CLIENT_SECRET}`).toString('base64')}`
async function exchange({ code: value, verifier }: { code: string; verifier: string }): Promise<void> {
  const response = await fetch(`${origin}/api/auth/oauth/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code: value, redirect_uri: REDIRECT, code_verifier: verifier }) })
  const body = (await response.json()) as { access_token?: string; refresh_token?: string; id_token?: string }
  if (response.status !== 200 || !body.access_token || !body.refresh_token || !body.id_token) throw new Error(`the exchange answered ${response.status} ${JSON.stringify(body)}`)
}

const authorizations: number[] = []
const exchanges: number[] = []
for (let round = 0; round <= ROUNDS; round++) {
  let start = performance.now()
  const codes = []
  for (let i = 0; i < CODES; i++) codes.push(await code())
  const authorizationRate = CODES / ((performance.now() - start) / 1000)
  start = performance.now()
  for (let i = 0; i < codes.length; i += CONCURRENCY) await Promise.all(codes.slice(i, i + CONCURRENCY).map(exchange))
  const exchangeRate = CODES / ((performance.now() - start) / 1000)
  if (round > 0) {
    authorizations.push(authorizationRate)
    exchanges.push(exchangeRate)
  }
}
server.close()
await db.destroy()

console.log(`\nNode ${process.version}, loopback, one server process, SQLite in memory; ${ROUNDS} rounds of ${CODES} codes after one untimed, medians (load average ${loadavg()[0]!.toFixed(1)})\n`)
printTable(
  ['Authorization server', 'per second', 'spread'],
  [
    ['authorization (request → site session → code, first-party: no consent), one at a time', thousands(median(authorizations)), spread(authorizations, thousands)],
    [`code exchange at the token endpoint (PKCE, client_secret_basic; access, ID and refresh token), ${CONCURRENCY} at a time`, thousands(median(exchanges)), spread(exchanges, thousands)],
  ],
)
