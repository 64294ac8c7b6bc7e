/**
 * Session-read benchmark (`npm run bench`): the cost of reading one session, in one process, on
 * the same 10,000 distinct session cookies, sequentially.
 *
 *   floor            the bare RFC 7518 §5.2.2.2 work inline (HMAC-SHA-512, compare, AES-256-CBC, JSON.parse)
 *   openSessionToken portcullis's codec alone (strict parsing, header and claim checks)
 *   auth(req, res)   the whole public read: cookie parsing, codec, session object, req.auth, on
 *                    cookies this instance never saw (cache off: every cookie is decrypted)
 *   …, warm          the same, on cookies the instance read moments ago (jwt.cacheSize): what a
 *                    browser's second and later requests cost until the cookie is re-issued
 *   jose             jwtDecrypt with the key derived once (WebCrypto, async)
 *   @auth/core/jwt   decode (derives the key on every call, then jose)
 *   getSession       @auth/express getSession (builds a Request and runs Auth.js's /session route)
 *
 * Targets (issue 2): auth() at most 3x the floor, and at least 30x faster than getSession.
 */
import { createDecipheriv, createHmac, hkdfSync, randomUUID, timingSafeEqual } from 'node:crypto'
import { jwtDecrypt } from 'jose'
import { decode as authjsDecode } from '@auth/core/jwt'
import CredentialsAuthjs from '@auth/core/providers/credentials'
import { getSession } from '@auth/express'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import Portcullis from '../src/index.js'
import Credentials from '../src/providers/credentials.js'
import { deriveKeyRing } from '../src/session/keys.js'
import { openSessionToken, sealSessionToken } from '../src/session/token.js'

const TOKENS = 10_000
const WARMUP = 1_000
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
const SALT = 'authjs.session-token'
const MAX_AGE = 30 * 24 * 60 * 60

const now = Math.floor(Date.now() / 1000)
const ring = deriveKeyRing([SECRET], SALT)
const cek = new Uint8Array(hkdfSync('sha256', SECRET, SALT, `Auth.js Generated Encryption Key (${SALT})`, 64))
const macKey = Buffer.from(cek.subarray(0, 32))
const encKey = Buffer.from(cek.subarray(32))

const tokens: string[] = []
for (let i = 0; i < TOKENS; i++) {
  const payload = {
    name: `Ada Lovelace ${i}`,
    email: `ada.lovelace.${i}@analytical-engine.example.com`,
    picture: `https://avatars.githubusercontent.com/u/${1_000_000 + i}?v=4`,
    sub: randomUUID(),
  }
  tokens.push(sealSessionToken(payload, ring.current, MAX_AGE, now))
}

