/**
 * The browser rig of the Chromium suites: one headless Chromium per suite (support/chromium.ts),
 * the contexts the suite opens in it, and, for suites that serve their app in-process, an HTTP
 * server on 127.0.0.1 reached as http://localhost:<port> (a secure context; the dev IdP runs on
 * 127.0.0.1, another site). The server listens before the app exists, because the app's callback
 * URL at the IdP needs the port: until `serve` is called it answers 503, so a test that runs too
 * early fails instead of hanging. Everything is closed after the suite.
 */
import { closeServer, listenApp } from './app-rig.js'
import { recordingLogger } from './logger.js'
import { afterAll, beforeAll } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { RequestListener, Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Express } from 'express'
import type { Knex } from 'knex'
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core'
import { createApp, type ExampleOptions } from '../../examples/express/app.js'
import { launchChromium } from './chromium.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Chromium of one suite. */
export interface ChromiumRig {
  readonly browser: Browser
  /** A new context (its own cookies and storage), closed with the rig. */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>
}

/** Chromium and the app server of one suite. */
export interface BrowserRig extends ChromiumRig {
  /** `http://localhost:<port>`. */
  readonly origin: string
  /** Serves `app` on the rig's port from now on. */
  serve(app: RequestListener): void
}

/** Builds the package when dist/client is missing: the browser loads the built module (`npm test` builds first). */
export function ensureClientBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/client/index.js'))) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' })
}

function started<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the browser rig's ${what} is used before its beforeAll has run`)
  return value
}

/** Launches Chromium before the suite and closes it (with every context) after. Call at the top of a `describeWithChromium` body. */
export function useChromium(): ChromiumRig {
  let browser: Browser | undefined
  beforeAll(async () => {
    browser = await launchChromium()
  })
  afterAll(async () => {
    await browser?.close()
  })
  return {
    get browser() {
      return started(browser, 'browser')
    },
    newContext: (options) => started(browser, 'browser').newContext(options),
  }
}

/**
 * `useChromium` and an app server listening on an ephemeral port before the suite (the suite's own
 * `beforeAll`, declared after this call, starts its app and calls `serve`); both closed after.
 */
export function useBrowserRig(): BrowserRig {
  const chromium = useChromium()
  let server: Server | undefined
  let origin: string | undefined
  let app: RequestListener = (_req, res) => void res.writeHead(503).end('the browser rig has no app yet')
  beforeAll(async () => {
    ;({ server, origin } = await listenLocal((req, res) => app(req, res)))
  })
  afterAll(async () => {
    if (server) await closeLocal(server)
  })
  return {
    get browser() {
      return chromium.browser
    },
    newContext: (options) => chromium.newContext(options),
    get origin() {
      return started(origin, 'origin')
    },
    serve: (next) => void (app = next),
  }
}

/**
 * An HTTP server for `listener` on an ephemeral port of 127.0.0.1, and its origin
 * (`http://localhost:<port>`). It never closes an idle keep-alive connection itself: Playwright's
 * `context.request` sends a request on an idle connection just as the server's keep-alive timeout
 * (5 s, on Node 24 plus a 1 s buffer) closes it, and gets ECONNRESET (a password test failed so in CI on
 * Node 24; 33 of 200 requests sent 5,990-6,009 ms after the one before did, by a scratch script).
 * `closeLocal` closes the connections left open.
 */
export async function listenLocal(listener: RequestListener): Promise<{ server: Server; origin: string }> {
  const { server } = await listenApp(listener)
  server.keepAliveTimeout = 0
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` }
}

/** Closes a server of `listenLocal` with every connection it has. */
export const closeLocal = closeServer

/**
 * examples/express (createApp, an in-memory SQLite database) served by `rig` before the suite, its
 * database closed after. `options` is read in the rig's own `beforeAll`, declared by this call: call
 * it after the `beforeAll` that starts what the options name (the dev IdP, the SMTP server).
 * `wrap` puts routes of the suite's own in front of the example app.
 */
export function serveExpressExample(rig: BrowserRig, options: () => Omit<ExampleOptions, 'databaseFile'>, wrap: (app: Express) => RequestListener = (app) => app): void {
  let db: Knex | undefined
  beforeAll(async () => {
    process.env.AUTH_SECRET ??= 'test-secret-for-the-express-example-0123456789'
    const created = await createApp({ databaseFile: ':memory:', logger: recordingLogger(), ...options() })
    db = created.db
    rig.serve(wrap(created.app))
  })
  afterAll(async () => {
    await db?.destroy()
  })
}
