/**
 * getAccessToken(): what it answers and what it leaves behind, for each way it can go. The errors
 * word for word (each says what to do next); with JWT sessions, a `provider_tokens` entry that is
 * not an object, the refresh errors kept in the cookie, and a refreshed token set too large for it;
 * with database sessions (KnexAdapter on in-memory SQLite), the account it picks, the token fields a
 * refresh writes to the row and those it keeps, one claim on the row per account and instance, and
 * the lease: a sign-in storing new tokens while a refresh is under way, a refresh refused meanwhile,
 * an instance waiting on another's lease until it is given back or runs out, an account unlinked
 * during the wait, and a row that changes under every claim. Against the real OpenID Provider of
 * the refresh rig; refresh-database.test.ts and refresh.test.ts cover the races and the flows.
 */
import { randomBytes } from 'node:crypto'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { decodeJwt } from 'jose'
import knex, { type Knex } from 'knex'
import Portcullis, { RefreshAccessTokenError, type Adapter, type AdapterAccount, type GetAccessTokenOptions, type JWT, type NewAdapterAccount, type PortcullisConfig, type PortcullisResult } from 'portcullis'
import { KnexAdapter, migrationSource, type KnexAdapterInstance } from 'portcullis/adapters/knex'
import { encode } from 'portcullis/jwt'
import { Browser } from '../support/browser.js'
import { recordingLogger, type RecordingLogger } from '../support/logger.js'
import { rejectionOf } from '../support/rejection.js'
import { SECRET } from '../support/oauth-app.js'
import { corpProvider, mountTokenApp, SESSION_COOKIE as COOKIE, SHORT_TTL, useRefreshRig } from '../support/refresh-rig.js'

const rig = useRefreshRig()

/** What a call answered: the token, or the refusal's code and message. */
type Answer = { token: string } | { code: string; message: string }

const nowInSeconds = () => Math.floor(Date.now() / 1000)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A request carrying `cookie`, as `getAccessToken({ req, res }, …)` takes it. */
function requestWith(cookie: string): IncomingMessage {
  const req = new IncomingMessage(new Socket())
  req.method = 'GET'
  req.headers = { host: '127.0.0.1', cookie }
  return req
}

async function answerOf(call: Promise<string>): Promise<Answer> {
  try {
    return { token: await call }
  } catch (error) {
    if (error instanceof RefreshAccessTokenError) return { code: error.code, message: error.message }
    throw error
  }
}

/**
 * `promise`, or a rejection after 30 s: a call that waits on a lease for its full minute (or hangs)
 * fails the test with this message, before Jest's limit. Half the lease, and generous otherwise: an
 * answer that takes seconds on a loaded machine is no failure (it had 3-4 s before).
 */
async function within<T>(promise: Promise<T>): Promise<T> {
  const ms = 30_000
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))])
  } finally {
    clearTimeout(timer)
  }
}

/** Whose access token this is, by the IdP's API; `undefined` when the IdP does not accept it. */
async function ownerOf(accessToken: string): Promise<string | undefined> {
  const response = await fetch(rig.idp.apiUrl, { headers: { authorization: `Bearer ${accessToken}` } })
  return response.status === 200 ? ((await response.json()) as { id: string }).id : undefined
}

/** A promise and the function that settles it, for holding the IdP's answer while the test acts. */
function signal(): { done: Promise<void>; fire: () => void } {
  let fire!: () => void
  const done = new Promise<void>((resolve) => (fire = resolve))
  return { done, fire }
}

/** Holds the IdP's next token request until `release()` (`asked` settles once it has come), then answers it `status` and `body`. */
function holdNextTokenRequest(status: number, body: unknown): { asked: Promise<void>; release: () => void } {
  const asked = signal()
  const release = signal()
  rig.beforeTokenRequest(async (ctx) => {
    rig.beforeTokenRequest(undefined)
    asked.fire()
    await release.done
    ctx.status = status
    ctx.body = body
    return true
  })
  return { asked: asked.done, release: release.fire }
}

const providers = () => [corpProvider(rig.idp), corpProvider(rig.idp, { id: 'corp-second', name: 'Corp again' })]

