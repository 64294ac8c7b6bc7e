/**
 * The Twitter/X provider end to end against an in-process X built from its documentation: the
 * authorization request (scope, `state` and an S256 `code_challenge`, both required by X), the code
 * exchange of a confidential client (HTTP Basic), and `GET /2/users/me` with `user.fields`, the
 * confirmed address only when the `users.email` scope was granted.
 *
 * @see https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/user-access-token
 * @see https://docs.x.com/x-api/users/user-lookup-me
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import Twitter, { type TwitterUserConfig } from 'portcullis/providers/twitter'
import { Browser } from '../support/browser.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, startSignIn, type Listener } from '../support/oauth-app.js'
import { basicCredentials, bearerToken, startProviderApi, type ProviderApi } from './provider-api.js'

const CLIENT_ID = 'rG9n6402A3dbUJKzXTNX4oWHJ'
const CLIENT_SECRET = 'x-client-secret'
const ACCESS_TOKEN = 'VGNibzFWSWREZm01bjN1N3dicWlNUG1oa2xRRVNNdmVHelJGY2hPWGxNd2dxOjE2MjIxNjA4MjU4MjU6MToxOmF0OjE'
const USER = { id: '2244994945', name: 'X Dev', username: 'TwitterDev', profile_image_url: 'https://pbs.twimg.com/profile_images/1/yRsRRjGO_normal.jpg' }

let app: Listener
let x: ProviderApi
let grantedScope = ''

beforeAll(async () => {
  app = await listen()
})
afterAll(() => closeListeners())
beforeEach(async () => {
  x = await startProviderApi({
    'GET /i/oauth2/authorize': (_request, url, api) => {
      const params = url.searchParams
      // X documents state and code_challenge as required.
      if (params.get('client_id') !== CLIENT_ID || !params.get('state') || !params.get('code_challenge')) return { status: 400, text: 'Something went wrong' }
      const back = new URL(params.get('redirect_uri')!)
      back.searchParams.set('state', params.get('state')!)
      back.searchParams.set('code', api.issueCode(params))
      return { redirect: back.href }
    },
    'POST /2/oauth2/token': (request, _url, api) => {
      const basic = basicCredentials(request.headers)
      if (basic?.id !== CLIENT_ID || basic.secret !== CLIENT_SECRET) return { status: 401, json: { error: 'unauthorized_client', error_description: 'Missing valid authorization header' } }
      const issued = api.redeemCode(new URLSearchParams(request.body), basic.id)
      if ('error' in issued) return { status: 400, json: issued }
      grantedScope = issued.scope
      return { json: { token_type: 'bearer', expires_in: 7200, access_token: ACCESS_TOKEN, scope: issued.scope } }
    },
    'GET /2/users/me': (request, url) => {
      if (bearerToken(request.headers) !== ACCESS_TOKEN) return { status: 401, json: { title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' } }
      const fields = (url.searchParams.get('user.fields') ?? '').split(',')
      const data: Record<string, unknown> = { id: USER.id, name: USER.name, username: USER.username }
      if (fields.includes('profile_image_url')) data.profile_image_url = USER.profile_image_url
      if (fields.includes('confirmed_email') && grantedScope.split(' ').includes('users.email')) data.confirmed_email = 'dev@example.com'
      return { json: { data } }
    },
  })
})
afterEach(() => x?.close())

/** The provider pointed at the mock, keeping its own userinfo request. */
function twitterAt(params: Record<string, string> = {}) {
  const userinfo = Twitter().userinfo as object
  return Twitter({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    dangerouslyAllowInsecureRequests: true,
    authorization: { url: `${x.baseUrl}/i/oauth2/authorize`, params },
    token: `${x.baseUrl}/2/oauth2/token`,
    userinfo: { ...userinfo, url: `${x.baseUrl}/2/users/me` } as TwitterUserConfig['userinfo'],
  })
}

async function signInAtX(browser = new Browser()) {
  const authorizationUrl = new URL(await startSignIn(browser, app.url, 'twitter'))
  const authorized = await browser.request(authorizationUrl.href)
  if (authorized.status !== 302) throw new Error(`mock /i/oauth2/authorize answered ${authorized.status}: ${await authorized.text()}`)
  const callback = await finishSignIn(browser, { method: 'GET', url: authorized.headers.get('location')! })
  return { browser, authorizationUrl, callback }
}

describe('Twitter/X', () => {
  it('asks for users.read tweet.read with state and PKCE, authenticates with Basic, and signs in without an address', async () => {
    mountApp(app, { providers: [twitterAt()] })
    const { browser, authorizationUrl, callback } = await signInAtX()
    expect(Object.fromEntries(authorizationUrl.searchParams)).toEqual({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'users.read tweet.read',
      redirect_uri: app.callbackUrl('twitter'),
      state: expect.any(String),
      code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
    })
    expect(redirectOf(callback).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: USER.id, name: 'X Dev', email: null, image: USER.profile_image_url })
    const [me] = x.requests.filter((request) => request.url.startsWith('/2/users/me'))
    // Without users.email granted, the address is not even asked for.
    expect(new URL(me!.url, x.baseUrl).searchParams.get('user.fields')).toBe('profile_image_url')
    expect(me!.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`)
  })

  it('with the users.email scope granted, asks for confirmed_email and takes it as the address', async () => {
    mountApp(app, { providers: [twitterAt({ scope: 'users.read tweet.read users.email' })] })
    const { browser, authorizationUrl } = await signInAtX()
    expect(authorizationUrl.searchParams.get('scope')).toBe('users.read tweet.read users.email')
    const [me] = x.requests.filter((request) => request.url.startsWith('/2/users/me'))
    expect(new URL(me!.url, x.baseUrl).searchParams.get('user.fields')).toBe('profile_image_url,confirmed_email')
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: USER.id, name: 'X Dev', email: 'dev@example.com', image: USER.profile_image_url })
  })

  it('rejects a callback whose state does not match, without a token request', async () => {
    mountApp(app, { providers: [twitterAt()] })
    const browser = new Browser()
    const authorizationUrl = await startSignIn(browser, app.url, 'twitter')
    const authorized = await browser.request(authorizationUrl)
    const forged = new URL(authorized.headers.get('location')!)
    forged.searchParams.set('state', 'forged-state')
    const callback = await finishSignIn(browser, { method: 'GET', url: forged.href })
    expect(redirectOf(callback).error).not.toBeNull()
    expect(x.requests.filter((request) => request.url === '/2/oauth2/token')).toHaveLength(0)
    expect(await sessionOf(browser, app.url)).toBeNull()
  })
})
