/**
 * OAuth and OIDC providers at init: env inference (spec §5.3), provider objects that cannot work
 * refused with a message naming the field or variable, and no route answering 5xx for any
 * provider type (the oidc callback used to answer 500 with a stack trace).
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import Portcullis, { InvalidConfigurationError, type PortcullisConfig } from 'portcullis'
import OAuth from 'portcullis/providers/oauth'
import OIDC from 'portcullis/providers/oidc'
import GitHub from 'portcullis/providers/github'
import Google from 'portcullis/providers/google'
import { SECRET, credentialsProvider, fetchCsrfToken } from '../support/flow.js'
import { isolateEnv } from '../support/env.js'

isolateEnv(['AUTH_ACME_CORP_ID', 'AUTH_ACME_CORP_SECRET', 'AUTH_ACME_CORP_ISSUER', 'AUTH_GITHUB_ID', 'AUTH_GITHUB_SECRET', 'AUTH_GOOGLE_ID', 'AUTH_GOOGLE_SECRET', 'AUTH_REDIRECT_PROXY_URL'])

const silent = { error: () => {}, warn: () => {}, debug: () => {} }

const acme = (overrides: Partial<Parameters<typeof OAuth>[0]> = {}) =>
  OAuth({
    id: 'acme-corp',
    name: 'Acme',
    authorization: { url: 'https://acme.example/oauth/authorize', params: { scope: 'read:user' } },
    token: 'https://acme.example/oauth/token',
    userinfo: 'https://api.acme.example/me',
    ...overrides,
  })

function init(providers: PortcullisConfig['providers'], config: Partial<PortcullisConfig> = {}) {
  return Portcullis({ secret: SECRET, logger: silent, providers, ...config })
}

function appFor(providers: PortcullisConfig['providers'], config: Partial<PortcullisConfig> = {}) {
  const app = express()
  app.use('/api/auth', init(providers, config).handlers)
  return app
}

/** The authorization URL POST /signin/:id redirects to. */
async function authorizationUrl(app: express.Express, providerId: string): Promise<URL> {
  const agent = request.agent(app)
  const csrfToken = await fetchCsrfToken(agent)
  const response = await agent.post(`/api/auth/signin/${providerId}`).type('form').send({ csrfToken }).expect(302)
  return new URL(response.headers.location!)
}

describe('env inference', () => {
  it('takes the client id and secret from AUTH_<PROVIDER>_ID/_SECRET, the id in upper snake case', async () => {
    process.env.AUTH_ACME_CORP_ID = 'id-from-env'
    process.env.AUTH_ACME_CORP_SECRET = 'secret-from-env'
    const url = await authorizationUrl(appFor([acme()]), 'acme-corp')
    expect(url.origin + url.pathname).toBe('https://acme.example/oauth/authorize')
    expect(url.searchParams.get('client_id')).toBe('id-from-env')
  })

  it('lets explicit options win over the environment', async () => {
    process.env.AUTH_ACME_CORP_ID = 'id-from-env'
    process.env.AUTH_ACME_CORP_SECRET = 'secret-from-env'
    const url = await authorizationUrl(appFor([acme({ clientId: 'explicit-id' })]), 'acme-corp')
    expect(url.searchParams.get('client_id')).toBe('explicit-id')
  })

  it('fails at init naming the variable to set when the client id is missing', () => {
    process.env.AUTH_ACME_CORP_SECRET = 'secret-from-env'
    expect(() => init([acme()])).toThrow(InvalidConfigurationError)
    expect(() => init([acme()])).toThrow(/AUTH_ACME_CORP_ID/)
  })

  it('fails at init naming the secret variable, unless the client is public', () => {
    process.env.AUTH_ACME_CORP_ID = 'id'
    expect(() => init([acme()])).toThrow(/AUTH_ACME_CORP_SECRET/)
    expect(() => init([acme({ client: { token_endpoint_auth_method: 'none' } })])).not.toThrow()
  })

  it('fills a bare built-in provider from the environment (GitHub, Google)', async () => {
    process.env.AUTH_GITHUB_ID = 'gh-id'
    process.env.AUTH_GITHUB_SECRET = 'gh-secret'
    const url = await authorizationUrl(appFor([GitHub]), 'github')
    expect(url.origin + url.pathname).toBe('https://github.com/login/oauth/authorize')
    expect(url.searchParams.get('client_id')).toBe('gh-id')
    expect(url.searchParams.get('scope')).toBe('read:user user:email')
    expect(url.searchParams.get('redirect_uri')).toMatch(/\/api\/auth\/callback\/github$/)
    expect(() => init([Google])).toThrow(/AUTH_GOOGLE_ID/)
    process.env.AUTH_GOOGLE_ID = 'google-id'
    process.env.AUTH_GOOGLE_SECRET = 'google-secret'
    expect(() => init([Google, GitHub({ clientId: 'other' })])).not.toThrow()
  })

  it('requires the issuer of an oidc provider, naming AUTH_<ID>_ISSUER', () => {
    expect(() => init([OIDC({ id: 'acme-corp', name: 'Acme', clientId: 'id', clientSecret: 'secret' })])).toThrow(/AUTH_ACME_CORP_ISSUER/)
  })
})

