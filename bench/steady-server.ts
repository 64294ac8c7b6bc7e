/**
 * What the instruction count (bench/instructions.ts) and its timed twin (bench/steady-cpu.ts) share:
 * their rows, and a server of the HTTP bench's Portcullis app (bench/instructions-server.ts) brought
 * to its steady state by a warm-up from autocannon (10 connections, the row's cookies in turn).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import autocannon from 'autocannon'
import { RETURNING_COOKIES } from './callgrind.js'
import { answerAuthRouteFirst, apiKeyHeaders, bearerHeaders, HOST, organizationSessionCookies } from './http-sessions.js'
import { thousands } from './table.js'

export interface SteadyRow {
  name: string
  path: string
  /** The cookies sent in turn: each once (`cold`), or the first `WARM_COOKIES` over and over (`warm`). */
  kind: 'cold' | 'warm'
  /**
   * A row whose requests carry a credential in the Authorization header instead of a cookie, on the HTTP
   * bench's app of that scenario (bench/http-apps.ts): `WARM_COOKIES` access tokens or API keys in turn.
   */
  credential?: 'bearer' | 'api-key-cached'
  /** A row of the `organization` app (bench/http-apps.ts): cookies whose tokens carry an active organization. */
  organization?: true
}

const WARM_COOKIES = 1_000

/** The cookies (or Authorization headers) `row` sends in turn, of `cold` (distinct cookies, as many as its requests). */
export function rowCookies(row: SteadyRow, cold: readonly string[]): readonly string[] {
  if (row.organization) return organizationSessionCookies(0, WARM_COOKIES)
  if (row.credential === 'bearer') return bearerHeaders(WARM_COOKIES)
  if (row.credential === 'api-key-cached') return apiKeyHeaders(WARM_COOKIES)
  return row.kind === 'cold' ? cold : cold.slice(0, WARM_COOKIES)
}

/**
 * The rows of the read paths that take a credential instead of a cookie (issue 68: each within 1.053× the route it
 * guards, as the session read): an access token of the authorization server, and an API key from the opened-key cache,
 * both on `/me`, against the plain route of the same app.
 */
export function credentialRows(): SteadyRow[] {
  return [
    { name: 'plain route, the access token app (no read)', path: '/plain', kind: 'warm', credential: 'bearer' },
    { name: `Portcullis OAuth access token, warm (${thousands(WARM_COOKIES)} tokens)`, path: '/me', kind: 'warm', credential: 'bearer' },
    { name: 'plain route, the API key app (no read)', path: '/plain', kind: 'warm', credential: 'api-key-cached' },
    { name: `Portcullis API key, opened-key cache (${thousands(WARM_COOKIES)} keys)`, path: '/me', kind: 'warm', credential: 'api-key-cached' },
  ]
}

/**
 * The rows of the permission check with an active organization (issue 67, and 68's rule: within 1.053× the route it
 * guards): `/project` (`/me` behind `requirePermission`) against `/me` of the same app, warm.
 */
export function organizationRows(): SteadyRow[] {
  return [
    { name: `Portcullis JWT, warm, the organization app (${thousands(WARM_COOKIES)} cookies)`, path: '/me', kind: 'warm', organization: true },
    { name: 'requirePermission, active organization, warm (the same cookies)', path: '/project', kind: 'warm', organization: true },
  ]
}

/** The server arguments after the script for `row`: its scenario when it has one (bench/instructions-server.ts). */
export function serverArgs(row: SteadyRow): string[] {
  if (row.organization) return ['organization', '0']
  return row.credential ? [row.credential, String(WARM_COOKIES)] : []
}

/** The rows, the cold one named with how many cookies it sends (`coldCookies`). */
export function steadyRows(coldCookies: number): SteadyRow[] {
  return [
    { name: 'plain route (no session read)', path: '/plain', kind: 'cold' },
    { name: 'plain route with an await (no session read)', path: '/plain-async', kind: 'cold' },
    { name: 'floor (bare decrypt inline, cold cookies)', path: '/floor', kind: 'cold' },
    { name: `Portcullis JWT, cold (${thousands(coldCookies)} cookies, each once)`, path: '/me', kind: 'cold' },
    { name: `Portcullis JWT, warm (${thousands(WARM_COOKIES)} cookies)`, path: '/me', kind: 'warm' },
    { name: `Portcullis GET /api/auth/session, warm (${thousands(WARM_COOKIES)} cookies)`, path: '/api/auth/session', kind: 'warm' },
  ]
}

/** A port free on loopback now (a server slow to start, as under valgrind, listens on it later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject)
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

/** `amount` requests of `row` from autocannon, the cookies taken in turn from the `from`th. */
export async function sendRequests(port: number, row: SteadyRow, cookies: readonly string[], from: number, amount: number): Promise<void> {
  let next = from
  const result = await autocannon({
    url: `http://${HOST}:${port}${row.path}`,
    connections: 10,
    amount,
    // A bound on a hang: under valgrind on a loaded machine an answer took over autocannon's 10 s default.
    timeout: 120,
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, [row.credential ? 'authorization' : 'cookie']: cookies[next++ % cookies.length]! } }) }],
  })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${row.name}: ${result.non2xx} answers not 2xx, ${result.errors} errors`)
}

/**
 * Runs `command` with `args` and the port, waits for the server's `ready`, and warms it up: GET
 * /api/auth/session once (bench/http-sessions.ts's answerAuthRouteFirst says why), for the cold row
 * its first RETURNING_COOKIES cookies (bench/callgrind.ts says why), then `warmup` requests.
 *
 * @param failure What to add to the error when the server exits before it listens.
 * @returns The server's process and its exit; the caller stops it.
 */
export async function warmServer(
  command: string,
  args: readonly string[],
  row: SteadyRow,
  cookies: readonly string[],
  warmup: number,
  failure = '',
): Promise<{ port: number; child: ChildProcess; exited: Promise<number | null> }> {
  const port = await freePort()
  const child = spawn(command, [...args, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve())
      void exited.then((code) => reject(new Error(`instructions-server.ts exited (${code}) before it listened${failure}`)))
    })
    await answerAuthRouteFirst(`http://${HOST}:${port}`, row.credential ? '' : cookies[0]!)
    if (row.kind === 'cold') await sendRequests(port, row, cookies, 0, Math.min(RETURNING_COOKIES, warmup))
    await sendRequests(port, row, cookies, 0, warmup)
  } catch (error) {
    child.kill()
    await exited
    throw error
  }
  return { port, child, exited }
}
