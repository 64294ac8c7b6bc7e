/**
 * Runs examples/authjs-interop as its README starts it (`tsx examples/authjs-interop/server.ts`):
 * the real Auth.js (`@auth/core`) standing for a Next.js front end, and the Express API with
 * Portcullis, sharing AUTH_SECRET. A session cookie set by either is read by the other.
 *
 * The cookie jar of test/support/browser.ts keeps cookies per host and port; a browser sends a
 * host's cookies to every port (RFC 6265 §8.5), so the test hands the cookie over as a browser would.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { fileURLToPath } from 'node:url'
import { Browser } from '../support/browser.js'
import { startExampleProcess, type ExampleProcess } from '../support/example-process.js'
import { examplePort } from '../support/ports.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const COOKIE = 'authjs.session-token'
const frontendPort = examplePort(2)
const apiPort = frontendPort + 1
const frontend = `http://localhost:${frontendPort}`
const api = `http://localhost:${apiPort}`

let server: ExampleProcess

beforeAll(async () => {
  server = await startExampleProcess(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/authjs-interop/server.ts'], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '', FRONTEND_PORT: String(frontendPort), API_PORT: String(apiPort), AUTH_SECRET: 'test-secret-for-the-interop-example-0123456789' },
    ready: 'API (Portcullis) running at',
    name: 'the example',
  })
})

afterAll(async () => {
  await server?.stop()
})

/** Signs in with the demo credentials at `origin`'s `/api/auth` (Auth.js's routes or Portcullis's: the same). */
async function signIn(browser: Browser, origin: string, password = 'lovelace'): Promise<Response> {
  const { csrfToken } = (await (await browser.request(`${origin}/api/auth/csrf`)).json()) as { csrfToken: string }
  return browser.request(`${origin}/api/auth/callback/credentials`, {
    body: new URLSearchParams({ csrfToken, username: 'ada', password, callbackUrl: `${origin}/` }),
  })
}

/** Gives `to` the session cookie `from` set, as a browser sends a host's cookies to all its ports. */
function shareSessionCookie(browser: Browser, from: string, to: string): string {
  const value = browser.cookie(from, COOKIE)
  expect(value).toBeDefined()
  browser.setCookie(to, COOKIE, value!)
  return value!
}

describe('examples/authjs-interop', () => {
  it('starts both servers with the command of its README', () => {
    expect(server.output).toContain(`Front end (Auth.js) running at ${frontend}`)
    expect(server.output).toContain(`API (Portcullis) running at ${api}`)
  })

  it('reads on the API (Portcullis) the session that the front end (Auth.js) set', async () => {
    const browser = new Browser()
    expect((await browser.request(`${api}/api/me`)).status).toBe(401)
    const signedIn = await signIn(browser, frontend)
    expect(signedIn.headers.get('location')).toBe(`${frontend}/`)
    expect(await (await browser.request(`${frontend}/`)).text()).toBe('Front end (Auth.js): signed in as Ada Lovelace <ada@example.com>\n')

    shareSessionCookie(browser, frontend, api)
    const me = await browser.request(`${api}/api/me`)
    expect(me.status).toBe(200)
    expect(await me.json()).toEqual({ user: { id: 'user-ada', name: 'Ada Lovelace', email: 'ada@example.com' }, expires: expect.any(String) })
  })

  it('reads on the front end (Auth.js) the session that the API (Portcullis) set', async () => {
    const browser = new Browser()
    expect(await (await browser.request(`${frontend}/`)).text()).toBe('Front end (Auth.js): not signed in\n')
    expect((await signIn(browser, api, 'wrong')).headers.get('location')).toContain('error=CredentialsSignin')
    expect(browser.cookie(api, COOKIE)).toBeUndefined()

    const signedIn = await signIn(browser, api)
    expect(signedIn.headers.get('location')).toBe(`${api}/`)
    shareSessionCookie(browser, api, frontend)
    const session = (await (await browser.request(`${frontend}/api/auth/session`)).json()) as { user: unknown; expires: string }
    expect(session.user).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' })
    expect(await (await browser.request(`${frontend}/`)).text()).toBe('Front end (Auth.js): signed in as Ada Lovelace <ada@example.com>\n')
  })

  it('accepts no altered cookie: a token whose tag fails is no session on either side', async () => {
    // Signed in at the API, then the first character of the token's JWE tag (its fifth part) changed.
    const browser = new Browser()
    await signIn(browser, api)
    const parts = browser.cookie(api, COOKIE)!.split('.')
    expect(parts).toHaveLength(5)
    parts[4] = (parts[4]!.startsWith('A') ? 'B' : 'A') + parts[4]!.slice(1)
    const tampered = parts.join('.')
    browser.setCookie(api, COOKIE, tampered)
    browser.setCookie(frontend, COOKIE, tampered)
    expect((await browser.request(`${api}/api/me`)).status).toBe(401)
    expect(await (await browser.request(`${frontend}/`)).text()).toBe('Front end (Auth.js): not signed in\n')
  })
})
