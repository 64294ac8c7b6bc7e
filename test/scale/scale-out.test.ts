/**
 * Scale-out: three real Portcullis processes (test/scale/server.mjs on the built package) behind a
 * round-robin proxy (http-proxy), on PostgreSQL and Redis, once with JWT sessions (session.store on
 * Redis) and once with database sessions. No sticky sessions: consecutive requests of one browser
 * go to different processes. What must hold: a session signed in through one process is read by
 * the others; an OAuth callback served by another process than the sign-in's start works; a session
 * revoked through one is refused by the others within revocationCacheSeconds (JWT; at once with
 * database sessions); so is a role taken away (the JWT session ends; database sessions read the
 * new role at once), and so is a member's role in an organization lowered; failed attempts are counted across processes; 20 concurrent getAccessToken
 * calls with an expired token make one refresh at the IdP.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import httpProxy from 'http-proxy'
import { migrationSource } from 'portcullis/adapters/knex'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, type TestDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { redirectOf, signInWith, type Listener } from '../support/oauth-app.js'
import { findRedisServer, describeWithRedis } from '../support/redis.js'
import { CLIENT, startRefreshIdp, type RefreshIdp } from '../support/refresh-rig.js'
import { STEP_LIMIT_MS, TEST_LIMIT_MS } from '../support/time-limits.js'

const SERVER_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'server.mjs')
const PROCESSES = 3
/** One process's start: a bound on a hang (three start at once, each loading the package and connecting to PostgreSQL and Redis). */
const STARTUP_MS = STEP_LIMIT_MS

interface Served {
  method: string
  path: string
  pid: string
}

/** Three processes behind the proxy, the IdP, and the log of which process served what. */
interface Cluster {
  readonly url: string
  readonly idp: RefreshIdp
  readonly served: Served[]
  readonly pids: string[]
}

/** Starts the proxy, the IdP (whose client names the proxy's callback URL) and the processes; stops them after the suite. */
function useCluster(strategy: 'jwt' | 'database', database: () => TestDatabase, redisUrl: string, keyPrefix: string): Cluster {
  const children: ChildProcess[] = []
  const served: Served[] = []
  const pids: string[] = []
  let proxyServer: Server | undefined
  let idp: RefreshIdp | undefined
  let url = ''

  beforeAll(async () => {
    const targets: string[] = []
    let next = 0
    const proxy = httpProxy.createProxyServer({ xfwd: true })
    proxy.on('proxyRes', (answer, req) => {
      served.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, pid: String(answer.headers['x-process']) })
    })
    proxy.on('error', (_error, _req, res) => {
      if ('writeHead' in res && !res.headersSent) res.writeHead(502).end()
    })
    proxyServer = createServer((req, res) => proxy.web(req, res, { target: targets[next++ % targets.length] }))
    await new Promise<void>((resolve) => proxyServer!.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(proxyServer.address() as AddressInfo).port}`

    // The IdP only needs to know the callback URLs, which are the proxy's.
    const asListener = { callbackUrl: (id: string) => `${url}/api/auth/callback/${id}` } as Listener
    idp = await startRefreshIdp([asListener])

    const db = database()
    await db.knex.migrate.latest({ migrationSource: migrationSource() })
    const settings = {
      strategy,
      secret: SECRET,
      issuer: idp.idp.issuer,
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
      redisUrl,
      keyPrefix,
      database: db.config,
    }
    const started = await Promise.all(Array.from({ length: PROCESSES }, () => startProcess(JSON.stringify(settings), children)))
    for (const { port, pid } of started) {
      targets.push(`http://127.0.0.1:${port}`)
      pids.push(pid)
    }
  }, TEST_LIMIT_MS)

  afterAll(async () => {
    await Promise.all(children.map((child) => stopProcess(child)))
    if (proxyServer) {
      proxyServer.closeAllConnections()
      await new Promise((resolve) => proxyServer!.close(resolve))
    }
    await idp?.idp.close()
  })

  return {
    get url() {
      return url
    },
    get idp() {
      if (!idp) throw new Error('the cluster is used before its beforeAll has run')
      return idp
    },
    served,
    pids,
  }
}

