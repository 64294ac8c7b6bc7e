/**
 * The passkeys' server-side API and routes without a browser: `listPasskeys(req)`,
 * `removePasskey(req, id, { csrfToken })` and POST /passkeys/remove on stored passkeys (their
 * crypto is the browser suite's business), the last way to sign in refused as `unlinkAccount`
 * refuses it, the CSRF check, the passkey script's caching, and the JSON answers of
 * GET /webauthn-options (rate limit included).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import express from 'express'
import type { Knex } from 'knex'
import request from 'supertest'
import { AccountUnlinkError, MissingCSRFError, type AdapterAuthenticator, type PasskeyInfo } from 'portcullis'
import OIDC from 'portcullis/providers/oidc'
import { passkeyApp, passkeyDatabase, type PasskeyApp } from './passkey-app.js'

let db: Knex
let app: PasskeyApp
const removed: { userId: string; passkey: PasskeyInfo }[] = []
let users = 0

beforeAll(async () => {
  db = await passkeyDatabase()
  // corp: an OAuth provider a user's account may be at (never signed in with here).
  const corp = OIDC({ id: 'corp', name: 'Corp', issuer: 'https://corp.example', clientId: 'corp', clientSecret: 'corp-secret' })
  app = passkeyApp(db, 'https://app.example.com', { otherProviders: [corp], config: { events: { passkeyRemoved: (message) => void removed.push(message) }, rateLimit: { ip: { attempts: 3 } } } })
  app.app.use(express.urlencoded({ extended: false }))
  app.app.get('/passkeys', async (req, res) => void res.json(await app.listPasskeys(req)))
  app.app.post('/passkeys/:id/delete', async (req, res, next) => {
    try {
      res.json(await app.removePasskey(req, req.params.id, { csrfToken: req.body.csrfToken }))
    } catch (error) {
      if (error instanceof AccountUnlinkError) return void res.status(409).json({ code: error.code })
      if (error instanceof MissingCSRFError) return void res.status(403).json({ code: 'csrf' })
      next(error)
    }
  })
})
afterAll(() => db?.destroy())

/** A user with `count` stored passkeys (each with its `webauthn` account, as a registration makes them). */
async function userWithPasskeys(count: number): Promise<{ email: string; userId: string; passkeys: AdapterAuthenticator[] }> {
  const email = `api${++users}@example.com`
  const user = await app.adapter.createUser({ email, name: null, emailVerified: null })
  const passkeys: AdapterAuthenticator[] = []
  for (let i = 0; i < count; i++) {
    const credentialID = randomBytes(32).toString('base64')
    await app.adapter.linkAccount({ userId: user.id, type: 'webauthn', provider: 'passkey', providerAccountId: credentialID })
    passkeys.push(
      await app.adapter.createAuthenticator({
        credentialID,
        userId: user.id,
        providerAccountId: credentialID,
        credentialPublicKey: randomBytes(77).toString('base64'),
        counter: 0,
        credentialDeviceType: i === 0 ? 'multiDevice' : 'singleDevice',
        credentialBackedUp: i === 0,
        transports: i === 0 ? 'internal,hybrid' : null,
      }),
    )
  }
  return { email, userId: user.id, passkeys }
}

/** An agent signed in as `email` (the credentials provider), and its CSRF token. */
async function signedIn(email: string): Promise<{ agent: request.Agent; csrfToken: string }> {
  const agent = request.agent(app.app)
  const before = (await agent.get('/api/auth/csrf')).body as { csrfToken: string }
  await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken: before.csrfToken, email }).expect(302)
  // A sign-in rotates the CSRF token.
  const { csrfToken } = (await agent.get('/api/auth/csrf')).body as { csrfToken: string }
  return { agent, csrfToken }
}

