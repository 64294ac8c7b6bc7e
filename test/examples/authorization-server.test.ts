/**
 * Runs examples/authorization-server as its README says, so the example cannot rot (STYLE.md, Tests):
 * the server, then each caller's program against it: the service (client credentials), the CLI (the
 * device flow, its code entered on the server's page by a browser signed in as ada), the desktop app
 * (PKCE and a loopback redirect, the browser sent back to it), and the second web app (signs ada in
 * with the first).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Browser } from '../support/browser.js'
import { startExampleProcess, type ExampleProcess } from '../support/example-process.js'
import { examplePort } from '../support/ports.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const TSX = 'node_modules/tsx/dist/cli.mjs'

describe('examples/authorization-server', () => {
  const port = examplePort(2)
  const server = `http://localhost:${port}`
  const env = { ...process.env, NODE_OPTIONS: '', PORT: String(port), SECOND_APP_PORT: String(port + 1), SERVER_URL: server, AUTH_SECRET: 'test-secret-for-the-authorization-server-example' }
  let dir: string
  let first: ExampleProcess
  const running: ExampleProcess[] = []
  const browser = new Browser()

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-as-example-'))
    first = await startExampleProcess(process.execPath, [TSX, 'examples/authorization-server/server.ts'], { cwd: root, env: { ...env, DATABASE_FILE: join(dir, 'example.sqlite') }, ready: 'running at', name: 'server.ts' })
    running.push(first)
    const csrf = ((await (await browser.request(`${server}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
    const signedIn = await browser.request(`${server}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: csrf, username: 'ada', password: 'lovelace' }) })
    expect(signedIn.status).toBe(302)
  }, 30_000)
  afterAll(async () => {
    for (const process of running) await process.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  /** Runs a caller's program to its end: its exit code and output. */
  async function run(file: string): Promise<{ code: number | null; output: string }> {
    const child = spawn(process.execPath, [TSX, `examples/authorization-server/${file}`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const [code] = (await once(child, 'exit')) as [number | null]
    return { code, output }
  }

  /** Waits for a started program's end. */
  async function ended(started: ExampleProcess): Promise<number | null> {
    if (started.child.exitCode !== null) return started.child.exitCode
    const [code] = (await once(started.child, 'exit')) as [number | null]
    return code
  }

  /** Presses Allow on the consent page `page` and follows the server's redirects. */
  async function allow(page: Response): Promise<Response> {
    const form = await browser.formOf(page)
    form.body.set('decision', 'allow')
    return browser.follow(await browser.navigate(form), server)
  }

  it('service.ts gets its own token by client credentials and calls the API', async () => {
    const { code, output } = await run('service.ts')
    expect([code, output]).toEqual([0, expect.stringContaining('GET /api/reports: 200')])
    expect(output).toContain('"client":"report-job"')
  }, 30_000)

  it('cli-device.ts signs ada in with the device flow', async () => {
    const cli = await startExampleProcess(process.execPath, [TSX, 'examples/authorization-server/cli-device.ts'], { cwd: root, env, ready: 'Waiting for you', name: 'cli-device.ts' })
    running.push(cli)
    const [, url, userCode] = /open (\S+) in a browser and enter the code (\S+)/.exec(cli.output)!
    const entered = await browser.submitForm(await browser.request(url!), { user_code: userCode! })
    const consent = await browser.follow(await browser.submitForm(entered), server)
    const done = await allow(consent)
    expect(await done.text()).toContain('Device connected')
    expect(await ended(cli)).toBe(0)
    expect(cli.output).toContain('GET /api/reports: 200')
    expect(cli.output).toContain('"user":"ada@example.com"')
  }, 30_000)

  it('native-app.ts signs ada in through the browser and its loopback redirect, then refreshes', async () => {
    const app = await startExampleProcess(process.execPath, [TSX, 'examples/authorization-server/native-app.ts'], { cwd: root, env, ready: 'to sign in:', name: 'native-app.ts' })
    running.push(app)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const url = /(http:\/\/\S+\/oauth\/auth\?\S+)/.exec(app.output)![1]!
    const consent = await browser.follow(await browser.request(url), server)
    const back = await allow(consent)
    const loopback = back.headers.get('location')!
    expect(loopback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/)
    expect(await (await browser.request(loopback)).text()).toContain('Signed in to Acme Desktop')
    expect(await ended(app)).toBe(0)
    expect(app.output).toContain('Refreshed: a new access token and a new refresh token')
  }, 30_000)

  it('second-app.ts signs ada in with the first app (first party: no consent page)', async () => {
    const second = await startExampleProcess(process.execPath, [TSX, 'examples/authorization-server/second-app.ts'], { cwd: root, env, ready: 'running at', name: 'second-app.ts' })
    running.push(second)
    const origin = `http://127.0.0.1:${port + 1}`
    const csrf = ((await (await browser.request(`${origin}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
    const start = await browser.request(`${origin}/api/auth/signin/acme`, { body: new URLSearchParams({ csrfToken: csrf, callbackUrl: `${origin}/api/me` }) })
    const atFirst = await browser.follow(await browser.request(start.headers.get('location')!), server)
    const callback = atFirst.headers.get('location')!
    expect(callback.startsWith(`${origin}/api/auth/callback/acme?`)).toBe(true)
    const me = await browser.follow(await browser.request(callback), origin)
    expect(((await me.json()) as { email?: string }).email).toBe('ada@example.com')
  }, 30_000)
})
