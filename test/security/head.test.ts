/**
 * HEAD never changes state (RFC 9110 §9.2.1). Link checkers and mail scanners send HEAD to whatever
 * URL they see; a router that runs HEAD as GET would exchange an OAuth code, clear its check cookies,
 * use an e-mail token (test/email/link-binding.test.ts) or refresh a session on their behalf.
 */
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { SECRET, createTestApp, signInWithPassword } from '../support/flow.js'
import { mountApp, redirectOf, sessionOf, startSignIn } from '../support/oauth-app.js'
import { useOAuthRig } from '../support/oauth-rig.js'

describe('HEAD on the OAuth callback', () => {
  const rig = useOAuthRig((app) => [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [app.callbackUrl('corp')] }])

  it('answers without exchanging the code or clearing the checks: the GET that follows signs in', async () => {
    mountApp(rig.app, { secret: SECRET, providers: [OIDC({ id: 'corp', name: 'Corp', issuer: rig.idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true })] })
    const browser = new Browser()
    const back = await browser.authorize(await startSignIn(browser, rig.app.url, 'corp'), 'alice')
    const head = await browser.request(back.url, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.getSetCookie()).toEqual([])
    const callback = await browser.request(back.url)
    expect(redirectOf(callback)).toMatchObject({ error: null })
    expect((await sessionOf(browser, rig.app.url))?.user.id).toBe('alice')
  })
})

describe('HEAD on /session', () => {
  it('does not re-issue the session cookie even when it is due (updateAge 0); GET does', async () => {
    const { app } = createTestApp({ session: { strategy: 'jwt', updateAge: 0 } })
    const agent = request.agent(app)
    await signInWithPassword(agent)
    const head = await agent.head('/api/auth/session').expect(200)
    expect(head.headers['set-cookie']).toBeUndefined()
    const get = await agent.get('/api/auth/session').expect(200)
    expect(String(get.headers['set-cookie'])).toContain('authjs.session-token=')
  })

  it('serves the pages to HEAD as to GET', async () => {
    const { app } = createTestApp()
    for (const path of ['/api/auth/signin', '/api/auth/signout', '/api/auth/providers', '/api/auth/error', '/api/auth/verify-request']) {
      const head = await request(app).head(path)
      const get = await request(app).get(path)
      expect([path, head.status]).toEqual([path, get.status])
      expect(head.headers['content-type']).toBe(get.headers['content-type'])
    }
  })
})
