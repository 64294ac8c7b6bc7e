/**
 * A plain OAuth 2 provider's profile comes from its userinfo endpoint, asked for JSON with the access
 * token. An answer that is not a success, or not a JSON object, fails the sign-in with
 * `userinfo_failed` (never a session made of nothing). The IdP (oidc-provider) runs the authorization
 * and the token exchange; the userinfo endpoint is a server of the test's, answering as each test says.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import OAuth from 'portcullis/providers/oauth'
import { Browser } from '../support/browser.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, redirectOf, sessionOf, signInWith, type Listener } from '../support/oauth-app.js'
import { recordingLogger } from '../support/logger.js'

let idp: TestIdp
let app: Listener
let api: Listener
/** What the userinfo endpoint answers next, and the headers of the requests it had. */
let answer: { status: number; type: string; body: string }
const requests: IncomingHttpHeaders[] = []
const logger = recordingLogger()

beforeAll(async () => {
  app = await listen()
  idp = await startIdp({ clients: [{ client_id: 'plain', client_secret: 'plain-secret', redirect_uris: [app.callbackUrl('acme')] }] })
  api = await listen()
  api.mount((req, res) => {
    requests.push(req.headers)
    res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body)
  })
  mountApp(app, {
    providers: [
      OAuth({
        id: 'acme',
        name: 'Acme',
        clientId: 'plain',
        clientSecret: 'plain-secret',
        authorization: { url: idp.authorizationEndpoint, params: { scope: 'read:user' } },
        token: idp.tokenEndpoint,
        userinfo: `${api.url}/user`,
        profile: (me) => ({ id: String(me.id), name: typeof me.name === 'string' ? me.name : null }),
        dangerouslyAllowInsecureRequests: true,
      }),
    ],
    logger,
  })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

const json = (body: unknown, status = 200) => ({ status, type: 'application/json', body: JSON.stringify(body) })

describe("a plain OAuth 2 provider's userinfo endpoint", () => {
  it('is asked for JSON with the access token as a Bearer token; its object is the profile', async () => {
    answer = json({ id: 42, name: 'Alice From The API' })
    requests.length = 0
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, app.url, 'acme')).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toMatchObject({ id: '42', name: 'Alice From The API' })
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ accept: 'application/json', authorization: expect.stringMatching(/^Bearer \S+$/) })
  })

  const notAnObject = 'The "acme" userinfo endpoint did not answer a JSON object.'
  it.each([
    ['an error status', json({ id: 42 }, 500), 'The "acme" userinfo endpoint answered 500.'],
    ['a JSON array', json([{ id: 42 }]), notAnObject],
    ['JSON null', json(null), notAnObject],
    ['a JSON string', json('alice'), notAnObject],
    ['a JSON number', json(42), notAnObject],
    ['no JSON at all', { status: 200, type: 'text/html', body: '<h1>Welcome</h1>' }, notAnObject],
  ])('fails the sign-in with userinfo_failed when it answers %s: no session, and the log says what it answered', async (_name, response, logged) => {
    answer = response
    logger.clear()
    const browser = new Browser()
    const callback = redirectOf(await signInWith(browser, app.url, 'acme'))
    expect([callback.error, callback.code]).toEqual(['OAuthCallbackError', 'userinfo_failed'])
    expect(await sessionOf(browser, app.url)).toBeNull()
    expect(JSON.stringify(logger.lines)).toContain(JSON.stringify(logged).slice(1, -1))
  })
})
