/**
 * A test page for `portcullis/client` in Chromium: it loads the built module from
 * `/portcullis/client/` (serve dist/client there) and records every session its
 * `onSessionChange` listener is given, for the tests to wait on.
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import type * as Client from 'portcullis/client'

/** The built module's folder, to serve at `/portcullis/client/`. */
export const CLIENT_DIR = join(fileURLToPath(new URL('../..', import.meta.url)), 'dist/client')

/** What the test page puts on `window`: the module, and every session its listener was given. */
export interface TestWindow {
  client: typeof Client
  sessions: (Client.Session | null)[]
}

/** The page's HTML. */
export const CLIENT_TEST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>client test</title></head>
<body><pre id="session">loading</pre>
<script type="module">
import * as client from '/portcullis/client/index.js'
window.sessions = []
client.onSessionChange((session) => {
  window.sessions.push(session)
  document.getElementById('session').textContent = JSON.stringify(session, null, 2)
})
window.client = client
</script></body></html>`

/** Opens the test page (served at `url`) and waits for the module and the listener's first report. */
export async function openTestPage(page: Page, url: string): Promise<void> {
  await page.goto(url)
  await page.waitForFunction(() => (window as unknown as TestWindow).sessions?.length > 0)
}

/** The session the tab's listener was given `count`th, once it has been given that many. */
export async function nthSession(page: Page, count: number): Promise<Client.Session | null> {
  await page.waitForFunction((n) => (window as unknown as TestWindow).sessions.length >= n, count)
  return page.evaluate((n) => (window as unknown as TestWindow).sessions[n - 1] ?? null, count)
}

/** How many sessions the tab's listener has been given. */
export function sessionCount(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as TestWindow).sessions.length)
}
