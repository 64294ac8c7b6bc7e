/**
 * Apple's quirks: the client secret is an ES256 JWT signed with the app's key (checked by verifying
 * it, and by a token endpoint that refuses anything else), the response comes as a form_post, and
 * the name arrives once, in a `user` form field next to `code`. The in-process oidc-provider stands
 * in for appleid.apple.com (same form_post, client_secret_post, ID token); its token endpoint is
 * fronted by a check of the secret as Apple documents it.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import knex, { type Knex } from 'knex'
import { decodeProtectedHeader, jwtVerify } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals'
import { InvalidConfigurationError } from 'portcullis'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Apple, { APPLE_MAX_SECRET_LIFETIME_SECONDS, createAppleClientSecret, type AppleUserConfig } from 'portcullis/providers/apple'
import type { ClientSecretFunction } from 'portcullis/providers/oauth'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import { Browser } from '../support/browser.js'
import { isolateEnv } from '../support/env.js'
import { SECRET } from '../support/flow.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, startSignIn, type Listener } from '../support/oauth-app.js'

isolateEnv(['AUTH_APPLE_ID', 'AUTH_APPLE_SECRET', 'AUTH_APPLE_TEAM_ID', 'AUTH_APPLE_KEY_ID', 'AUTH_APPLE_PRIVATE_KEY'])

const TEAM_ID = 'ABCDE12345'
const KEY_ID = 'XYZ987WVU6'
const CLIENT_ID = 'com.example.web'
/** What the stand-in's client is registered with; the app never knows it, it sends signed JWTs. */
const REGISTERED_SECRET = 'apple-registered-secret'
const APPLE_AUDIENCE = 'https://appleid.apple.com'

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const key = { teamId: TEAM_ID, keyId: KEY_ID, privateKey: PRIVATE_PEM }

async function verifySecret(secret: string, verifyWith: KeyObject = publicKey) {
  return jwtVerify(secret, verifyWith, { algorithms: ['ES256'], issuer: TEAM_ID, audience: APPLE_AUDIENCE, subject: CLIENT_ID })
}

describe('createAppleClientSecret', () => {
  it('signs a JWT that verifies with the public key and carries the claims Apple documents', async () => {
    const now = 1_700_000_000
    const secret = createAppleClientSecret({ ...key, clientId: CLIENT_ID, expiresIn: 3600, now })
    expect(decodeProtectedHeader(secret)).toEqual({ alg: 'ES256', kid: KEY_ID })
    const { payload } = await jwtVerify(secret, publicKey, { algorithms: ['ES256'], currentDate: new Date((now + 60) * 1000) })
    expect(payload).toEqual({ iss: TEAM_ID, sub: CLIENT_ID, aud: APPLE_AUDIENCE, iat: now, exp: now + 3600 })
  })

  it('does not verify with another key (the signature is over the header and claims)', async () => {
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey
    await expect(verifySecret(createAppleClientSecret({ ...key, clientId: CLIENT_ID }), stranger)).rejects.toThrow()
  })

  it('refuses a lifetime beyond the six months Apple accepts', () => {
    expect(() => createAppleClientSecret({ ...key, clientId: CLIENT_ID, expiresIn: APPLE_MAX_SECRET_LIFETIME_SECONDS + 1 })).toThrow(/15777000/)
    expect(createAppleClientSecret({ ...key, clientId: CLIENT_ID, expiresIn: APPLE_MAX_SECRET_LIFETIME_SECONDS })).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/)
  })
})