/** An instance of its own (its own config, so its own memory of refreshes: another process, in effect). */
function instance(config: Partial<PortcullisConfig> = {}): PortcullisResult & { logger: RecordingLogger } {
  const logger = recordingLogger()
  return { ...Portcullis({ secret: SECRET, logger, providers: providers(), ...config }), logger }
}

describe('getAccessToken with JWT sessions', () => {
  /** A session cookie as Portcullis seals it, for user alice, with `provider_tokens` as given. */
  async function sessionCookie(providerTokens?: unknown): Promise<string> {
    // Whatever it holds: the claim's type is what Portcullis writes, not what a cookie may carry.
    const token: JWT = { sub: 'alice', name: 'Alice Example', ...(providerTokens === undefined ? {} : { provider_tokens: providerTokens as JWT['provider_tokens'] }) }
    return `${COOKIE}=${await encode({ token, secret: SECRET, salt: COOKIE })}`
  }

  /** The call's answer, and the session cookie it sent on the response (if any) as the next request carries it. */
  async function call(portcullis: PortcullisResult, cookie: string, options?: GetAccessTokenOptions): Promise<{ answer: Answer; sent: string | undefined }> {
    const req = requestWith(cookie)
    const res = new ServerResponse(req)
    const answer = await answerOf(portcullis.getAccessToken({ req, res }, 'corp', options))
    const sent = ([res.getHeader('set-cookie') ?? []].flat() as string[]).find((line) => line.startsWith(`${COOKIE}=`))
    return { answer, sent: sent?.split(';')[0] }
  }

  const NO_ACCOUNT = {
    code: 'no_account',
    message: 'getAccessToken(): the session token carries no tokens of the "corp" provider: the user signed in with another provider (or before tokens were kept), or the jwt callback dropped the provider_tokens claim.',
  }
  const NO_REFRESH_TOKEN = {
    code: 'no_refresh_token',
    message: `getAccessToken(): the "corp" access token has expired and the provider gave no refresh token. Ask for one (the offline_access scope; Google: authorization params access_type: 'offline', prompt: 'consent') and sign in again.`,
  }

  it('refuses a skewSeconds that is negative, NaN or infinite with a TypeError saying what it takes; 0 asks for no margin', async () => {
    const portcullis = instance()
    // Valid for 30 more seconds: fresh with no margin, due within the default 60.
    const cookie = await sessionCookie({ corp: { access_token: 'corp-access', expires_at: nowInSeconds() + 30 } })
    for (const [skewSeconds, shown] of [[-1, '-1'], [Number.NaN, 'NaN'], [Number.POSITIVE_INFINITY, 'Infinity']] as const) {
      const req = requestWith(cookie)
      const error = await rejectionOf(portcullis.getAccessToken({ req, res: new ServerResponse(req) }, 'corp', { skewSeconds }))
      expect(error).toBeInstanceOf(TypeError)
      expect((error as TypeError).message).toBe(`getAccessToken(): skewSeconds must be a number of seconds from 0; got ${shown}.`)
    }
    expect((await call(portcullis, cookie, { skewSeconds: 0 })).answer).toEqual({ token: 'corp-access' })
    expect((await call(portcullis, cookie)).answer).toEqual(NO_REFRESH_TOKEN)
  })

  it('answers no_account, naming the provider and the likely causes, for a session token without its tokens', async () => {
    const portcullis = instance()
    expect(await call(portcullis, await sessionCookie())).toEqual({ answer: NO_ACCOUNT, sent: undefined })
    expect(await call(portcullis, await sessionCookie({ 'corp-second': { access_token: 'second-access' } }))).toEqual({ answer: NO_ACCOUNT, sent: undefined })
  })

  it('takes a provider_tokens entry that is not an object for no tokens: no_account, and the session is left as it was', async () => {
    const portcullis = instance()
    for (const entry of ['legacy-access-token', 42]) {
      expect(await call(portcullis, await sessionCookie({ corp: entry }))).toEqual({ answer: NO_ACCOUNT, sent: undefined })
    }
  })

  it('an expired token without a refresh token answers no_refresh_token with what to ask the provider for, and keeps saying so', async () => {
    const portcullis = instance()
    const first = await call(portcullis, await sessionCookie({ corp: { access_token: 'corp-access', expires_at: nowInSeconds() - 10 } }))
    expect(first.answer).toEqual(NO_REFRESH_TOKEN)
    // The session now carries the mark: the next request reads it from there.
    expect(first.sent).toBeDefined()
    expect((await call(portcullis, first.sent!)).answer).toEqual(NO_REFRESH_TOKEN)
  })

  it('after the provider refused the refresh token, later calls say so without asking it again, and send the user to sign in', async () => {
    const portcullis = instance()
    const before = rig.refreshes()
    const cookie = await sessionCookie({ corp: { access_token: 'corp-access', refresh_token: 'never-issued-by-the-idp', expires_at: nowInSeconds() - 10 } })
    const first = await call(portcullis, cookie)
    expect(first.answer).toMatchObject({ code: 'invalid_grant', message: expect.stringContaining('error="invalid_grant"') })
    expect(rig.refreshes() - before).toBe(1)
    expect((await call(portcullis, first.sent!)).answer).toEqual({
      code: 'invalid_grant',
      message: `getAccessToken(): the "corp" provider refused this session's refresh token earlier; the user must sign in with it again.`,
    })
    expect(rig.refreshes() - before).toBe(1)
  })

  it('a refreshed token set too large for jwt.maxSize still serves the call; the cookie is kept and the log says why', async () => {
    const portcullis = instance({ jwt: { maxSize: 1500 } })
    const large = `large-${'x'.repeat(3000)}`
    rig.beforeTokenRequest(async (ctx) => {
      ctx.status = 200
      ctx.body = { access_token: large, token_type: 'Bearer', expires_in: 3600 }
      return true
    })
    const cookie = await sessionCookie({ corp: { access_token: 'corp-access', refresh_token: 'corp-refresh', expires_at: nowInSeconds() - 10 } })
    expect(await call(portcullis, cookie)).toEqual({ answer: { token: large }, sent: undefined })
    const logged = portcullis.logger.lines.filter((line) => line.code === 'SessionTokenTooLarge')
    expect(logged).toHaveLength(1)
    expect(logged[0]!.level).toBe('error')
    expect(String(logged[0]!.message[0])).toMatch(/\S getAccessToken\(\) could not store the refreshed provider tokens; the session cookie is kept as it was\.$/)
  })
})

