/**
 * The WorkOS provider end to end against an in-process WorkOS SSO built from its documentation:
 * the authorization URL routed by `organization` (or `connection`/`provider`, here or per sign-in),
 * the code exchange with the client secret in the body, and the profile taken from the token
 * response without a further request.
 *
 * @see https://workos.com/docs/reference/sso/get-authorization-url
 * @see https://workos.com/docs/reference/sso/profile/get-profile-and-token
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import WorkOS, { type WorkOSProfile, type WorkOSUserConfig } from 'portcullis/providers/workos'
import { Browser } from '../support/browser.js'
import { closeListeners, finishSignIn, listen, mountApp, redirectOf, sessionOf, startSignIn, type Listener } from '../support/oauth-app.js'
import { startProviderApi, type ProviderApi } from './provider-api.js'

const CLIENT_ID = 'client_01HZBC6N1EB1ZY7KG32X'
const API_KEY = 'sk_example_123456789'
const ORGANIZATION = 'org_01EHWNCE74X7JSDV0X3SZ3KJNY'
const PROFILE: WorkOSProfile = {
  object: 'profile',
  id: 'prof_01DMC79VCBZ0NY2099737PSVF1',
  connection_id: 'conn_01E4ZCR3C56J083X43JQXF3JK5',
  connection_type: 'OktaSAML',
  organization_id: ORGANIZATION,
  email: 'todd@example.com',
  first_name: 'Todd',
  last_name: 'Rundgren',
  idp_id: '00u1a0ufowBJlzPlk357',
  raw_attributes: {},
}

let app: Listener
let workos: ProviderApi

beforeAll(async () => {
  app = await listen()
})
afterAll(() => closeListeners())
beforeEach(async () => {
  workos = await startProviderApi({
    'GET /sso/authorize': (_request, url, api) => {
      const params = url.searchParams
      if (params.get('client_id') !== CLIENT_ID) return { status: 400, text: 'invalid client_id' }
      if (!params.get('organization') && !params.get('connection') && !params.get('provider')) {
        return { status: 400, text: 'One of connection, organization or provider is required' }
      }
      const back = new URL(params.get('redirect_uri')!)
      back.searchParams.set('code', api.issueCode(params))
      if (params.has('state')) back.searchParams.set('state', params.get('state')!)
      return { redirect: back.href }
    },
    'POST /sso/token': (request, _url, api) => {
      const form = new URLSearchParams(request.body)
      if (form.get('client_id') !== CLIENT_ID || form.get('client_secret') !== API_KEY) return { status: 401, json: { error: 'invalid_client', error_description: 'Invalid client secret.' } }
      const issued = api.redeemCode(form, CLIENT_ID)
      if ('error' in issued) return { status: 400, json: issued }
      return { json: { token_type: 'Bearer', access_token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6InNzby', expires_in: 600, profile: PROFILE } }
    },
    'GET /sso/profile': () => ({ json: PROFILE }),
  })
})
afterEach(() => workos?.close())

function workosAt(options: Pick<WorkOSUserConfig, 'organization' | 'connection' | 'provider'> = {}) {
  const userinfo = WorkOS().userinfo as object
  return WorkOS({
    ...options,
    clientId: CLIENT_ID,
    clientSecret: API_KEY,
    dangerouslyAllowInsecureRequests: true,
    authorization: { url: `${workos.baseUrl}/sso/authorize` },
    token: `${workos.baseUrl}/sso/token`,
    userinfo: { ...userinfo, url: `${workos.baseUrl}/sso/profile` } as WorkOSUserConfig['userinfo'],
  })
}

async function signInAtWorkOS(options: { query?: string } = {}, browser = new Browser()) {
  const authorizationUrl = new URL(await startSignIn(browser, app.url, 'workos', options))
  const authorized = await browser.request(authorizationUrl.href)
  if (authorized.status !== 302) return { browser, authorizationUrl, authorized, callback: undefined }
  const callback = await finishSignIn(browser, { method: 'GET', url: authorized.headers.get('location')! })
  return { browser, authorizationUrl, authorized, callback }
}

describe('WorkOS', () => {
  it('routes by organization, sends the secret in the body, and takes the profile from the token response', async () => {
    mountApp(app, { providers: [workosAt({ organization: ORGANIZATION })] })
    const { browser, authorizationUrl, callback } = await signInAtWorkOS()
    expect(authorizationUrl.searchParams.get('organization')).toBe(ORGANIZATION)
    expect(authorizationUrl.searchParams.get('response_type')).toBe('code')
    expect(redirectOf(callback!).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user).toEqual({ id: PROFILE.id, name: 'Todd Rundgren', email: 'todd@example.com', image: null })
    const [tokenRequest] = workos.requests.filter((request) => request.url === '/sso/token')
    expect(tokenRequest!.headers.authorization).toBeUndefined()
    // No second request: the profile came with the tokens.
    expect(workos.requests.filter((request) => request.url.startsWith('/sso/profile'))).toHaveLength(0)
  })

  it('takes the organization per sign-in as an authorization param', async () => {
    mountApp(app, { providers: [workosAt()] })
    const { browser, authorizationUrl, callback } = await signInAtWorkOS({ query: `organization=${ORGANIZATION}` })
    expect(authorizationUrl.searchParams.get('organization')).toBe(ORGANIZATION)
    expect(redirectOf(callback!).error).toBeNull()
    expect((await sessionOf(browser, app.url))?.user?.id).toBe(PROFILE.id)
  })

  it('routes by a brokered OAuth provider, the option overriding nothing else', async () => {
    mountApp(app, { providers: [workosAt({ provider: 'GoogleOAuth' })] })
    const { authorizationUrl, callback } = await signInAtWorkOS()
    expect(authorizationUrl.searchParams.get('provider')).toBe('GoogleOAuth')
    expect(authorizationUrl.searchParams.has('organization')).toBe(false)
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${workos.baseUrl}/sso/authorize`)
    expect(redirectOf(callback!).error).toBeNull()
  })

  it('refuses an empty routing option at once', () => {
    expect(() => WorkOS({ connection: '' })).toThrow(/connection must be a non-empty string/)
  })
})
