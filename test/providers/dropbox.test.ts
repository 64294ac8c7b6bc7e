/**
 * The Dropbox provider end to end against an in-process Dropbox built from its documentation:
 * the authorization request (scope, `token_access_type=offline`, PKCE), the code exchange (Basic
 * client authentication, PKCE verifier, a refresh token for offline access), and the account, an
 * RPC endpoint that only answers POST.
 *
 * @see https://www.dropbox.com/developers/documentation/http/documentation#oauth2-authorize
 * @see https://www.dropbox.com/developers/documentation/http/documentation#oauth2-token
 * @see https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account
 * @see https://www.dropbox.com/developers/documentation/http/documentation#formats (RPC endpoints: POST; no arguments, no body)
 */
import knex, { type Knex } from 'knex'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Dropbox, { type DropboxProfile, type DropboxUserConfig } from 'portcullis/providers/dropbox'
import { Browser } from '../support/browser.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, startSignIn, type Listener } from '../support/oauth-app.js'
import { basicCredentials, bearerToken, startProviderApi, type ProviderApi } from './provider-api.js'

const CLIENT_ID = 'dbx-app-key'
const CLIENT_SECRET = 'dbx-app-secret'
const ACCESS_TOKEN = 'sl.u.AbX9y6Fe3AuH5o66-gmJpR032jwAwQPIVVzWXZNkdzcYT02akC2de'
const REFRESH_TOKEN = 'nBiM85CZALsAAAAAAAAAAQXHBoNpNutK4ngsXHsqW4iGz9tisb3JyjGqikMJIYbd'

const ACCOUNT: DropboxProfile = {
  account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc',
  name: { given_name: 'Franz', surname: 'Ferdinand', familiar_name: 'Franz', display_name: 'Franz Ferdinand (Personal)', abbreviated_name: 'FF' },
  email: 'franz@dropbox.com',
  email_verified: true,
  disabled: false,
  locale: 'en',
  referral_link: 'https://db.tt/ZITNuhtI',
  is_paired: false,
  account_type: { '.tag': 'basic' },
  root_info: { '.tag': 'user', root_namespace_id: '3235641', home_namespace_id: '3235641' },
  profile_photo_url: 'https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAHWGmIXV3sUuOmBfTz0wPsiqHUpBWvv3ZA?size=128x128',
}

let app: Listener
let dropbox: ProviderApi
let account: DropboxProfile

beforeAll(async () => {
  app = await listen()
})
afterAll(() => closeListeners())
beforeEach(async () => {
  account = structuredClone(ACCOUNT)
  dropbox = await startProviderApi({
    'GET /oauth2/authorize': (_request, url, api) => {
      const params = url.searchParams
      if (params.get('client_id') !== CLIENT_ID || params.get('response_type') !== 'code') return { status: 400, text: 'invalid client_id or response_type' }
      const back = new URL(params.get('redirect_uri')!)
      back.searchParams.set('code', api.issueCode(params))
      if (params.has('state')) back.searchParams.set('state', params.get('state')!)
      return { redirect: back.href }
    },
    'POST /oauth2/token': (request, _url, api) => {
      const form = new URLSearchParams(request.body)
      const basic = basicCredentials(request.headers)
      const clientId = basic?.id ?? form.get('client_id') ?? ''
      const clientSecret = basic?.secret ?? form.get('client_secret')
      if (clientId !== CLIENT_ID || clientSecret !== CLIENT_SECRET) return { status: 400, json: { error: 'invalid_client', error_description: 'Invalid client_id or client_secret' } }
      const issued = api.redeemCode(form, clientId)
      if ('error' in issued) return { status: 400, json: issued }
      // token_access_type=offline on the authorization request is what brings a refresh token.
      const offline = api.requests.some((r) => r.url.startsWith('/oauth2/authorize') && new URL(r.url, api.baseUrl).searchParams.get('token_access_type') === 'offline')
      return {
        json: {
          access_token: ACCESS_TOKEN,
          expires_in: 14400,
          token_type: 'bearer',
          scope: issued.scope,
          account_id: account.account_id,
          uid: '12345',
          ...(offline ? { refresh_token: REFRESH_TOKEN } : {}),
        },
      }
    },
    'POST /2/users/get_current_account': (request) => {
      if (bearerToken(request.headers) !== ACCESS_TOKEN) return { status: 401, json: { error_summary: 'invalid_access_token/...', error: { '.tag': 'invalid_access_token' } } }
      // An RPC endpoint without arguments: a JSON Content-Type with an empty body cannot be decoded.
      if (/application\/json/.test(request.headers['content-type'] ?? '') && request.body.trim() !== 'null') {
        return { status: 400, text: 'Error in call to API function "users/get_current_account": request body: could not decode input as JSON' }
      }
      return { json: account }
    },
    'GET /2/users/get_current_account': () => ({ status: 400, text: 'Error in call to API function "users/get_current_account": Expected POST' }),
  })
})
afterEach(() => dropbox?.close())