describe('the client secret at init', () => {
  const resolveApple = (entry: typeof Apple | ReturnType<typeof Apple>) =>
    resolveConfig({ secret: SECRET, logger: { error: () => {}, warn: () => {}, debug: () => {} }, providers: [entry] }, FEATURES).providerById.get('apple') as unknown as { clientSecret: unknown }

  it('is computed from AUTH_APPLE_TEAM_ID, AUTH_APPLE_KEY_ID and AUTH_APPLE_PRIVATE_KEY (PEM with \\n escapes, as in an env file)', async () => {
    process.env.AUTH_APPLE_ID = CLIENT_ID
    process.env.AUTH_APPLE_TEAM_ID = TEAM_ID
    process.env.AUTH_APPLE_KEY_ID = KEY_ID
    process.env.AUTH_APPLE_PRIVATE_KEY = PRIVATE_PEM.replace(/\n/g, '\\n')
    const { clientSecret } = resolveApple(Apple)
    expect(typeof clientSecret).toBe('function')
    const { payload } = await verifySecret(await (clientSecret as ClientSecretFunction)({ clientId: CLIENT_ID }))
    expect(payload.exp! - payload.iat!).toBe(3600)
  })

  it('names the missing variables when the key is given in part', () => {
    process.env.AUTH_APPLE_ID = CLIENT_ID
    process.env.AUTH_APPLE_TEAM_ID = TEAM_ID
    expect(() => resolveApple(Apple)).toThrow(InvalidConfigurationError)
    expect(() => resolveApple(Apple)).toThrow(/AUTH_APPLE_KEY_ID, AUTH_APPLE_PRIVATE_KEY missing/)
    expect(() => Apple({ teamId: TEAM_ID, privateKey: PRIVATE_PEM })).toThrow(/keyId missing/)
  })

  it('refuses a key that is not an EC P-256 private key, or not a key at all', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    expect(() => Apple({ teamId: TEAM_ID, keyId: KEY_ID, privateKey: rsa })).toThrow(/privateKey must be the EC P-256 private key/)
    expect(() => Apple({ teamId: TEAM_ID, keyId: KEY_ID, privateKey: 'not a key' })).toThrow(/privateKey is not a private key in PEM form/)
  })

  it('uses a secret signed by the app (AUTH_APPLE_SECRET) when no key is given, and a passed clientSecret over a key', () => {
    process.env.AUTH_APPLE_ID = CLIENT_ID
    process.env.AUTH_APPLE_SECRET = 'eyJ.pre-signed.secret'
    expect(resolveApple(Apple).clientSecret).toBe('eyJ.pre-signed.secret')
    expect(resolveApple(Apple({ ...key, clientSecret: 'explicit' })).clientSecret).toBe('explicit')
  })

  it('is renewed before it expires: the same secret for a while, a fresh one as the hour runs out', async () => {
    const secretOf = Apple(key).clientSecret as ClientSecretFunction
    const start = Date.now()
    const clock = jest.spyOn(Date, 'now').mockReturnValue(start)
    try {
      const first = await secretOf({ clientId: CLIENT_ID })
      clock.mockReturnValue(start + 30 * 60_000)
      expect(await secretOf({ clientId: CLIENT_ID })).toBe(first)
      clock.mockReturnValue(start + 56 * 60_000)
      const renewed = await secretOf({ clientId: CLIENT_ID })
      expect(renewed).not.toBe(first)
      const { payload } = await jwtVerify(renewed, publicKey, { currentDate: new Date(start + 57 * 60_000) })
      expect(payload.iat).toBe(Math.floor((start + 56 * 60_000) / 1000))
    } finally {
      clock.mockRestore()
    }
  })
})

