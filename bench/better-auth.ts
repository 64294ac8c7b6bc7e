/**
 * better-auth for the benchmarks, as its guides set it up: `betterAuth()` on a better-sqlite3
 * database (its Kysely adapter), email and password on, its tables by its own migrations, and
 * `auth.api.getSession({ headers })`, the read its Express guide calls in a route. Two instances on
 * the same database: one reading the session from the database on every call (better-auth's
 * default), and one with its cookie cache (`session.cookieCache`: a signed `session_data` cookie
 * beside the session token, read without the database until it expires).
 *
 * The sessions are written to its tables directly (`count` users, one session each, as its sign-in
 * writes them), and their cookies signed as better-call signs them (the token, a dot, the base64
 * HMAC-SHA-256 of the token with the secret, URL-encoded): checked against a session made by its
 * own sign-up when the rows are made. The cached cookies are the ones its first `getSession` sets.
 */
import { createHmac } from 'node:crypto'
import Database from 'better-sqlite3'

const COOKIE = 'better-auth.session_token'
const DAY = 24 * 3600 * 1000

/** The token of better-auth session `i`. */
const sessionToken = (i: number) => `bench-session-token-${String(i).padStart(12, '0')}`

/** The session cookie of better-auth session `i`, signed as better-call signs it. */
export function betterAuthCookie(secret: string, i: number): string {
  return signed(secret, sessionToken(i))
}

function signed(secret: string, token: string): string {
  return `${COOKIE}=${encodeURIComponent(`${token}.${createHmac('sha256', secret).update(token).digest('base64')}`)}`
}

/** What the benches use of a better-auth instance. */
export interface BetterAuthInstance {
  handler: (request: Request) => Promise<Response>
  api: { getSession(context: { headers: Headers }): Promise<{ user: { id: string } } | null> }
}

/** better-auth on `count` sessions of its own. */
export interface BetterAuthSessions {
  /** The instance that reads the database, and the one with the cookie cache. */
  plain: BetterAuthInstance
  cached: BetterAuthInstance
  /** The session of cookie `i`, read from the database. */
  read(i: number): Promise<string | undefined>
  /** The session of cookie `i` from the cookie cache (its cookie made on the first call for `i`). */
  readCached(i: number): Promise<string | undefined>
  /** Its session cookies, `session_token` only. */
  cookies: string[]
  close(): void
}

/** better-auth's two reads on `count` sessions of its own, on an in-memory SQLite database. */
export async function betterAuthSessions(secret: string, count: number, file = ':memory:'): Promise<BetterAuthSessions> {
  const [{ betterAuth }, { getMigrations }] = await Promise.all([import('better-auth'), import('better-auth/db/migration')])
  const db = new Database(file)
  const options = { secret, baseURL: 'http://localhost:3000', database: db, emailAndPassword: { enabled: true }, telemetry: { enabled: false }, logger: { disabled: true } }
  const plain = betterAuth(options)
  const cached = betterAuth({ ...options, session: { cookieCache: { enabled: true, maxAge: 3600 } } })
  await (await getMigrations(plain.options)).runMigrations()
  // Its own sign-up's cookie is the one this file signs.
  const signUp = await plain.api.signUpEmail({ body: { email: 'check@example.com', password: 'check-password-1234', name: 'Check' }, returnHeaders: true })
  const token = (signUp.response as { token: string }).token
  if (signUp.headers.get('set-cookie')?.split(';')[0] !== signed(secret, token)) throw new Error('better-auth signs its session cookie otherwise than bench/better-auth.ts does: fix signed()')
  const now = new Date()
  const insertUser = db.prepare('insert into user (id, name, email, emailVerified, image, createdAt, updatedAt) values (?, ?, ?, 0, ?, ?, ?)')
  const insertSession = db.prepare('insert into session (id, expiresAt, token, createdAt, updatedAt, ipAddress, userAgent, userId) values (?, ?, ?, ?, ?, ?, ?, ?)')
  const cookies: string[] = []
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = `bench-user-${i}`
      insertUser.run(id, `Ada Lovelace ${i}`, `ada.lovelace.${i}@analytical-engine.example.com`, `https://avatars.githubusercontent.com/u/${1_000_000 + i}?v=4`, now.toISOString(), now.toISOString())
      insertSession.run(`bench-session-${i}`, new Date(now.getTime() + 7 * DAY).toISOString(), sessionToken(i), now.toISOString(), now.toISOString(), '127.0.0.1', 'bench', id)
      cookies.push(signed(secret, sessionToken(i)))
    }
  })()
  const cachedCookies = new Map<number, string>()
  return {
    plain: plain as unknown as BetterAuthInstance,
    cached: cached as unknown as BetterAuthInstance,
    read: async (i: number) => (await plain.api.getSession({ headers: new Headers({ cookie: cookies[i]! }) }))?.user.id,
    readCached: async (i: number) => {
      let cookie = cachedCookies.get(i)
      if (!cookie) {
        const first = await cached.api.getSession({ headers: new Headers({ cookie: cookies[i]! }), returnHeaders: true })
        const data = first.headers.getSetCookie().find((line) => line.startsWith('better-auth.session_data='))
        if (!data) throw new Error('better-auth set no session_data cookie')
        cachedCookies.set(i, (cookie = `${cookies[i]!}; ${data.split(';')[0]!}`))
      }
      return (await cached.api.getSession({ headers: new Headers({ cookie }) }))?.user.id
    },
    cookies,
    close: () => void db.close(),
  }
}