describe('listPasskeys(req)', () => {
  it('lists the signed-in user\'s passkeys without their keys; [] when signed out', async () => {
    const { email, passkeys } = await userWithPasskeys(2)
    await userWithPasskeys(1) // someone else's
    const { agent } = await signedIn(email)
    const listed = (await agent.get('/passkeys').expect(200)).body as PasskeyInfo[]
    expect(listed.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      passkeys
        .map((passkey, i) => ({ id: passkey.credentialID, deviceType: i === 0 ? 'multiDevice' : 'singleDevice', backedUp: i === 0, transports: i === 0 ? ['internal', 'hybrid'] : [] }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    )
    expect(JSON.stringify(listed)).not.toContain(passkeys[0]!.credentialPublicKey)
    expect((await request(app.app).get('/passkeys').expect(200)).body).toEqual([])
  })
})

describe('removePasskey(req, id, { csrfToken })', () => {
  it('removes one passkey with its account, fires passkeyRemoved, and refuses the last one (the user\'s only way in)', async () => {
    const { email, userId, passkeys } = await userWithPasskeys(2)
    const { agent, csrfToken } = await signedIn(email)
    const [first, second] = passkeys as [AdapterAuthenticator, AdapterAuthenticator]
    const answer = await agent.post(`/passkeys/${encodeURIComponent(first.credentialID)}/delete`).type('form').send({ csrfToken }).expect(200)
    expect(answer.body).toMatchObject({ id: first.credentialID })
    expect(await app.adapter.getAuthenticator(first.credentialID)).toBeNull()
    expect(await app.adapter.getAccount(first.credentialID, 'passkey')).toBeNull()
    expect(removed.at(-1)).toEqual({ userId, passkey: expect.objectContaining({ id: first.credentialID }) })

    expect((await agent.post(`/passkeys/${encodeURIComponent(second.credentialID)}/delete`).type('form').send({ csrfToken }).expect(409)).body).toEqual({ code: 'last_sign_in_method' })
    expect(await app.adapter.getAuthenticator(second.credentialID)).not.toBeNull()
  })

  it('removes the last passkey when another way to sign in is linked (an OAuth account), not when its provider is no longer configured', async () => {
    const { email, userId, passkeys } = await userWithPasskeys(1)
    await app.adapter.linkAccount({ userId, type: 'oidc', provider: 'corp', providerAccountId: `sub-${userId}` })
    const { agent, csrfToken } = await signedIn(email)
    await agent.post(`/passkeys/${encodeURIComponent(passkeys[0]!.credentialID)}/delete`).type('form').send({ csrfToken }).expect(200)
    expect(await app.adapter.listAuthenticatorsByUserId(userId)).toEqual([])

    const retired = await userWithPasskeys(1)
    await app.adapter.linkAccount({ userId: retired.userId, type: 'oidc', provider: 'retired', providerAccountId: `sub-${retired.userId}` })
    const signedInRetired = await signedIn(retired.email)
    const refused = await signedInRetired.agent.post(`/passkeys/${encodeURIComponent(retired.passkeys[0]!.credentialID)}/delete`).type('form').send({ csrfToken: signedInRetired.csrfToken })
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 409, body: { code: 'last_sign_in_method' } })
    expect(await app.adapter.listAuthenticatorsByUserId(retired.userId)).toHaveLength(1)
  })

  it('of two concurrent removals of a user\'s last two passkeys, one is refused', async () => {
    const { email, userId, passkeys } = await userWithPasskeys(2)
    const { agent, csrfToken } = await signedIn(email)
    const answers = await Promise.all(passkeys.map((passkey) => agent.post(`/passkeys/${encodeURIComponent(passkey.credentialID)}/delete`).type('form').send({ csrfToken })))
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409])
    expect(await app.adapter.listAuthenticatorsByUserId(userId)).toHaveLength(1)
  })

  it('refuses another user\'s passkey, and a call without the CSRF token', async () => {
    const mine = await userWithPasskeys(2)
    const theirs = await userWithPasskeys(2)
    const { agent, csrfToken } = await signedIn(mine.email)
    const target = encodeURIComponent(theirs.passkeys[0]!.credentialID)
    expect((await agent.post(`/passkeys/${target}/delete`).type('form').send({ csrfToken }).expect(409)).body).toEqual({ code: 'not_linked' })
    expect((await agent.post(`/passkeys/${encodeURIComponent(mine.passkeys[0]!.credentialID)}/delete`).type('form').send({}).expect(403)).body).toEqual({ code: 'csrf' })
    expect(await app.adapter.listAuthenticatorsByUserId(theirs.userId)).toHaveLength(2)
    expect(await app.adapter.listAuthenticatorsByUserId(mine.userId)).toHaveLength(2)
  })
})

describe('unlinkAccount(\'passkey\', { providerAccountId })', () => {
  it('removes the passkey with its account, as removePasskey does: it is no longer listed, and passkeyRemoved fires', async () => {
    const { email, userId, passkeys } = await userWithPasskeys(2)
    const { agent, csrfToken } = await signedIn(email)
    const [first, second] = passkeys as [AdapterAuthenticator, AdapterAuthenticator]
    app.app.post('/unlink-passkey', app.auth(async (req, res) => void res.json(await app.unlinkAccount('passkey', { providerAccountId: req.body.id, csrfToken: req.body.csrfToken }))))
    expect((await agent.post('/unlink-passkey').type('form').send({ id: first.credentialID, csrfToken }).expect(200)).body).toMatchObject({ providerAccountId: first.credentialID })
    expect(await app.adapter.getAuthenticator(first.credentialID)).toBeNull()
    expect((await agent.get('/passkeys').expect(200)).body).toEqual([expect.objectContaining({ id: second.credentialID })])
    expect(removed.at(-1)).toEqual({ userId, passkey: expect.objectContaining({ id: first.credentialID }) })
  })
})