describe('sign-in (an in-process OpenID provider standing in for appleid.apple.com)', () => {
  let app: Listener
  let idp: TestIdp
  let db: Knex
  /** The client secrets the token endpoint received, verified as Apple would. */
  const received: Array<{ secret: string | null; valid: boolean }> = []

  beforeAll(async () => {
    // oidc-provider notes once that the body below was read before it: expected here.
    const warn = console.warn.bind(console)
    jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      if (!String(args[0]).includes('already parsed request body')) warn(...args)
    })
    app = await listen()
    idp = await startIdp({ clients: [{ client_id: CLIENT_ID, client_secret: REGISTERED_SECRET, redirect_uris: [app.callbackUrl('apple')], token_endpoint_auth_method: 'client_secret_post' }] })
    // Apple's check of the client secret in front of the token endpoint: a valid JWT becomes the
    // registered secret, anything else a wrong one (oidc-provider then answers invalid_client).
    idp.provider.use(async (ctx, next) => {
      if (ctx.method === 'POST' && ctx.path === '/token') {
        const chunks: Buffer[] = []
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer)
        const form = new URLSearchParams(Buffer.concat(chunks).toString())
        const secret = form.get('client_secret')
        const valid = secret !== null && (await verifySecret(secret).then(() => true, () => false))
        received.push({ secret, valid })
        form.set('client_secret', valid ? REGISTERED_SECRET : 'rejected')
        ;(ctx.req as unknown as { body: unknown }).body = Object.fromEntries(form)
      }
      await next()
    })
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
  })
  afterEach(() => {
    received.length = 0
  })
  afterAll(async () => {
    jest.restoreAllMocks()
    await closeListeners()
    await idp?.close()
    await db?.destroy()
  })

  const apple = (overrides: AppleUserConfig = {}) => Apple({ issuer: idp.issuer, clientId: CLIENT_ID, dangerouslyAllowInsecureRequests: true, ...key, ...overrides })

  /** Starts a sign-in, logs in at the IdP, and returns the form_post it sends back (with `user` added as Apple does). */
  async function formPost(browser: Browser, user?: string) {
    const authorizationUrl = new URL(await startSignIn(browser, app.url, 'apple'))
    const navigation = await browser.authorize(authorizationUrl.href, 'alice')
    if (navigation.method !== 'POST') throw new Error('expected a form_post')
    if (user !== undefined) navigation.body.append('user', user)
    return { authorizationUrl, navigation }
  }

  it('asks for openid name email with response_mode=form_post and sends a client secret JWT that Apple verifies', async () => {
    mountApp(app, { providers: [apple()] })
    const browser = new Browser()
    const { authorizationUrl, navigation } = await formPost(browser)
    expect(authorizationUrl.searchParams.get('scope')).toBe('openid name email')
    expect(authorizationUrl.searchParams.get('response_mode')).toBe('form_post')
    expect(navigation.url).toBe(app.callbackUrl('apple'))
    expect(navigation.body.has('code')).toBe(true)
    const callback = await finishSignIn(browser, navigation)
    expect(redirectOf(callback).error).toBeNull()
    expect(received).toHaveLength(1)
    expect(received[0]!.valid).toBe(true)
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'alice', name: null, email: 'alice@example.com', image: null })
  })

  it('fails the sign-in when the secret is not signed with the registered key', async () => {
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    mountApp(app, { providers: [apple({ privateKey: stranger })] })
    const browser = new Browser()
    const { navigation } = await formPost(browser)
    const callback = await finishSignIn(browser, navigation)
    expect(redirectOf(callback).error).toBe('OAuthCallbackError')
    expect(received.map((entry) => entry.valid)).toEqual([false])
    expect(await sessionOf(browser, app.url)).toBeNull()
  })

  it('takes the name from the user field of the first sign-in, never its e-mail, and keeps it on later sign-ins', async () => {
    mountApp(app, { providers: [apple()], adapter: KnexAdapter(db) })
    const first = new Browser()
    // The field is attacker-controllable: its e-mail must not replace the ID token's.
    const userField = JSON.stringify({ name: { firstName: 'Jane', lastName: 'Appleseed' }, email: 'attacker@example.net' })
    const firstSignIn = await finishSignIn(first, (await formPost(first, userField)).navigation)
    expect(redirectOf(firstSignIn).error).toBeNull()
    expect((await sessionOf(first, app.url))?.user).toMatchObject({ name: 'Jane Appleseed', email: 'alice@example.com', image: null })

    // Apple sends no user field the second time; the stored user keeps the name.
    const second = new Browser()
    const secondSignIn = await finishSignIn(second, (await formPost(second)).navigation)
    expect(redirectOf(secondSignIn).error).toBeNull()
    expect((await sessionOf(second, app.url))?.user).toMatchObject({ name: 'Jane Appleseed', email: 'alice@example.com' })
    expect(await db('User').select('name', 'email')).toEqual([{ name: 'Jane Appleseed', email: 'alice@example.com' }])
    expect(await db('Account').select('provider', 'providerAccountId')).toEqual([{ provider: 'apple', providerAccountId: 'alice' }])
  })

  it.each([
    ['not JSON', '{"name":'],
    ['a name that is not an object', JSON.stringify({ name: 'Jane' })],
    ['names that are not strings', JSON.stringify({ name: { firstName: { $gt: '' }, lastName: 42 } })],
    ['an oversized field', JSON.stringify({ name: { firstName: 'J'.repeat(5000) } })],
  ])('ignores a user field that is %s, and signs in without a name', async (_case, userField) => {
    mountApp(app, { providers: [apple()] })
    const browser = new Browser()
    const callback = await finishSignIn(browser, (await formPost(browser, userField)).navigation)
    expect(redirectOf(callback).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: 'alice', name: null, email: 'alice@example.com', image: null })
  })
})
