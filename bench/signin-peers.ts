/**
 * Sign-ins side by side (`npm run bench:signin-peers`, not part of `npm run bench`; issue 68): a full
 * OpenID Connect sign-in with Portcullis, with @auth/express, and with Passport plus openid-client's
 * Passport strategy and express-session, against the same oidc-provider as the same user; and a
 * returning e-mail-link sign-in with Portcullis's Email provider and @auth/express's Nodemailer one.
 *
 * Four processes, so that each side's CPU is its own: this one is the test browser
 * (test/support/browser.ts) and the clock; bench/signin-peers-apps.ts hosts the OIDC apps in one and
 * the e-mail apps in another (each an Express app on its own port, nothing else; it says why two);
 * bench/signin-peers-idp.ts is the provider (test/support/idp.ts, one client per app). Sign-ins one at a time. A row's round: its sign-ins in a row, timed here
 * (sign-ins/s: the count over the round's wall time), the apps' and the provider's `process.cpuUsage()`
 * (all threads, user + system) asked over IPC before and after it: CPU µs a sign-in, the IPC's own
 * two messages in it (tens of µs a round, under 2 µs a sign-in). The browser's work is in neither.
 *
 * An OIDC sign-in: from the first request of the sign-in (Portcullis and Auth.js: GET /csrf, which
 * their sign-in POST needs, then POST /signin/corp; Passport: GET /login/corp) through the provider to
 * the callback's answer with the session cookie, the browser's session cookie deleted before each
 * one. Returning browser: the provider's session and consent are already there, so it answers at once;
 * new browser: a fresh browser logs in and consents each time. E-mail: the link of each sign-in is
 * asked for and captured before the round (each in a browser of its own: Portcullis binds a link to
 * the browser that asked, by a cookie), and the round times clicking it through to the session cookie,
 * for a user who has signed in before.
 *
 * Before any timing each row's app signs in once and its session endpoint (Passport: GET /me) must
 * name the user, or the bench stops. Then WARMUP sign-ins a row uncounted, then ROUNDS rounds, the rows
 * taking turns, the first rotating. BENCH_QUICK=1: fewer and shorter rounds.
 *
 * BENCH_INSTRUCTIONS=1 instead runs the apps' process under valgrind's callgrind (node
 * --single-threaded --no-memory-reducer, as bench/instructions.ts does) and counts its instructions
 * over windows of sign-ins, 3 a row taking turns, after a longer warm-up (bench/README.md says more).
 *
 * Targets (issue 68): Portcullis's sign-ins/s ≥ 1.5× @auth/express's and ≥ Passport's, its CPU a
 * sign-in (instructions, the provider excluded) the lowest of the three, for OIDC and e-mail alike.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Browser } from '../test/support/browser.js'
import { callgrindControl, collectorInstructions } from './callgrind.js'
import { benchFile, ensureBuilt, QUICK, rounds } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const started = performance.now()
ensureBuilt()
const INSTRUCTIONS = process.env.BENCH_INSTRUCTIONS === '1'
// About 50 s in all on the 2-core VM (22 s with 5 rounds of 30, 10 and 30): under the 2 minutes issue 68 allows.
const ROUNDS = rounds(INSTRUCTIONS ? 3 : 7)
const RETURNING = QUICK ? 8 : INSTRUCTIONS ? 30 : 50
const NEW_BROWSER = QUICK ? 3 : 15
const EMAIL = RETURNING
const WARMUP = INSTRUCTIONS ? (QUICK ? 10 : 60) : QUICK ? 5 : 20
const USER = 'alice@example.com'

type Library = 'Portcullis' | '@auth/express' | 'Passport'
type AppName = 'portcullis' | 'portcullis-id-token' | 'authjs' | 'passport' | 'portcullis-email' | 'portcullis-email-memory' | 'authjs-email'

/** A child process with an IPC channel: its messages in order, and requests answered by id. */
class Child {
  readonly #queue: unknown[] = []
  readonly #waiting: ((message: unknown) => void)[] = []
  readonly exited: Promise<unknown[]>
  #nextId = 0
  constructor(
    readonly name: string,
    readonly process: ChildProcess,
  ) {
    process.on('message', (message) => {
      const waiter = this.#waiting.shift()
      if (waiter) waiter(message)
      else this.#queue.push(message)
    })
    this.exited = once(process, 'exit')
    void this.exited.then(([code]) => {
      if (!closing) {
        console.error(`bench/signin-peers.ts: the ${name} process exited (${String(code)})`)
        globalThis.process.exit(1)
      }
    })
  }
  next<T>(): Promise<T> {
    if (this.#queue.length > 0) return Promise.resolve(this.#queue.shift() as T)
    return new Promise((resolve) => this.#waiting.push(resolve as (message: unknown) => void))
  }
  async ask<T>(message: object): Promise<T> {
    const id = this.#nextId++
    this.process.send({ ...message, id })
    const answer = await this.next<{ id: number } & T>()
    if (answer.id !== id) throw new Error(`the ${this.name} process answered request ${answer.id}, not ${id}`)
    return answer
  }
  /** CPU time so far, all threads, user + system, µs. */
  async cpu(): Promise<number> {
    const { cpu } = await this.ask<{ cpu: NodeJS.CpuUsage }>({ type: 'cpu' })
    return cpu.user + cpu.system
  }
}
let closing = false

/**
 * Node's flags under callgrind, as bench/instructions.ts's: the collector's and compilers' work on the
 * main thread, no memory reducer (valgrind's slowness would meet its 100-second watchdog), and the
 * young generation pinned at 16 MB a semi-space so that every row collects at the same rate.
 */
const CALLGRIND_NODE = ['--single-threaded', '--no-memory-reducer', '--min-semi-space-size=16', '--max-semi-space-size=16']

function start(name: string, file: string, args: string[], valgrind?: string[]): Child {
  const { path, execArgv } = benchFile(file)
  const node = [...execArgv, path, ...args]
  const child = valgrind ? spawn('valgrind', [...valgrind, process.execPath, ...CALLGRIND_NODE, ...node], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : spawn(process.execPath, node, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Child(name, child)
}

if (INSTRUCTIONS && spawnSync('valgrind', ['--version']).error) {
  console.log("valgrind is not installed: BENCH_INSTRUCTIONS=1 counts with valgrind's callgrind tool (apt-get install valgrind). Nothing measured.")
  process.exit(0)
}
const dumps = INSTRUCTIONS ? mkdtempSync(join(tmpdir(), 'portcullis-signin-peers-')) : ''
/** Under callgrind: counting nothing until told, each process's dumps named after it. */
const callgrind = (name: string) => (INSTRUCTIONS ? ['--tool=callgrind', '--instr-atstart=no', `--log-file=${join(dumps, `${name}.log`)}`, `--callgrind-out-file=${join(dumps, name)}`] : undefined)
const appProcesses = { oidc: start('OIDC apps', 'signin-peers-apps', ['oidc'], callgrind('oidc')), email: start('e-mail apps', 'signin-peers-apps', ['email'], callgrind('email')) }
const idp = start('identity provider', 'signin-peers-idp', [])
type Listening = { urls: Record<AppName, string>; redirectUris: Record<string, string> }
const [oidcApps, emailApps] = [await appProcesses.oidc.next<Listening>(), await appProcesses.email.next<Listening>()]
const urls = { ...oidcApps.urls, ...emailApps.urls }
const clients = Object.fromEntries(Object.keys(oidcApps.redirectUris).map((name) => [name, { client_id: `bench-${name}`, client_secret: `bench-secret-${name}` }]))
idp.process.send({ clients: Object.entries(oidcApps.redirectUris).map(([name, uri]) => ({ ...clients[name], redirect_uris: [uri] })) })
const { issuer } = await idp.next<{ issuer: string }>()
for (const apps of Object.values(appProcesses)) apps.process.send({ issuer, clients })
for (const apps of Object.values(appProcesses)) await apps.next<{ ready: true }>()
/** The process of an app. */
const appsOf = (app: AppName) => (app.includes('-email') ? appProcesses.email : appProcesses.oidc)

const home = (app: AppName) => `${urls[app]}/home`

/** Throws unless `response` is the callback's redirect home with the session cookie `cookie` set. */
function expectSignedIn(app: AppName, browser: Browser, response: Response, cookie: string): void {
  const location = response.headers.get('location')
  if (response.status !== 302 || !location || new URL(location, urls[app]).href !== home(app) || !browser.cookie(urls[app], cookie)) {
    throw new Error(`${app}: the callback answered ${response.status} to ${location}, session cookie ${browser.cookie(urls[app], cookie) ? 'set' : 'missing'}`)
  }
}

/** Portcullis (/api/auth) or Auth.js (/auth): GET /csrf, POST /signin/<provider>; the response. */
async function postSignIn(browser: Browser, app: AppName, base: string, provider: string, fields: Record<string, string>): Promise<Response> {
  const { csrfToken } = (await (await browser.request(`${urls[app]}${base}/csrf`)).json()) as { csrfToken: string }
  const response = await browser.request(`${urls[app]}${base}/signin/${provider}`, { body: new URLSearchParams({ csrfToken, callbackUrl: home(app), ...fields }) })
  await response.body?.cancel()
  return response
}

/** Where the app sent the browser to the provider; throws unless it did. */
function authorizationUrl(app: AppName, response: Response): string {
  const location = response.headers.get('location')
  if (response.status !== 302 || !location?.startsWith(issuer)) throw new Error(`${app}: the sign-in answered ${response.status} to ${location}, not a redirect to the provider`)
  return location
}

/** One OIDC sign-in as alice, from the sign-in's first request to the callback's answer. */
async function oidcSignIn(app: AppName, browser: Browser): Promise<void> {
  const cookie = app === 'passport' ? 'connect.sid' : 'authjs.session-token'
  browser.deleteCookie(urls[app], cookie)
  const start =
    app === 'passport'
      ? await browser.request(`${urls[app]}/login/corp`)
      : await postSignIn(browser, app, app === 'authjs' ? '/auth' : '/api/auth', 'corp', {})
  await start.body?.cancel()
  const callback = await browser.navigate(await browser.authorize(authorizationUrl(app, start), 'alice'))
  await callback.body?.cancel()
  expectSignedIn(app, browser, callback, cookie)
}

/** Asks for a sign-in link for the user in `browser`; the link, taken from the app. */
async function emailLink(app: AppName, browser: Browser): Promise<string> {
  const response = await postSignIn(browser, app, app === 'authjs-email' ? '/auth' : '/api/auth', app === 'authjs-email' ? 'nodemailer' : 'email', { email: USER })
  if (response.status !== 302 || !response.headers.get('location')?.includes('verify-request')) throw new Error(`${app}: asking for a link answered ${response.status} to ${response.headers.get('location')}`)
  const { links } = await appsOf(app).ask<{ links: string[] }>({ type: 'links', app })
  if (links.length !== 1) throw new Error(`${app}: ${links.length} links mailed for one request`)
  return links[0]!
}

/** Clicks a mailed link in the browser that asked for it. */
async function clickLink(app: AppName, browser: Browser, link: string): Promise<void> {
  const callback = await browser.request(link)
  await callback.body?.cancel()
  expectSignedIn(app, browser, callback, 'authjs.session-token')
}

/** Fails loudly unless the app's session endpoint names the user for `browser`. */
async function expectSession(app: AppName, browser: Browser): Promise<void> {
  const path = app === 'passport' ? '/me' : app.startsWith('authjs') ? '/auth/session' : '/api/auth/session'
  const response = await browser.request(`${urls[app]}${path}`)
  const body = (await response.json().catch(() => null)) as { user?: { email?: string } } | null
  if (response.status !== 200 || body?.user?.email !== USER) throw new Error(`${app}: ${path} answered ${response.status} ${JSON.stringify(body)} after the sign-in, not the user ${USER}`)
}

type Kind = 'returning browser' | 'new browser' | 'e-mail link'
interface Row {
  library: Library
  label: string
  app: AppName
  kind: Kind
  count: number
  /** A returning browser's, for its OIDC rows. */
  browser: Browser
  rates: number[]
  /** The apps' CPU µs a sign-in, by round. */
  cpu: number[]
  /** The provider's CPU µs a sign-in, by round. */
  idpCpu: number[]
  /** Under callgrind: the apps' instructions a sign-in, by round. */
  instructions: number[]
  /** Of those, the garbage collector's (callgrind.ts's COLLECTOR), by round. */
  collector: number[]
}

const row = (library: Library, label: string, app: AppName, kind: Kind): Row => ({
  library,
  label,
  app,
  kind,
  count: kind === 'new browser' ? NEW_BROWSER : kind === 'e-mail link' ? EMAIL : RETURNING,
  browser: new Browser(),
  rates: [],
  cpu: [],
  idpCpu: [],
  instructions: [],
  collector: [],
})
const oidcRows = (kind: Kind) => [
  row('Portcullis', 'Portcullis', 'portcullis', kind),
  row('Portcullis', 'Portcullis, userinfo: false', 'portcullis-id-token', kind),
  row('@auth/express', '@auth/express', 'authjs', kind),
  row('Passport', 'Passport + openid-client', 'passport', kind),
]
// Under callgrind a new browser's sign-in adds nothing to count that a returning one lacks (the
// provider's pages are the provider's), so only the returning and e-mail rows are counted.
const rows = [
  ...oidcRows('returning browser'),
  ...(INSTRUCTIONS ? [] : oidcRows('new browser')),
  row('Portcullis', 'Portcullis', 'portcullis-email', 'e-mail link'),
  row('Portcullis', 'Portcullis, in-memory adapter', 'portcullis-email-memory', 'e-mail link'),
  row('@auth/express', '@auth/express', 'authjs-email', 'e-mail link'),
]

/**
 * `count` sign-ins of `row`; the clock and the CPU windows hold only the sign-ins themselves (the
 * e-mail links are asked for before). Returns the wall ns and the apps' and provider's CPU µs.
 */
async function signIns(row: Row, count: number, window?: { before(): Promise<void>; after(): Promise<void> }): Promise<{ ns: number; cpu: number; idpCpu: number }> {
  const browsers = Array.from({ length: count }, () => (row.kind === 'returning browser' ? row.browser : new Browser()))
  // One at a time, the links too.
  const links: string[] = []
  for (const browser of row.kind === 'e-mail link' ? browsers : []) links.push(await emailLink(row.app, browser))
  await window?.before()
  const apps = appsOf(row.app)
  const [cpu0, idpCpu0] = [await apps.cpu(), await idp.cpu()]
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) {
    if (row.kind === 'e-mail link') await clickLink(row.app, browsers[i]!, links[i]!)
    else await oidcSignIn(row.app, browsers[i]!)
  }
  const ns = Number(process.hrtime.bigint() - start)
  const [idpCpu1, cpu1] = [await idp.cpu(), await apps.cpu()]
  await window?.after()
  return { ns, cpu: cpu1 - cpu0, idpCpu: idpCpu1 - idpCpu0 }
}

// Each row's first sign-in, checked: the session endpoint must name the user (this also creates the
// e-mail rows' user, so every timed e-mail sign-in is a returning user's).
for (const r of rows) {
  const browser = r.kind === 'returning browser' ? r.browser : new Browser()
  if (r.kind === 'e-mail link') await clickLink(r.app, browser, await emailLink(r.app, browser))
  else await oidcSignIn(r.app, browser)
  await expectSession(r.app, browser)
}
for (const r of rows) await signIns(r, WARMUP)

const dumped = { oidc: 0, email: 0 }
/** Under callgrind: the count of the row's app process on over its sign-ins only, dumped after them. */
async function counted(r: Row): Promise<void> {
  const name = r.app.includes('-email') ? 'email' : 'oidc'
  const pid = appProcesses[name].process.pid!
  await signIns(r, r.count, { before: () => callgrindControl(pid, '--instr=on'), after: () => callgrindControl(pid, '--dump') })
  await callgrindControl(pid, '--instr=off')
  const dump = join(dumps, `${name}.${++dumped[name]}`)
  r.instructions.push(dumpedInstructions(dump) / r.count)
  r.collector.push(collectorInstructions(dump) / r.count)
}
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[(i + round) % rows.length]!
    if (INSTRUCTIONS) {
      await counted(r)
      continue
    }
    const { ns, cpu, idpCpu } = await signIns(r, r.count)
    r.rates.push((r.count * 1e9) / ns)
    r.cpu.push(cpu / r.count)
    r.idpCpu.push(idpCpu / r.count)
  }
}

/**
 * Two parts of the OIDC rows' app CPU, each alone, the apps' CPU µs a request, median of rounds of
 * SINGLES requests one at a time: GET /csrf of Portcullis and Auth.js with a returning browser (its
 * CSRF cookie already set, as in the rows), and a bare Express answer in the same process (GET /plain
 * of the Portcullis app, before its handlers), what each of a sign-in's requests costs before any
 * library's work (Portcullis and Auth.js send 3 a sign-in to the app, Passport 2).
 */
const SINGLES = QUICK ? 50 : 200
const singles = { portcullis: '/api/auth/csrf', authjs: '/auth/csrf', plain: '/plain' } as const
const singleCpu: Partial<Record<keyof typeof singles, number[]>> = {}
if (!INSTRUCTIONS) {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, path] of Object.entries(singles) as [keyof typeof singles, string][]) {
      const app = name === 'authjs' ? 'authjs' : 'portcullis'
      const browser = rows.find((r) => r.app === app && r.kind === 'returning browser')!.browser
      const before = await appsOf(app).cpu()
      for (let i = 0; i < SINGLES; i++) await (await browser.request(`${urls[app]}${path}`)).arrayBuffer()
      ;(singleCpu[name] ??= []).push(((await appsOf(app).cpu()) - before) / SINGLES)
    }
  }
}
closing = true
for (const child of [...Object.values(appProcesses), idp]) child.process.send({ type: 'close' })
await Promise.all([...Object.values(appProcesses), idp].map((child) => child.exited))
if (INSTRUCTIONS && process.env.BENCH_CALLGRIND_KEEP !== '1') rmSync(dumps, { recursive: true, force: true })