describe('POST /api/auth/passkeys/remove', () => {
  it('removes and goes back to the passkeys page; the last one is refused with the page\'s error; a missing CSRF token is refused', async () => {
    const { email, userId, passkeys } = await userWithPasskeys(2)
    const { agent, csrfToken } = await signedIn(email)
    const remove = (id: string, token = csrfToken) => agent.post('/api/auth/passkeys/remove').type('form').send({ csrfToken: token, id })
    expect((await remove(passkeys[0]!.credentialID)).headers.location).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/auth\/passkeys$/)
    expect((await remove(passkeys[1]!.credentialID)).headers.location).toMatch(/\/api\/auth\/passkeys\?error=last_sign_in_method$/)
    expect((await remove(passkeys[1]!.credentialID, 'forged')).headers.location).toMatch(/\/api\/auth\/signin\?error=MissingCSRF/)
    expect(await app.adapter.listAuthenticatorsByUserId(userId)).toHaveLength(1)

    const page = await agent.get('/api/auth/passkeys?error=last_sign_in_method').expect(200)
    expect(page.text).toContain('This passkey is your last way to sign in.')
    // The one script, by its full URL (not 'self'), and same-origin fetch; still no inline script.
    expect(page.headers['content-security-policy']).toMatch(
      /^default-src 'none'; style-src 'unsafe-inline'; img-src 'self' https: http: data:; frame-ancestors 'none'; base-uri 'none'; script-src http:\/\/127\.0\.0\.1:\d+\/api\/auth\/webauthn\.js; connect-src 'self'$/,
    )
  })

  it('sends a signed-out visitor of the passkeys page to sign in, back to the page afterwards', async () => {
    const answer = await request(app.app).get('/api/auth/passkeys').expect(302)
    expect(answer.headers.location).toMatch(/\/api\/auth\/signin\?callbackUrl=.*%2Fapi%2Fauth%2Fpasskeys/)
  })
})

describe('GET /api/auth/webauthn.js and the pages that load it', () => {
  it('serves the script, cached for a year at its current version only, and the sign-in page loads that version with its integrity', async () => {
    const signIn = await request(app.app).get('/api/auth/signin').expect(200)
    const [, src, integrity] = /<script src="([^"]+)" integrity="([^"]+)" defer><\/script>/.exec(signIn.text) ?? []
    expect(src).toMatch(/^\/api\/auth\/webauthn\.js\?v=[0-9a-f]{16}$/)
    expect(signIn.headers['content-security-policy']).toContain('; script-src ')
    expect(signIn.headers['content-security-policy']).not.toContain("'unsafe-inline'; script")
    expect(signIn.text).not.toMatch(/<script>/)

    const script = await request(app.app).get(src!).expect(200)
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable')
    const { createHash } = await import('node:crypto')
    expect(`sha256-${createHash('sha256').update(script.text).digest('base64')}`).toBe(integrity)
    expect((await request(app.app).get('/api/auth/webauthn.js?v=old').expect(200)).headers['cache-control']).toBe('public, max-age=300')
  })
})

describe('GET /api/auth/webauthn-options/:provider', () => {
  it('answers a bad action, an unknown provider and a non-passkey provider with 400 JSON', async () => {
    expect((await request(app.app).get('/api/auth/webauthn-options/passkey?action=steal').expect(400)).body).toMatchObject({ error: 'InvalidRequest' })
    expect((await request(app.app).get('/api/auth/webauthn-options/nope').expect(400)).body).toMatchObject({ error: 'UnknownAction' })
    expect((await request(app.app).get('/api/auth/webauthn-options/credentials').expect(400)).body).toMatchObject({ error: 'UnknownAction' })
  })

  it('counts the challenges a client asks for (they are stored): 429 JSON with Retry-After past rateLimit.ip\'s attempts', async () => {
    const ask = () => request(app.app).get('/api/auth/webauthn-options/passkey')
    // This app's limit is 3 (rateLimit.ip); nothing before asked for a challenge. Sign-ins (the other
    // tests') are counted in another bucket.
    for (let i = 0; i < 3; i++) expect((await ask()).status).toBe(200)
    const refused = await ask()
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toMatch(/^\d+$/)
    expect(refused.body).toMatchObject({ error: 'RateLimited' })
    expect(refused.headers['set-cookie']).toBeUndefined()
  })
})
