/** Init: secret rules, env inference, trustHost, validation, and that the caller's config is left alone. */
import express from 'express'
import request from 'supertest'
import { describe, expect, it, jest } from '@jest/globals'
import Portcullis, { InvalidConfigurationError, MissingAuthorizeError, MissingRequestContextError, MissingSecretError, UntrustedHostError, type PortcullisConfig } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { decode } from 'portcullis/jwt'
import { encode as authjsEncode } from '@auth/core/jwt'
import { SECRET, credentialsProvider, setCookie, signInWithPassword } from '../support/flow.js'
import { isolateEnv } from '../support/env.js'

isolateEnv(['NODE_ENV', 'AUTH_SECRET', 'LEGACYAUTH_SECRET', 'AUTH_SECRET_1', 'AUTH_SECRET_2', 'AUTH_SECRET_3', 'AUTH_URL', 'LEGACYAUTH_URL', 'AUTH_TRUST_HOST', 'AUTH_REDIRECT_PROXY_URL'], ['NODE_ENV'])

const silent = { error: () => {}, warn: () => {}, debug: () => {} }

function appFor(config: Partial<PortcullisConfig>) {
  const { handlers, auth } = Portcullis({ providers: [credentialsProvider], logger: silent, ...config })
  const app = express()
  app.use('/api/auth', handlers)
  app.get('/me', async (req, res) => void res.json(await auth(req, res)))
  return app
}

async function sessionTokenAfterSignIn(app: express.Express, cookieName = 'authjs.session-token') {
  const response = await signInWithPassword(request.agent(app))
  return setCookie(response, cookieName)!.split(';')[0]!.split('=')[1]!
}