/** The instruction total (`Ir`) of one callgrind dump. */
function dumpedInstructions(file: string): number {
  const dump = readFileSync(file, 'utf8')
  const events = /^events: (.+)$/m.exec(dump)?.[1]!.trim().split(' ')
  const totals = /^totals: ([\d ]+)$/m.exec(dump)?.[1]!.trim().split(' ').map(Number)
  const ir = events?.indexOf('Ir') ?? -1
  if (!totals || ir < 0) throw new Error(`callgrind's dump ${file} holds no instruction total`)
  return totals[ir]!
}

const load = loadavg()[0]!.toFixed(1)
const kinds: Kind[] = ['returning browser', 'new browser', 'e-mail link']
const portcullisOf = (r: Row) => rows.find((other) => other.kind === r.kind && other.app === (r.kind === 'e-mail link' ? 'portcullis-email' : 'portcullis'))!
const ratio = (value: number, of: number) => `${(value / of).toFixed(2)}`
const us = (value: number) => thousands(value)
const millions = (value: number) => `${(value / 1e6).toFixed(1)}M`
const withoutCollector = (r: Row) => r.instructions.map((count, i) => count - r.collector[i]!)

if (INSTRUCTIONS) {
  console.log(
    `\nNode ${process.version}, callgrind: the app process's instructions a sign-in, ${ROUNDS} windows a row of ${RETURNING} sign-ins each, the rows taking turns, after ${WARMUP} uncounted a row, medians (load average ${load})\n`,
  )
  printTable(
    ['sign-in', 'library', 'instructions/sign-in', 'spread', 'x Portcullis', 'without the collector', 'spread', 'x Portcullis'],
    rows.map((r) => {
      const p = portcullisOf(r)
      const without = withoutCollector(r)
      return [
        r.kind === 'e-mail link' ? 'e-mail link, returning user' : `OIDC, ${r.kind}`,
        r.label,
        thousands(median(r.instructions)),
        spread(r.instructions, millions),
        ratio(median(r.instructions), median(p.instructions)),
        thousands(median(without)),
        spread(without, millions),
        ratio(median(without), median(withoutCollector(p))),
      ]
    }),
  )
  const compared = [
    ['returning browser', 'portcullis', 'authjs', 'passport'],
    ['e-mail link', 'portcullis-email', 'authjs-email', undefined],
    ['e-mail link, both on the in-memory adapter', 'portcullis-email-memory', 'authjs-email', undefined],
  ] as const
  for (const [label, portcullisApp, authjs, passport] of compared) {
    const p = rows.find((r) => r.app === portcullisApp)!
    const others = rows.filter((r) => r.app === authjs || r.app === passport)
    const lowest = (of: (r: Row) => number[]) => (others.every((other) => median(of(p)) < median(of(other))) ? 'yes' : 'no')
    console.log(`${label}: Portcullis's instructions a sign-in the lowest of the libraries (target): ${lowest((r) => r.instructions)}, without the collector's: ${lowest(withoutCollector)}`)
  }
} else {
  console.log(
    `\nNode ${process.version}, one sign-in at a time as one user, the OIDC apps in one process, the e-mail apps in another, oidc-provider in a third, ${WARMUP} unmeasured a row, then ${ROUNDS} rounds (${RETURNING} returning, ${NEW_BROWSER} new-browser, ${EMAIL} e-mail sign-ins) the rows taking turns, medians (load average ${load})\n`,
  )
  for (const kind of kinds) {
    const of = rows.filter((r) => r.kind === kind)
    if (of.length === 0) continue
    printTable(
      [kind === 'e-mail link' ? 'e-mail link, returning user' : `OIDC, ${kind}`, 'sign-ins/s', 'spread', 'x Portcullis', 'app CPU µs/sign-in', 'spread', 'x Portcullis', 'provider CPU µs/sign-in'],
      of.map((r) => {
        const p = portcullisOf(r)
        return [r.label, median(r.rates).toFixed(1), spread(r.rates, (v) => v.toFixed(1)), ratio(median(r.rates), median(p.rates)), us(median(r.cpu)), spread(r.cpu, us), ratio(median(r.cpu), median(p.cpu)), us(median(r.idpCpu))]
      }),
    )
    console.log()
  }
  const find = (kind: Kind, app: AppName) => rows.find((r) => r.kind === kind && r.app === app)
  const targets = (label: string, kind: Kind, portcullisApp: AppName, authjsApp: AppName, passportApp?: AppName) => {
    const [p, a, pp] = [find(kind, portcullisApp)!, find(kind, authjsApp)!, passportApp ? find(kind, passportApp) : undefined]
    const rate = median(p.rates)
    const lowestCpu = [a, pp].every((other) => !other || median(p.cpu) < median(other.cpu))
    const passport = pp ? `, ${ratio(rate, median(pp.rates))}x Passport's (target ≥ 1)` : ''
    console.log(`${label}: Portcullis ${ratio(rate, median(a.rates))}x @auth/express's sign-ins/s (target ≥ 1.5)${passport}; its app CPU a sign-in the lowest: ${lowestCpu ? 'yes' : 'no'}`)
  }
  targets('returning browser', 'returning browser', 'portcullis', 'authjs', 'passport')
  targets('new browser', 'new browser', 'portcullis', 'authjs', 'passport')
  targets('e-mail link', 'e-mail link', 'portcullis-email', 'authjs-email')
  targets('e-mail link, both on the in-memory adapter', 'e-mail link', 'portcullis-email-memory', 'authjs-email')
  const single = (name: keyof typeof singles) => `${us(median(singleCpu[name]!))} µs`
  console.log(
    `Of an OIDC sign-in's app CPU, alone (medians of ${ROUNDS} rounds of ${SINGLES}, app CPU a request): GET /csrf, which Portcullis's and Auth.js's sign-in POST needs and Passport's GET does not, Portcullis ${single('portcullis')}, @auth/express ${single('authjs')}; a bare Express answer (GET /plain), ${single('plain')}, of which a sign-in sends 3 (Portcullis, Auth.js) or 2 (Passport)`,
  )
  console.log("CPU: process.cpuUsage() of the apps' process (all threads), the provider and the test browser in other processes; not instructions (BENCH_INSTRUCTIONS=1 counts those)")
}
console.log(`\nWall time: ${((performance.now() - started) / 1000).toFixed(0)} s`)