/** RFC 7518 §5.2.2.2 with nothing else: no format checks, no header parsing, no claim checks. */
function floorDecrypt(token: string): unknown {
  const [header = '', , iv64 = '', ct64 = '', tag64 = ''] = token.split('.')
  const iv = Buffer.from(iv64, 'base64url')
  const ciphertext = Buffer.from(ct64, 'base64url')
  const al = Buffer.alloc(8)
  al.writeUInt32BE(header.length * 8, 4)
  const mac = createHmac('sha512', macKey).update(header, 'latin1').update(iv).update(ciphertext).update(al).digest()
  if (!timingSafeEqual(mac.subarray(0, 32), Buffer.from(tag64, 'base64url'))) throw new Error('tag')
  const decipher = createDecipheriv('aes-256-cbc', encKey, iv)
  return JSON.parse(Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8'))
}

const { auth } = Portcullis({ secret: SECRET, providers: [Credentials({ authorize: () => null })], jwt: { cacheSize: 0 } })
const { auth: authWarm } = Portcullis({ secret: SECRET, providers: [Credentials({ authorize: () => null })], jwt: { cacheSize: TOKENS } })
const authjsConfig = { secret: SECRET, trustHost: true, providers: [CredentialsAuthjs({ authorize: () => null })] }

/** A real Node request carrying the session cookie, as Express hands it to a route. */
function requestWithCookie(token: string): IncomingMessage & { protocol: string } {
  const req = new IncomingMessage(new Socket()) as IncomingMessage & { protocol: string }
  req.method = 'GET'
  req.url = '/me'
  req.headers = { host: 'localhost:3000', cookie: `${SALT}=${token}`, accept: 'application/json' }
  req.protocol = 'http'
  return req
}

// Fresh request objects for every pass, made before it is timed: auth() remembers the session per
// request, so a reused request would measure a cache hit.
let authRequests = new Map<string, IncomingMessage>()
const prepareAuthRequests = () => {
  authRequests = new Map(tokens.map((token) => [token, requestWithCookie(token)]))
}
const response = new ServerResponse(requestWithCookie(''))

const candidates: Array<{ name: string; prepare?: () => void | Promise<void>; run: (token: string) => unknown }> = [
  { name: 'floor (inline node:crypto)', run: floorDecrypt },
  {
    name: 'portcullis openSessionToken',
    run: (token) => {
      const opened = openSessionToken(token, ring, now)
      if (opened === null) throw new Error('portcullis rejected a valid token')
      return opened.payload
    },
  },
  {
    name: 'jose jwtDecrypt (key derived once)',
    run: async (token) =>
      (
        await jwtDecrypt(token, cek, {
          clockTolerance: 15,
          keyManagementAlgorithms: ['dir'],
          contentEncryptionAlgorithms: ['A256CBC-HS512', 'A256GCM'],
        })
      ).payload,
  },
  {
    name: 'portcullis auth(req, res)',
    prepare: prepareAuthRequests,
    run: async (token) => {
      const session = await auth(authRequests.get(token)!, response)
      return { sub: session?.user.id }
    },
  },
  {
    name: 'portcullis auth(req, res), warm',
    // Every cookie read once, untimed, then fresh requests: the measured reads hit the cache.
    prepare: async () => {
      prepareAuthRequests()
      for (const token of tokens) await authWarm(authRequests.get(token)!, response)
      prepareAuthRequests()
    },
    run: async (token) => {
      const session = await authWarm(authRequests.get(token)!, response)
      return { sub: session?.user.id }
    },
  },
  { name: '@auth/core/jwt decode', run: (token) => authjsDecode({ token, secret: SECRET, salt: SALT }) },
  {
    name: '@auth/express getSession',
    run: async (token) => {
      const session = await getSession(requestWithCookie(token) as never, authjsConfig)
      return { sub: (session?.user as { email?: string } | undefined)?.email ?? session?.user?.name }
    },
  },
]

interface Row {
  name: string
  ops: number
  meanUs: number
  opsPerSec: number
}

async function measure(run: (token: string) => unknown, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) {
    const result = run(tokens[i % TOKENS] ?? '')
    // Only await real promises: awaiting a plain value would add a microtask to the sync paths.
    if (result instanceof Promise) await result
  }
  return Number(process.hrtime.bigint() - start) / 1000
}

const rows: Row[] = []
for (const { name, prepare, run } of candidates) {
  await prepare?.()
  // Every candidate must accept a token before it is timed.
  const sample = await run(tokens[0] ?? '')
  if ((sample as { sub?: unknown }).sub === undefined) throw new Error(`${name}: no sub`)
  await measure(run, WARMUP)
  await prepare?.()
  const elapsedUs = await measure(run, TOKENS)
  rows.push({ name, ops: TOKENS, meanUs: elapsedUs / TOKENS, opsPerSec: (TOKENS * 1e6) / elapsedUs })
}

const tokenBytes = tokens.reduce((sum, t) => sum + t.length, 0) / TOKENS
const floorUs = rows[0]?.meanUs ?? 1
console.log(`Node ${process.version}, ${TOKENS} distinct tokens, mean ${tokenBytes.toFixed(0)} bytes each, sequential\n`)
console.log(`| ${'session read'.padEnd(36)} | ${'ops'.padStart(6)} | ${'mean µs/op'.padStart(10)} | ${'ops/s'.padStart(9)} | ${'x floor'.padStart(7)} |`)
console.log(`|${'-'.repeat(38)}|${'-'.repeat(8)}|${'-'.repeat(12)}|${'-'.repeat(11)}|${'-'.repeat(9)}|`)
for (const row of rows) {
  console.log(
    `| ${row.name.padEnd(36)} | ${String(row.ops).padStart(6)} | ${row.meanUs.toFixed(2).padStart(10)} | ${Math.round(row.opsPerSec).toLocaleString('en-US').padStart(9)} | ${(row.meanUs / floorUs).toFixed(1).padStart(7)} |`,
  )
}

const meanOf = (name: string) => rows.find((row) => row.name === name)?.meanUs ?? Number.NaN
const authUs = meanOf('portcullis auth(req, res)')
console.log(`\nauth(req, res) = ${(authUs / floorUs).toFixed(2)}x the floor (target <= 3x)`)
console.log(`auth(req, res) on a cookie seen before = ${(meanOf('portcullis auth(req, res), warm') / floorUs).toFixed(2)}x the floor`)
console.log(`auth(req, res) is ${(meanOf('@auth/express getSession') / authUs).toFixed(0)}x faster than @auth/express getSession (target >= 30x)`)