/** The provider pointed at the mock, keeping its own userinfo request. */
function dropboxAt(params: Record<string, string> = {}) {
  const builtIn = Dropbox()
  const userinfo = builtIn.userinfo as { url: string; request: NonNullable<unknown> }
  return Dropbox({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    dangerouslyAllowInsecureRequests: true,
    authorization: { url: `${dropbox.baseUrl}/oauth2/authorize`, params },
    token: `${dropbox.baseUrl}/oauth2/token`,
    userinfo: { ...userinfo, url: `${dropbox.baseUrl}/2/users/get_current_account` } as DropboxUserConfig['userinfo'],
  })
}

async function signInAtDropbox(browser = new Browser()) {
  const authorizationUrl = new URL(await startSignIn(browser, app.url, 'dropbox'))
  const authorized = await browser.request(authorizationUrl.href)
  if (authorized.status !== 302) throw new Error(`mock /oauth2/authorize answered ${authorized.status}: ${await authorized.text()}`)
  const callback = await finishSignIn(browser, { method: 'GET', url: authorized.headers.get('location')! })
  return { browser, authorizationUrl, callback }
}

describe('Dropbox', () => {
  it('asks for account_info.read with token_access_type=offline and PKCE (S256), and signs the user in', async () => {
    mountApp(app, { providers: [dropboxAt()] })
    const { browser, authorizationUrl, callback } = await signInAtDropbox()
    expect(Object.fromEntries(authorizationUrl.searchParams)).toEqual({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'account_info.read',
      token_access_type: 'offline',
      redirect_uri: app.callbackUrl('dropbox'),
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
    })
    expect(redirectOf(callback).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toEqual({
      id: ACCOUNT.account_id,
      name: 'Franz Ferdinand (Personal)',
      email: 'franz@dropbox.com',
      image: ACCOUNT.profile_photo_url,
    })
  })

  it('reads the account with a POST carrying the bearer token and no body', async () => {
    mountApp(app, { providers: [dropboxAt()] })
    await signInAtDropbox()
    const calls = dropbox.requests.filter((request) => request.url.startsWith('/2/'))
    expect(calls.map((call) => `${call.method} ${call.url}`)).toEqual(['POST /2/users/get_current_account'])
    expect(calls[0]!.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`)
    expect(calls[0]!.body).toBe('')
    expect(calls[0]!.headers['content-type']).toBeUndefined()
    // The token request authenticated with Basic, not with the secret in the body.
    const [tokenRequest] = dropbox.requests.filter((request) => request.url === '/oauth2/token')
    expect(basicCredentials(tokenRequest!.headers)).toEqual({ id: CLIENT_ID, secret: CLIENT_SECRET })
    expect(new URLSearchParams(tokenRequest!.body).has('client_secret')).toBe(false)
  })

  it('gives no e-mail for an unverified address', async () => {
    account.email_verified = false
    mountApp(app, { providers: [dropboxAt()] })
    const { browser } = await signInAtDropbox()
    expect((await sessionOf(browser, app.url))?.user?.email).toBeNull()
  })

  it('reports a failed account request as OAuthCallbackError, with no session', async () => {
    account.account_id = ''
    mountApp(app, { providers: [dropboxAt()] })
    const { browser, callback } = await signInAtDropbox()
    expect(redirectOf(callback).url.searchParams.get('error')).toBe('OAuthCallbackError')
    expect(await sessionOf(browser, app.url)).toBeNull()
  })

  describe('with a database adapter', () => {
    let db: Knex
    beforeAll(async () => {
      db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
      await db.migrate.latest({ migrationSource: migrationSource() })
    })
    afterAll(() => db?.destroy())

    it('stores the refresh token that offline access brings', async () => {
      mountApp(app, { providers: [dropboxAt()], adapter: KnexAdapter(db) })
      const { callback } = await signInAtDropbox()
      expect(redirectOf(callback).error).toBeNull()
      expect(await db('Account').select('provider', 'providerAccountId', 'type', 'access_token', 'refresh_token')).toEqual([
        { provider: 'dropbox', providerAccountId: ACCOUNT.account_id, type: 'oauth', access_token: ACCESS_TOKEN, refresh_token: REFRESH_TOKEN },
      ])
    })

    it('stores no refresh token when the app asks for online access', async () => {
      await db('Account').del()
      await db('User').del()
      mountApp(app, { providers: [dropboxAt({ token_access_type: 'online' })], adapter: KnexAdapter(db) })
      const { authorizationUrl } = await signInAtDropbox()
      expect(authorizationUrl.searchParams.get('token_access_type')).toBe('online')
      expect(authorizationUrl.searchParams.get('scope')).toBe('account_info.read')
      expect(await db('Account').select('refresh_token')).toEqual([{ refresh_token: null }])
    })
  })
})