/** Calls of the real adapter, counted and recorded: reads of the user's accounts, and account updates (a claim is one writing a lease). */
interface WatchedAdapter {
  adapter: Adapter
  updates: Array<{ fields: Record<string, unknown>; expect: Record<string, unknown> | undefined; at: number }>
  readCount(): number
  /** Resolves once the user's accounts have been read `count` times. */
  reads(count: number): Promise<void>
  /** Updates that wrote a lease (`expires_at` below zero, compared against the row read). */
  claims(): number
}

/** `inner`, watched; `beforeClaim` runs before each claim reaches the database (another process getting there first). */
function watched(inner: KnexAdapterInstance, beforeClaim?: () => Promise<void>): WatchedAdapter {
  let reads = 0
  const waiting: Array<{ count: number; resolve: () => void }> = []
  const updates: WatchedAdapter['updates'] = []
  const isClaim = (fields: { expires_at?: unknown }, expect: unknown) => expect !== undefined && typeof fields.expires_at === 'number' && fields.expires_at < 0
  const adapter: Adapter = {
    ...inner,
    async getAccountsByUserId(userId) {
      const accounts = await inner.getAccountsByUserId(userId)
      reads++
      for (const waiter of waiting.filter((candidate) => candidate.count <= reads)) waiter.resolve()
      return accounts
    },
    async updateAccount(account, options) {
      updates.push({ fields: { ...account }, expect: options?.expect, at: Date.now() })
      if (beforeClaim && isClaim(account, options?.expect)) await beforeClaim()
      return inner.updateAccount(account, options?.expect ? { expect: options.expect } : {})
    },
  }
  return {
    adapter,
    updates,
    readCount: () => reads,
    reads: (count) => (reads >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve }))),
    claims: () => updates.filter((update) => isClaim(update.fields, update.expect)).length,
  }
}