describe('provider objects that cannot work are refused at init, naming the field', () => {
  const cases: [string, () => unknown, RegExp][] = [
    ['an oauth provider without token endpoint', () => init([acme({ clientId: 'id', clientSecret: 's', token: undefined })]), /needs token/],
    ['an oauth provider without authorization endpoint', () => init([acme({ clientId: 'id', clientSecret: 's', authorization: undefined })]), /needs authorization/],
    ['an oauth provider without userinfo', () => init([acme({ clientId: 'id', clientSecret: 's', userinfo: undefined })]), /needs userinfo/],
    ['a relative endpoint URL', () => init([acme({ clientId: 'id', clientSecret: 's', token: '/oauth/token' })]), /token must be an absolute URL/],
    ['an http endpoint', () => init([acme({ clientId: 'id', clientSecret: 's', token: 'http://acme.example/token' })]), /token is an http: URL.*dangerouslyAllowInsecureRequests/],
    ['an unknown check', () => init([acme({ clientId: 'id', clientSecret: 's', checks: ['pkce', 'bogus' as never] })]), /checks must be a list/],
    ['checks without pkce or state', () => init([acme({ clientId: 'id', clientSecret: 's', checks: [] })]), /must include "pkce" or "state"/],
    ['an unknown client authentication', () => init([acme({ clientId: 'id', clientSecret: 's', client: { token_endpoint_auth_method: 'private_key_jwt' as never } })]), /token_endpoint_auth_method/],
    ['a token.request that is not a function', () => init([acme({ clientId: 'id', clientSecret: 's', token: { request: 'x' as never } })]), /token.request must be a function/],
    ['a token.request on an oidc provider (its ID token must be validated)', () => init([OIDC({ id: 'corp', name: 'Corp', clientId: 'id', clientSecret: 's', issuer: 'https://corp.example', token: { request: () => ({}) } } as never)]), /token.request is for type "oauth" providers/],
    ['a profile that is not a function', () => init([acme({ clientId: 'id', clientSecret: 's', profile: 'x' as never })]), /profile must be a function/],
    ['an e-mail provider without sendVerificationRequest', () => init([{ id: 'email', type: 'email' } as never]), /E-mail provider "email" has no sendVerificationRequest/],
    ['an unknown type', () => init([{ id: 'x', type: 'saml' } as never]), /Provider "x": type must be "oauth", "oidc", "sso", "email", "credentials" or "webauthn"; got "saml"/],
    ['an oidc issuer that is not a URL', () => init([OIDC({ id: 'corp', name: 'Corp', clientId: 'id', clientSecret: 's', issuer: 'corp' })]), /issuer must be an absolute URL/],
  ]
  it.each(cases)('%s', (_name, run, message) => {
    expect(run).toThrow(InvalidConfigurationError)
    expect(run).toThrow(message)
  })

  it('refuses an adapter without the methods OAuth sign-in needs, naming them', () => {
    const adapter = { getUser: async () => null, createSession: async () => undefined } as never
    expect(() => init([acme({ clientId: 'id', clientSecret: 's' })], { adapter, session: { strategy: 'jwt' } })).toThrow(
      /getUserByAccount, getUserByEmail, createUser, linkAccount/,
    )
  })
})

describe('no route answers 5xx, whatever the provider type', () => {
  // The issuer is unreachable: discovery fails, which must be a clear sign-in error, not a 500.
  const providers = [
    credentialsProvider,
    acme({ clientId: 'id', clientSecret: 'secret' }),
    OIDC({ id: 'corp', name: 'Corp', clientId: 'id', clientSecret: 'secret', issuer: 'http://127.0.0.1:9/', dangerouslyAllowInsecureRequests: true }),
  ]
  const app = appFor(providers)
  const paths = (id: string) => [
    `/api/auth/signin/${id}`,
    `/api/auth/callback/${id}`,
    `/api/auth/callback/${id}?error=access_denied&error_description=no`,
    `/api/auth/callback/${id}?code=abc&state=def`,
    `/api/auth/callback/${id}?code=abc&state=def&iss=https%3A%2F%2Fevil.example`,
  ]

  it.each(['credentials', 'acme-corp', 'corp', 'unknown'])('provider %s: GET and POST of its routes', async (id) => {
    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)
    for (const path of paths(id)) {
      const get = await agent.get(path)
      expect(get.status).toBeLessThan(500)
      const post = await agent.post(path).type('form').send({ csrfToken, code: 'abc', state: 'def' })
      expect(post.status).toBeLessThan(500)
    }
  })

  it('answers a callback with error=access_denied by sending the user back to the sign-in page with the code', async () => {
    for (const id of ['acme-corp', 'corp']) {
      const response = await request(app).get(`/api/auth/callback/${id}?error=access_denied`).expect(302)
      const location = new URL(response.headers.location!, 'http://x')
      expect(location.pathname).toBe('/api/auth/signin')
      expect(location.searchParams.get('error')).toBe('OAuthCallbackError')
      expect(location.searchParams.get('code')).toBe('access_denied')
    }
  })

  it('answers a sign-in whose discovery fails with OAuthSignInError on the sign-in page', async () => {
    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent.post('/api/auth/signin/corp').type('form').send({ csrfToken }).expect(302)
    expect(new URL(response.headers.location!, 'http://x').searchParams.get('error')).toBe('OAuthSignInError')
  })

  it('shows one button per OAuth provider on the built-in sign-in page', async () => {
    const page = await request(app).get('/api/auth/signin').expect(200)
    expect(page.text).toContain('action="/api/auth/signin/acme-corp"')
    expect(page.text).toContain('action="/api/auth/signin/corp"')
    expect(page.text).toMatch(/Sign in with Acme/)
    expect(page.text).toMatch(/Sign in with Corp/)
  })
})