async function startProcess(settings: string, children: ChildProcess[]): Promise<{ port: number; pid: string }> {
  const child = spawn(process.execPath, [SERVER_SCRIPT], { env: { ...process.env, SCALE_CONFIG: settings }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`a scale-out process did not start in ${STARTUP_MS} ms:\n${output}`)), STARTUP_MS)
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      const ready = /ready (\d+)/.exec(output)
      if (ready) {
        clearTimeout(timer)
        resolve({ port: Number(ready[1]), pid: String(child.pid) })
      }
    }
    child.stdout!.on('data', collect)
    child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`a scale-out process exited with ${code}:\n${output}`))
    })
  })
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000)
    child.once('exit', () => {
      clearTimeout(killer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** `/me` through the proxy `times` times: who each answer says is signed in (the IdP login), and which process answered. */
async function readThroughAll(cluster: Cluster, browser: Browser, times = PROCESSES): Promise<Array<{ name: string | null; pid: string }>> {
  const answers: Array<{ name: string | null; pid: string }> = []
  for (let i = 0; i < times; i++) {
    const response = await browser.request(`${cluster.url}/me`)
    const body = (await response.json()) as { user?: { email?: string | null } } | null
    answers.push({ name: body?.user?.email?.split('@')[0] ?? null, pid: response.headers.get('x-process') ?? '' })
  }
  return answers
}

async function csrfToken(cluster: Cluster, browser: Browser): Promise<string> {
  return ((await (await browser.request(`${cluster.url}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
}

function scaleOutSuite(strategy: 'jwt' | 'database', cluster: Cluster): void {
  it('a session signed in through one process is read through each of the others', async () => {
    const browser = new Browser()
    expect((await signInWith(browser, cluster.url, 'corp', 'ada')).status).toBe(302)
    const answers = await readThroughAll(cluster, browser)
    expect(answers.map((answer) => answer.name)).toEqual(['ada', 'ada', 'ada'])
    expect(new Set(answers.map((answer) => answer.pid))).toEqual(new Set(cluster.pids))
  })

  it('an OAuth callback served by another process than the one that started the sign-in signs in', async () => {
    const browser = new Browser()
    const from = cluster.served.length
    expect((await signInWith(browser, cluster.url, 'corp', 'grace')).status).toBe(302)
    const flow = cluster.served.slice(from)
    const start = flow.find((each) => each.method === 'POST' && each.path === '/api/auth/signin/corp')!
    const callback = flow.find((each) => each.path === '/api/auth/callback/corp')!
    expect(start.pid).not.toBe(callback.pid)
    expect((await readThroughAll(cluster, browser, 1))[0]!.name).toBe('grace')
  })

  it(`a session revoked through one process is refused by the others ${strategy === 'jwt' ? 'within revocationCacheSeconds' : 'at once'}`, async () => {
    const laptop = new Browser()
    const phone = new Browser()
    expect((await signInWith(laptop, cluster.url, 'corp', 'linus')).status).toBe(302)
    expect((await signInWith(phone, cluster.url, 'corp', 'linus')).status).toBe(302)
    // Every process has read the laptop's session (JWT: each now knows it stands).
    expect((await readThroughAll(cluster, laptop)).map((answer) => answer.name)).toEqual(['linus', 'linus', 'linus'])

    const listed = (await (await phone.request(`${cluster.url}/api/auth/sessions/list`)).json()) as { sessions: Array<{ id: string; current: boolean }> }
    expect(listed.sessions).toHaveLength(2)
    const laptopSession = listed.sessions.find((session) => !session.current)!
    const revoked = await phone.request(`${cluster.url}/api/auth/sessions/revoke`, { body: new URLSearchParams({ csrfToken: await csrfToken(cluster, phone), id: laptopSession.id }) })
    expect(revoked.status).toBe(302)

    if (strategy === 'jwt') await pause(1100) // revocationCacheSeconds: 1 in server.mjs
    const after = await readThroughAll(cluster, laptop)
    expect(after.map((answer) => answer.name)).toEqual([null, null, null])
    expect(new Set(after.map((answer) => answer.pid))).toEqual(new Set(cluster.pids))
    expect((await readThroughAll(cluster, phone)).map((answer) => answer.name)).toEqual(['linus', 'linus', 'linus'])
  })

  it(`a role given and taken away through one process reaches the others ${strategy === 'jwt' ? 'within revocationCacheSeconds (the session ends; a new sign-in carries the role)' : 'at once'}`, async () => {
    const browser = new Browser()
    expect((await signInWith(browser, cluster.url, 'corp', `edsger-${strategy}`)).status).toBe(302)
    const userId = ((await (await browser.request(`${cluster.url}/me`)).json()) as { user: { id: string; roles: string[] } }).user.id
    const deleteThroughAll = async () => {
      const answers: Array<{ status: number; pid: string }> = []
      for (let i = 0; i < PROCESSES; i++) {
        const response = await browser.request(`${cluster.url}/posts/1`, { method: 'DELETE', headers: { accept: 'application/json' } })
        await response.body?.cancel()
        answers.push({ status: response.status, pid: response.headers.get('x-process') ?? '' })
      }
      expect(new Set(answers.map((answer) => answer.pid))).toEqual(new Set(cluster.pids))
      return answers.map((answer) => answer.status)
    }
    const setRoles = async (roles: string) => (await browser.request(`${cluster.url}/admin/roles`, { body: new URLSearchParams({ userId, roles }) })).json()
    expect(await deleteThroughAll()).toEqual([403, 403, 403])

    expect(await setRoles('admin')).toMatchObject({ found: true, changed: true, sessionsEnded: strategy === 'jwt' ? 1 : 0 })
    if (strategy === 'jwt') {
      await pause(1100) // revocationCacheSeconds: 1 in server.mjs
      expect(await deleteThroughAll()).toEqual([401, 401, 401])
      expect((await signInWith(browser, cluster.url, 'corp', `edsger-${strategy}`)).status).toBe(302)
    }
    expect(await deleteThroughAll()).toEqual([204, 204, 204])

    // Taken away: every process has just let the session in; none does after the change.
    expect(await setRoles('')).toMatchObject({ changed: true })
    if (strategy === 'jwt') await pause(1100)
    expect(await deleteThroughAll()).toEqual(strategy === 'jwt' ? [401, 401, 401] : [403, 403, 403])
  })

  it(`a member's role lowered through one process reaches the others ${strategy === 'jwt' ? 'within revocationCacheSeconds (the session ends)' : 'at once'}`, async () => {
    const owner = new Browser()
    const member = new Browser()
    const idOf = async (browser: Browser) => ((await (await browser.request(`${cluster.url}/me`)).json()) as { user: { id: string } }).user.id
    expect((await signInWith(owner, cluster.url, 'corp', `grace-${strategy}`)).status).toBe(302)
    expect((await signInWith(member, cluster.url, 'corp', `alan-${strategy}`)).status).toBe(302)
    const organization = (await (await owner.request(`${cluster.url}/orgs`, { body: new URLSearchParams({ name: `Acme ${strategy}` }) })).json()) as { id: string }
    const memberId = await idOf(member)
    await member.request(`${cluster.url}/admin/members`, { body: new URLSearchParams({ organizationId: organization.id, userId: memberId, roles: 'member' }) })
    // Signed in again: the new session's active organization is their oldest membership, this one.
    expect((await signInWith(member, cluster.url, 'corp', `alan-${strategy}`)).status).toBe(302)
    const createThroughAll = async () => {
      const answers: Array<{ status: number; pid: string }> = []
      for (let i = 0; i < PROCESSES; i++) {
        const response = await member.request(`${cluster.url}/projects`, { method: 'POST', headers: { accept: 'application/json' } })
        await response.body?.cancel()
        answers.push({ status: response.status, pid: response.headers.get('x-process') ?? '' })
      }
      expect(new Set(answers.map((answer) => answer.pid))).toEqual(new Set(cluster.pids))
      return answers.map((answer) => answer.status)
    }
    expect(await createThroughAll()).toEqual([201, 201, 201])

    const lowered = await owner.request(`${cluster.url}/orgs/role`, { body: new URLSearchParams({ organizationId: organization.id, userId: memberId, roles: 'viewer' }) })
    expect(((await lowered.json()) as { roles: string[] }).roles).toEqual(['viewer'])
    if (strategy === 'jwt') await pause(1100) // revocationCacheSeconds: 1 in server.mjs
    expect(await createThroughAll()).toEqual(strategy === 'jwt' ? [401, 401, 401] : [403, 403, 403])
  })

  it(`a ban through one process ends the user's sessions on the others ${strategy === 'jwt' ? 'within revocationCacheSeconds' : 'at once'}, and refuses their next sign-in`, async () => {
    const admin = new Browser()
    const victim = new Browser()
    const idOf = async (browser: Browser) => ((await (await browser.request(`${cluster.url}/me`)).json()) as { user: { id: string } }).user.id
    expect((await signInWith(admin, cluster.url, 'corp', `root-${strategy}`)).status).toBe(302)
    await admin.request(`${cluster.url}/admin/roles`, { body: new URLSearchParams({ userId: await idOf(admin), roles: 'admin' }) })
    if (strategy === 'jwt') {
      // setRoles ended the JWT session: the new sign-in carries the role.
      await pause(1100)
      expect((await signInWith(admin, cluster.url, 'corp', `root-${strategy}`)).status).toBe(302)
    }
    expect((await signInWith(victim, cluster.url, 'corp', `mallory-${strategy}`)).status).toBe(302)
    expect((await readThroughAll(cluster, victim)).map((answer) => answer.name)).toEqual(Array(PROCESSES).fill(`mallory-${strategy}`))

    const banned = await admin.request(`${cluster.url}/admin/ban`, { body: new URLSearchParams({ userId: await idOf(victim) }) })
    expect(banned.status).toBe(200)
    if (strategy === 'jwt') await pause(1100) // revocationCacheSeconds: 1 in server.mjs
    const after = await readThroughAll(cluster, victim)
    expect(after.map((answer) => answer.name)).toEqual([null, null, null])
    expect(new Set(after.map((answer) => answer.pid))).toEqual(new Set(cluster.pids))
    // And the OAuth sign-in is refused before any session exists.
    expect(redirectOf(await signInWith(new Browser(), cluster.url, 'corp', `mallory-${strategy}`)).error).toBe('UserBanned')
    expect((await readThroughAll(cluster, admin, 1))[0]!.name).toBe(`root-${strategy}`)
  })

  it('failed sign-in attempts are counted across the processes', async () => {
    const browser = new Browser()
    const attempt = async () => {
      const body = new URLSearchParams({ csrfToken: await csrfToken(cluster, browser), username: `mallory-${strategy}`, password: 'guess' })
      const response = await browser.request(`${cluster.url}/api/auth/callback/credentials`, { body })
      await response.body?.cancel()
      return { status: response.status, pid: response.headers.get('x-process') ?? '' }
    }
    // identifier.attempts is 3: one per process, then the fourth is refused, wherever it lands.
    const allowed = [await attempt(), await attempt(), await attempt()]
    expect(allowed.map((each) => each.status)).toEqual([302, 302, 302])
    expect(new Set(allowed.map((each) => each.pid)).size).toBe(PROCESSES)
    expect((await attempt()).status).toBe(429)
  })

  it('20 concurrent getAccessToken calls with an expired access token across the processes make one refresh', async () => {
    const browser = new Browser()
    cluster.idp.setAccessTokenTtl(30) // under the default skewSeconds of 60: due at once
    try {
      expect((await signInWith(browser, cluster.url, 'corp', 'alan')).status).toBe(302)
    } finally {
      cluster.idp.setAccessTokenTtl(3600)
    }
    const before = cluster.idp.refreshes()
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const response = await browser.request(`${cluster.url}/token`)
        return { status: response.status, body: (await response.json()) as { token?: string; code?: string }, pid: response.headers.get('x-process') ?? '' }
      }),
    )
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200))
    expect(new Set(answers.map((answer) => answer.pid))).toEqual(new Set(cluster.pids))
    expect(new Set(answers.map((answer) => answer.body.token)).size).toBe(1)
    expect(cluster.idp.refreshes() - before).toBe(1)
    expect(await cluster.idp.accepts(answers[0]!.body.token!)).toBe(true)
  })
}

const redis = await findRedisServer()
if (!redis.reachable) {
  // Skipped (or, in CI, failed) with the reason, as every Redis suite is.
  await describeWithRedis('scale-out: three processes behind a round-robin proxy', () => {})
} else {
  await describeWithDatabase('postgres', 'scale-out: three processes behind a round-robin proxy, on PostgreSQL and Redis', (pg) => {
    for (const strategy of ['jwt', 'database'] as const) {
      describe(`${strategy} sessions`, () => {
        let db: TestDatabase | undefined
        beforeAll(async () => {
          db = await pg.createDatabase()
        })
        const cluster = useCluster(strategy, () => db!, process.env.REDIS_URL || 'redis://127.0.0.1:6379', redis.uniqueKeyPrefix())
        afterAll(async () => {
          await redis.cleanUp()
          await db?.destroy()
        })
        scaleOutSuite(strategy, cluster)
      })
    }
  })
}