describe('secret', () => {
  it('throws MissingSecretError in production without a secret', () => {
    process.env.NODE_ENV = 'production'
    expect(() => Portcullis({ providers: [credentialsProvider] })).toThrow(MissingSecretError)
    expect(() => Portcullis({ providers: [credentialsProvider] })).toThrow(/AUTH_SECRET/)
  })

  it('warns in development and uses the development secret, which works', async () => {
    process.env.NODE_ENV = 'development'
    const warn = jest.fn()
    const app = appFor({ logger: { ...silent, warn } })
    expect(warn).toHaveBeenCalledWith('MissingSecret', expect.stringContaining('AUTH_SECRET'))
    const agent = request.agent(app)
    await signInWithPassword(agent)
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  it('reads AUTH_SECRET, then LEGACYAUTH_SECRET', async () => {
    process.env.AUTH_SECRET = 'from-auth-secret-0123456789abcdef'
    let token = await sessionTokenAfterSignIn(appFor({}))
    expect((await decode({ token, secret: 'from-auth-secret-0123456789abcdef', salt: 'authjs.session-token' }))?.sub).toBe('user-1')

    delete process.env.AUTH_SECRET
    process.env.LEGACYAUTH_SECRET = 'from-legacy-secret-0123456789abcdef'
    token = await sessionTokenAfterSignIn(appFor({}))
    expect((await decode({ token, secret: 'from-legacy-secret-0123456789abcdef', salt: 'authjs.session-token' }))?.sub).toBe('user-1')
  })

  it('seals with the highest AUTH_SECRET_n and still reads cookies of the older ones', async () => {
    process.env.AUTH_SECRET = 'old-secret-0123456789abcdef-0123456'
    const oldApp = appFor({})
    const oldToken = await sessionTokenAfterSignIn(oldApp)

    process.env.AUTH_SECRET_1 = 'newer-secret-0123456789abcdef-01234'
    process.env.AUTH_SECRET_2 = 'newest-secret-0123456789abcdef-0123'
    const rotated = appFor({})
    const token = await sessionTokenAfterSignIn(rotated)
    await expect(decode({ token, secret: 'newest-secret-0123456789abcdef-0123', salt: 'authjs.session-token' })).resolves.toMatchObject({ sub: 'user-1' })
    await expect(decode({ token, secret: 'newer-secret-0123456789abcdef-01234', salt: 'authjs.session-token' })).rejects.toThrow()

    // A session sealed before the rotation is still valid.
    const me = await request(rotated).get('/me').set('Cookie', `authjs.session-token=${oldToken}`).expect(200)
    expect(me.body.user.id).toBe('user-1')
  })

  it('rejects an empty secret', () => {
    expect(() => Portcullis({ providers: [credentialsProvider], secret: '' })).toThrow(InvalidConfigurationError)
    expect(() => Portcullis({ providers: [credentialsProvider], secret: ['ok-secret', ''] })).toThrow(InvalidConfigurationError)
  })
})

describe('origin: AUTH_URL and trustHost', () => {
  it('uses AUTH_URL for redirects whatever the Host header says', async () => {
    process.env.AUTH_URL = 'https://app.example.com/api/auth'
    const app = appFor({ secret: SECRET })
    const response = await request(app).get('/api/auth/providers').set('Host', 'evil.example').expect(200)
    expect(response.body.credentials.signinUrl).toBe('https://app.example.com/api/auth/signin/credentials')
    // The site is HTTPS, so the cookies are __Secure-/__Host- prefixed even on this plain-HTTP test connection.
    const csrf = await request(app).get('/api/auth/csrf')
    expect(setCookie(csrf, '__Host-authjs.csrf-token')).toMatch(/; Secure/)
  })

  it('accepts LEGACYAUTH_URL', async () => {
    process.env.LEGACYAUTH_URL = 'http://legacy.example.com/api/auth'
    const response = await request(appFor({ secret: SECRET })).get('/api/auth/providers').expect(200)
    expect(response.body.credentials.signinUrl).toBe('http://legacy.example.com/api/auth/signin/credentials')
  })

  it('ignores X-Forwarded-Host by default, and honours it when Express trusts the proxy', async () => {
    const app = appFor({ secret: SECRET })
    const plain = await request(app).get('/api/auth/providers').set('X-Forwarded-Host', 'proxy.example').set('X-Forwarded-Proto', 'https')
    expect(new URL(plain.body.credentials.signinUrl).host).not.toBe('proxy.example')

    app.set('trust proxy', 'loopback')
    const trusted = await request(app).get('/api/auth/providers').set('X-Forwarded-Host', 'proxy.example').set('X-Forwarded-Proto', 'https')
    expect(trusted.body.credentials.signinUrl).toBe('https://proxy.example/api/auth/signin/credentials')
  })

  it('honours X-Forwarded-Host/Proto from anyone with trustHost: true or AUTH_TRUST_HOST=true', async () => {
    process.env.AUTH_TRUST_HOST = 'true'
    const response = await request(appFor({ secret: SECRET })).get('/api/auth/providers').set('X-Forwarded-Host', 'proxy.example').set('X-Forwarded-Proto', 'https')
    expect(response.body.credentials.signinUrl).toBe('https://proxy.example/api/auth/signin/credentials')
  })

  it('honours AUTH_TRUST_HOST=false: without AUTH_URL init fails, with it forwarded headers are ignored', async () => {
    process.env.AUTH_TRUST_HOST = 'false'
    expect(() => Portcullis({ providers: [credentialsProvider], secret: SECRET })).toThrow(UntrustedHostError)
    process.env.AUTH_URL = 'https://app.example.com'
    const app = appFor({ secret: SECRET })
    app.set('trust proxy', true)
    const response = await request(app).get('/api/auth/providers').set('X-Forwarded-Host', 'proxy.example').expect(200)
    expect(response.body.credentials.signinUrl).toBe('https://app.example.com/api/auth/signin/credentials')
  })

  it('rejects an AUTH_TRUST_HOST that is neither true nor false, and a malformed AUTH_URL', () => {
    process.env.AUTH_TRUST_HOST = 'maybe'
    expect(() => Portcullis({ providers: [credentialsProvider], secret: SECRET })).toThrow(/AUTH_TRUST_HOST/)
    delete process.env.AUTH_TRUST_HOST
    process.env.AUTH_URL = 'not a url'
    expect(() => Portcullis({ providers: [credentialsProvider], secret: SECRET })).toThrow(/AUTH_URL/)
  })
})

describe('configuration object', () => {
  it('is not modified, and later changes to it have no effect', async () => {
    const callbacks = { redirect: ({ baseUrl }: { url: string; baseUrl: string }) => `${baseUrl}/fixed` }
    const provider = { ...credentialsProvider }
    const config: PortcullisConfig = { secret: SECRET, providers: [provider], callbacks, session: { maxAge: 3600 }, pages: {}, theme: { brandColor: '#123456' }, logger: silent }
    const before = JSON.stringify(config)
    const { handlers } = Portcullis(config)
    expect(JSON.stringify(config)).toBe(before)
    expect(Object.isFrozen(config) || Object.isFrozen(config.session) || Object.isFrozen(provider) || Object.isFrozen(callbacks)).toBe(false)
    expect(Object.keys(config.pages!)).toEqual([])

    config.pages!.signIn = '/hijacked'
    config.session!.maxAge = 1
    const app = express()
    app.use('/api/auth', handlers)
    expect((await request(app).get('/api/auth/signin')).status).toBe(200)
  })

  it('calls a bare built-in provider factory with no options', () => {
    expect(() => Portcullis({ secret: SECRET, providers: [Credentials] })).toThrow(MissingAuthorizeError)
  })

  it('rejects configurations that cannot work, saying what to change', () => {
    const authorize = async () => null
    expect(() => Portcullis({ secret: SECRET, providers: [Credentials({ authorize }), Credentials({ authorize })] })).toThrow(/Two providers have the id "credentials"/)
    expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], pages: { signIn: 'https://evil.example/login' } })).toThrow(/pages.signIn/)
    expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], pages: { home: 'https://evil.example/' } })).toThrow(/pages\.home must be a path on this site/)
    expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], pages: { home: '//evil.example/' } })).toThrow(/pages\.home/)
    expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], session: { strategy: 'database' } })).toThrow(/adapter/)
    expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], session: { maxAge: -1 } })).toThrow(/session.maxAge/)
    expect(() => Portcullis({ secret: SECRET, providers: [Credentials({ id: 'bad id', authorize })] })).toThrow(/letters, digits/)
    expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], basePath: 'auth' })).toThrow(/basePath/)
    expect(() => Portcullis(null as unknown as PortcullisConfig)).toThrow(TypeError)
  })
})