describe('getAccessToken with database sessions', () => {
  let db: Knex

  beforeAll(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true, pool: { min: 1, max: 1 } })
    await db.migrate.latest({ migrationSource: migrationSource() })
  })
  afterAll(() => db?.destroy())
  // The app the browsers sign in at (its redirect URIs are the IdP's registered ones).
  beforeEach(() => void mountTokenApp(rig.app, { providers: providers(), adapter: KnexAdapter(db) }))

  const store = () => KnexAdapter(db)
  const onDatabase = (adapter: Adapter = store()) => instance({ adapter })

  async function call(portcullis: PortcullisResult, cookie: string, provider = 'corp', options?: GetAccessTokenOptions): Promise<Answer> {
    return answerOf(portcullis.getAccessToken({ req: requestWith(cookie) }, provider, options))
  }

  /** A user with these accounts and a session, stored directly (no sign-in: the tokens are the test's). */
  async function storedUser(login: string, accounts: Array<Omit<NewAdapterAccount, 'userId' | 'type'>>): Promise<{ userId: string; sessionToken: string; cookie: string }> {
    const user = await store().createUser({ name: login, email: `${login}@example.com` })
    for (const account of accounts) await store().linkAccount({ userId: user.id, type: 'oidc', ...account })
    const sessionToken = randomBytes(32).toString('base64url')
    await store().createSession({ sessionToken, userId: user.id, expires: new Date(Date.now() + 24 * 3600 * 1000) })
    return { userId: user.id, sessionToken, cookie: `${COOKIE}=${sessionToken}` }
  }

  /** Signs `login` in at the IdP (access tokens living `ttl` seconds); the browser and its session cookie. */
  async function signedIn(login: string, { ttl = SHORT_TTL, provider = 'corp', browser = new Browser() } = {}): Promise<{ browser: Browser; cookie: string }> {
    expect((await rig.signInWith(browser, login, { ttl, provider })).status).toBe(302)
    return { browser, cookie: `${COOKIE}=${browser.cookie(rig.app.url, COOKIE)}` }
  }

  async function accountRow(provider: string, providerAccountId: string): Promise<AdapterAccount> {
    const row = await store().getAccount(providerAccountId, provider)
    if (!row) throw new Error(`no ${provider} account ${providerAccountId}`)
    return row
  }

  describe('which account, and the errors', () => {
    it('answers unsupported_adapter, naming the two methods it needs, for an adapter without getAccountsByUserId or without updateAccount', async () => {
      const { cookie } = await storedUser('una', [{ provider: 'corp', providerAccountId: 'una', access_token: 'una-access' }])
      for (const missing of ['getAccountsByUserId', 'updateAccount'] as const) {
        const { [missing]: _missing, ...limited } = store() as Adapter
        expect(await call(onDatabase(limited), cookie)).toEqual({
          code: 'unsupported_adapter',
          message: 'getAccessToken() with database sessions needs an adapter with getAccountsByUserId and updateAccount (KnexAdapter has both).',
        })
      }
    })

    it('uses the account at the asked provider, and among several there the one providerAccountId names', async () => {
      const { userId, cookie } = await storedUser('hana', [
        { provider: 'corp-second', providerAccountId: 'hana', access_token: 'second-access' },
        { provider: 'corp', providerAccountId: 'hana', access_token: 'corp-access' },
      ])
      const portcullis = onDatabase()
      expect(await call(portcullis, cookie)).toEqual({ token: 'corp-access' })
      expect(await call(portcullis, cookie, 'corp-second')).toEqual({ token: 'second-access' })
      expect(await call(portcullis, cookie, 'corp', { providerAccountId: 'hana' })).toEqual({ token: 'corp-access' })

      await store().linkAccount({ userId, type: 'oidc', provider: 'corp', providerAccountId: 'hana-work', access_token: 'work-access' })
      expect(await call(portcullis, cookie)).toEqual({ code: 'ambiguous', message: 'getAccessToken(): the signed-in user has 2 "corp" accounts; pass { providerAccountId } to say which.' })
      expect(await call(portcullis, cookie, 'corp', { providerAccountId: 'hana-work' })).toEqual({ token: 'work-access' })
      expect(await call(portcullis, cookie, 'corp', { providerAccountId: 'hana' })).toEqual({ token: 'corp-access' })
    })

    it('answers no_account, saying which account is missing, for a user without one at the provider or without one of that id', async () => {
      const { cookie } = await storedUser('ivan', [{ provider: 'corp-second', providerAccountId: 'ivan', access_token: 'second-access' }])
      const portcullis = onDatabase()
      expect(await call(portcullis, cookie)).toEqual({ code: 'no_account', message: 'getAccessToken(): the signed-in user has no "corp" account.' })
      expect(await call(portcullis, cookie, 'corp-second', { providerAccountId: 'ivan-work' })).toEqual({
        code: 'no_account',
        message: 'getAccessToken(): the signed-in user has no "corp-second" account with id ivan-work.',
      })
    })

    it('answers not_signed_in when the session ends after the request read it (signed out elsewhere meanwhile)', async () => {
      const { cookie, sessionToken } = await storedUser('jane', [{ provider: 'corp', providerAccountId: 'jane', access_token: 'jane-access' }])
      const portcullis = onDatabase()
      const req = requestWith(cookie)
      expect((await portcullis.auth(req))?.user?.email).toBe('jane@example.com')
      await store().deleteSession(sessionToken)
      expect(await answerOf(portcullis.getAccessToken({ req }, 'corp'))).toEqual({ code: 'not_signed_in', message: 'getAccessToken(): nobody is signed in on this request.' })
    })
  })

  describe('what a refresh stores', () => {
    it('writes the refreshed token set to the row: the token type, scope and ID token the provider sent replace the stored ones', async () => {
      const { cookie } = await signedIn('owen')
      const signIn = await accountRow('corp', 'owen')
      // An older token set in the row: the refresh must replace every part of it.
      await store().updateAccount({ provider: 'corp', providerAccountId: 'owen', token_type: 'legacy', scope: 'openid', id_token: 'stale-id-token' })
      const portcullis = onDatabase()
      const answer = await call(portcullis, cookie)
      expect(answer).toEqual({ token: expect.any(String) })
      const row = await accountRow('corp', 'owen')
      expect(row).toMatchObject({ access_token: (answer as { token: string }).token, token_type: 'bearer', scope: signIn.scope })
      expect(row.scope).toContain('offline_access')
      expect(decodeJwt(row.id_token!)).toMatchObject({ sub: 'owen', aud: 'rotating' })
      expect(portcullis.logger.codes()).not.toContain('RefreshAccessTokenLeaseLost')
    })

    it('keeps the stored scope and ID token when the refresh answer leaves them out (RFC 6749 §5.1), and asks the adapter to change only what it sent', async () => {
      const { cookie } = await signedIn('pia')
      const signIn = await accountRow('corp', 'pia')
      rig.beforeTokenRequest(async (ctx) => {
        ctx.status = 200
        ctx.body = { access_token: 'pia-refreshed', token_type: 'Bearer', expires_in: 3600 }
        return true
      })
      const watch = watched(store())
      expect(await call(onDatabase(watch.adapter), cookie)).toEqual({ token: 'pia-refreshed' })
      const row = await accountRow('corp', 'pia')
      expect(row).toEqual({ ...signIn, access_token: 'pia-refreshed', expires_at: expect.any(Number) })
      expect(row.expires_at).toBeGreaterThan(nowInSeconds() + 3000)
      // An adapter that writes every field it is given (null for undefined) must not lose them either.
      const stored = watch.updates.find((update) => update.fields.access_token === 'pia-refreshed')!
      expect(Object.keys(stored.fields).sort()).toEqual(['access_token', 'expires_at', 'provider', 'providerAccountId', 'refresh_token', 'token_type'])
    })

    it('concurrent calls in one instance refresh each account once, with one claim on its row, and give each user their own token', async () => {
      const users = ['quinn', 'rosa']
      const cookies: string[] = []
      for (const login of users) cookies.push((await signedIn(login)).cookie)
      const watch = watched(store())
      const portcullis = onDatabase(watch.adapter)
      const before = rig.refreshes()
      const answers = await Promise.all(users.flatMap((login, i) => Array.from({ length: 5 }, async () => ({ login, answer: await call(portcullis, cookies[i]!) }))))
      expect(rig.refreshes() - before).toBe(2)
      expect(watch.claims()).toBe(2)
      for (const login of users) {
        const tokens = new Set(answers.filter((answer) => answer.login === login).map(({ answer }) => (answer as { token?: string }).token))
        expect(tokens.size).toBe(1)
        const [token] = [...tokens]
        expect(await ownerOf(token!)).toBe(login)
        expect((await accountRow('corp', login)).access_token).toBe(token)
      }
    })
  })

  describe('the lease on the row', () => {
    it('a sign-in that stores new tokens while a refresh is under way keeps them: the refreshed token serves that call only, and a warning says why', async () => {
      const { cookie } = await signedIn('sam')
      const answered = signal()
      const held = signal()
      // The IdP has refreshed (and rotated); its answer is held back while the user signs in again.
      rig.afterRefresh(async () => {
        answered.fire()
        await held.done
      })
      const portcullis = onDatabase()
      const refreshing = call(portcullis, cookie)
      await answered.done
      await signedIn('sam', { ttl: 3600 })
      const signedInAgain = await accountRow('corp', 'sam')
      held.fire()
      const answer = await refreshing
      expect(answer).toEqual({ token: expect.any(String) })
      expect((answer as { token: string }).token).not.toBe(signedInAgain.access_token)
      expect(await ownerOf((answer as { token: string }).token)).toBe('sam')
      expect(await accountRow('corp', 'sam')).toEqual(signedInAgain)
      expect(portcullis.logger.lines.filter((line) => line.level === 'warn' && line.code === 'RefreshAccessTokenLeaseLost').map((line) => line.message)).toEqual([
        [
          `The "corp" account's row changed while its access token was being refreshed (the refresh outlived its 60-second lease, or a sign-in stored new tokens); the refreshed tokens are used for this call only.`,
        ],
      ])
    })

    it('a refresh the provider refuses after the user signed in again meanwhile answers with that sign-in’s token, and leaves its row alone', async () => {
      // The user's other accounts come first in the table: the row read again must be this one, by provider and id.
      const { browser } = await signedIn('tess', { provider: 'corp-second', ttl: 3600 })
      const { userId } = await accountRow('corp-second', 'tess')
      await store().linkAccount({ userId, type: 'oidc', provider: 'corp', providerAccountId: 'tess-work', access_token: 'tess-work-access' })
      const { cookie } = await signedIn('tess', { browser })
      const listed = (await store().getAccountsByUserId(userId)).map((account) => `${account.provider}/${account.providerAccountId}`)
      expect(listed).toEqual(['corp-second/tess', 'corp/tess-work', 'corp/tess'])

      const refusal = holdNextTokenRequest(400, { error: 'invalid_grant', error_description: 'grant request is invalid' })
      const refreshing = call(onDatabase(), cookie, 'corp', { providerAccountId: 'tess' })
      await refusal.asked
      await signedIn('tess', { ttl: 3600 })
      const signedInAgain = await accountRow('corp', 'tess')
      refusal.release()
      expect(await refreshing).toEqual({ token: signedInAgain.access_token })
      expect(await accountRow('corp', 'tess')).toEqual(signedInAgain)
    })

    it('a refresh that fails (provider outage) after the user signed in again meanwhile answers with that sign-in’s token, and leaves its row alone', async () => {
      const { cookie } = await signedIn('tom')
      const outage = holdNextTokenRequest(503, 'down for maintenance')
      const refreshing = call(onDatabase(), cookie)
      await outage.asked
      await signedIn('tom', { ttl: 3600 })
      const signedInAgain = await accountRow('corp', 'tom')
      outage.release()
      expect(await refreshing).toEqual({ token: signedInAgain.access_token })
      expect(await accountRow('corp', 'tom')).toEqual(signedInAgain)
    })

    it('an instance waiting on another’s refresh goes on once that one gives the row back after failing, and refreshes itself', async () => {
      const { cookie } = await signedIn('uma')
      const signIn = await accountRow('corp', 'uma')
      const outage = holdNextTokenRequest(503, 'down for maintenance')
      const before = rig.refreshes()
      const other = call(onDatabase(), cookie)
      await outage.asked
      const watch = watched(store())
      const waiting = call(onDatabase(watch.adapter), cookie)
      // It has found the row leased, and read it again while waiting.
      await within(watch.reads(2))
      outage.release()
      expect(await other).toMatchObject({ code: 'provider_error' })
      const answer = await within(waiting)
      expect(answer).toEqual({ token: expect.any(String) })
      expect(await ownerOf((answer as { token: string }).token)).toBe('uma')
      expect(rig.refreshes() - before).toBe(2)
      const row = await accountRow('corp', 'uma')
      expect(row.access_token).toBe((answer as { token: string }).token)
      expect(row.refresh_token).not.toBe(signIn.refresh_token)
    })

    it('an instance waiting on a lease never given back (a crashed process) takes over once it has run out, reading the row a few times a second meanwhile', async () => {
      const { cookie } = await signedIn('vic')
      // Early in a second, so that a lease to the next second is still held when the call reads the row.
      if (Date.now() % 1000 > 150) await sleep(1005 - (Date.now() % 1000))
      const leaseEnd = nowInSeconds() + 1
      await store().updateAccount({ provider: 'corp', providerAccountId: 'vic', expires_at: -leaseEnd })
      const watch = watched(store())
      const before = rig.refreshes()
      const answer = await within(call(onDatabase(watch.adapter), cookie))
      expect(answer).toEqual({ token: expect.any(String) })
      expect(await ownerOf((answer as { token: string }).token)).toBe('vic')
      expect(rig.refreshes() - before).toBe(1)
      // Taken over once the lease has ended, not before. (How soon after is not asserted: on a loaded
      // machine the event loop may lag by a second.)
      const takeOver = watch.updates.filter((update) => update.expect !== undefined && (update.fields.expires_at as number) < 0)
      expect(takeOver).toHaveLength(1)
      expect(takeOver[0]!.at).toBeGreaterThanOrEqual(leaseEnd * 1000)
      // Up to a second of waiting: re-read after 10, 25, 50, 100 ms, then every 200 ms; not in a busy loop.
      expect(watch.readCount()).toBeLessThanOrEqual(12)
    })

    it('a call waiting on another process’s refresh answers no_account when the account is unlinked meanwhile', async () => {
      const { cookie } = await storedUser('wes', [{ provider: 'corp', providerAccountId: 'wes', access_token: 'wes-access', refresh_token: 'wes-refresh', expires_at: -(nowInSeconds() + 60) }])
      const watch = watched(store())
      const waiting = call(onDatabase(watch.adapter), cookie)
      await within(watch.reads(2))
      await store().unlinkAccount({ provider: 'corp', providerAccountId: 'wes' })
      expect(await within(waiting)).toEqual({ code: 'no_account', message: 'getAccessToken(): the "corp" account was unlinked meanwhile.' })
    })

    it('gives up with provider_error after five claims when the row changes under every one, without sending the refresh token', async () => {
      const { cookie } = await storedUser('xia', [{ provider: 'corp', providerAccountId: 'xia', access_token: 'xia-0', refresh_token: 'xia-refresh-0', expires_at: nowInSeconds() - 10 }])
      let written = 0
      // Another process stores a new token set just before each claim: valid an hour, short of the two hours asked for.
      const watch = watched(store(), async () => {
        written++
        await store().updateAccount({ provider: 'corp', providerAccountId: 'xia', access_token: `xia-${written}`, refresh_token: `xia-refresh-${written}`, expires_at: nowInSeconds() + 3600 })
      })
      const before = rig.refreshes()
      expect(await within(call(onDatabase(watch.adapter), cookie, 'corp', { skewSeconds: 7200 }))).toEqual({
        code: 'provider_error',
        message: `getAccessToken(): the "corp" account's tokens kept changing under 5 refresh attempts; try again.`,
      })
      expect(watch.claims()).toBe(5)
      expect(rig.refreshes()).toBe(before)
    })
  })
})