describe('providers', () => {
  const authorize = async () => null

  it('fails at init without providers, naming the option', () => {
    expect(() => Portcullis({} as PortcullisConfig)).toThrow(InvalidConfigurationError)
    expect(() => Portcullis({} as PortcullisConfig)).toThrow(/providers is missing: configure at least one provider/)
    // Also in production, where a missing secret would otherwise be the first complaint.
    process.env.NODE_ENV = 'production'
    expect(() => Portcullis({} as PortcullisConfig)).toThrow(/providers is missing/)
  })

  it('providers: [] starts an API that only reads sessions (behind a front end running Auth.js), saying so once', async () => {
    const warn = jest.fn()
    const { auth, handlers } = Portcullis({ secret: SECRET, providers: [], logger: { warn, error: () => {}, debug: () => {} } })
    expect(warn.mock.calls).toEqual([['SessionsOnly', expect.stringContaining('only reads sessions')]])
    // A session cookie Auth.js sealed with the same secret.
    const token = await authjsEncode({ secret: SECRET, salt: 'authjs.session-token', token: { sub: 'user-9', name: 'Front End' } })
    const app = express()
    app.use('/api/auth', handlers)
    app.get('/me', async (req, res) => void res.json(await auth(req, res)))
    const me = await request(app).get('/me').set('Cookie', `authjs.session-token=${token}`).expect(200)
    expect(me.body.user).toMatchObject({ id: 'user-9', name: 'Front End' })
    expect((await request(app).get('/api/auth/providers').expect(200)).body).toEqual({})
    expect((await request(app).post('/api/auth/signin/github').type('form').send({}).expect(302)).headers.location).toMatch(/error=/)
  })

  it('fails at init on a provider without an id or a type, or a duplicate id, naming the field', () => {
    const init = (...providers: unknown[]) => () => Portcullis({ secret: SECRET, providers: providers as PortcullisConfig['providers'] })
    expect(init({ type: 'credentials', authorize })).toThrow(/providers\[0\] has no id/)
    expect(init(credentialsProvider, { id: '', type: 'credentials', authorize })).toThrow(/providers\[1\] has no id/)
    expect(init(credentialsProvider, null)).toThrow(/providers\[1\] is not a provider/)
    expect(init({ id: 'corp', authorize })).toThrow(/Provider "corp": type must be "oauth", "oidc", "sso", "email", "credentials" or "webauthn"; got undefined/)
    expect(init(credentialsProvider, Credentials({ authorize }))).toThrow(/Two providers have the id "credentials"/)
  })

  it('says that signIn() and signOut() were called outside a request', async () => {
    const { signIn, signOut } = Portcullis({ secret: SECRET, providers: [credentialsProvider], logger: silent })
    await expect(signIn('credentials', { username: 'ada', password: 'lovelace' })).rejects.toThrow(MissingRequestContextError)
    await expect(signIn('credentials')).rejects.toThrow(/^signIn\(\) .*inside a request/)
    await expect(signIn('credentials')).rejects.not.toThrow(/auth\(req, res\)/)
    await expect(signOut()).rejects.toThrow(/^signOut\(\) .*inside a request/)
  })
})

describe('cookies', () => {
  it('uses __Secure-/__Host- names and the Secure attribute over HTTPS', async () => {
    const app = appFor({ secret: SECRET })
    app.set('trust proxy', 'loopback')
    const agent = request.agent(app)
    const csrf = await agent.get('/api/auth/csrf').set('X-Forwarded-Proto', 'https').expect(200)
    const csrfCookie = setCookie(csrf, '__Host-authjs.csrf-token')
    expect(csrfCookie).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax$/)
    const signIn = await agent
      .post('/api/auth/callback/credentials')
      .set('X-Forwarded-Proto', 'https')
      .set('Cookie', csrfCookie!.split(';')[0]!)
      .type('form')
      .send({ csrfToken: csrf.body.csrfToken, username: 'ada', password: 'lovelace' })
      .expect(302)
    expect(setCookie(signIn, '__Secure-authjs.session-token')).toMatch(/; HttpOnly; Secure; SameSite=Lax$/)
  })

  it('takes a cookie override whole, name and options', async () => {
    const app = appFor({
      secret: SECRET,
      cookies: { sessionToken: { name: 'my-session', options: { httpOnly: true, sameSite: 'strict', path: '/', secure: false } } },
    })
    const response = await signInWithPassword(request.agent(app))
    expect(setCookie(response, 'my-session')).toMatch(/; SameSite=Strict$/)
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
  })
})
