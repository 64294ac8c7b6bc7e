/**
 * The profile requests of the providers whose profile is not one plain userinfo call (their
 * `userinfo.request`): Bitbucket (user + e-mail list), Notion and Strava (the user in the token
 * response), Naver (a wrapped answer), Yandex (the `OAuth` scheme), Reddit (a descriptive
 * User-Agent). Each runs against a stand-in API answering the provider's documented responses
 * (the URLs are in test/providers/fixtures/<id>.json); what is checked is what a user relies on:
 * the right person, the right address, clear errors, the requests the provider's rules demand.
 */
import { once } from 'node:events'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import Bitbucket from 'portcullis/providers/bitbucket'
import Naver from 'portcullis/providers/naver'
import Notion, { NOTION_API_VERSION } from 'portcullis/providers/notion'
import type { OAuthConfig, Profile, TokenSet, UserinfoContext } from 'portcullis/providers/oauth'
import Reddit from 'portcullis/providers/reddit'
import Strava from 'portcullis/providers/strava'
import Yandex from 'portcullis/providers/yandex'

type Route = (request: RecordedRequest) => { status?: number; body: unknown }
interface RecordedRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
}

let api: { url: string; routes: Map<string, Route>; requests: RecordedRequest[]; close(): Promise<void> }

beforeAll(async () => {
  const server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stand-in')
    const request = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers }
    api.requests.push(request)
    const route = api.routes.get(url.pathname)
    const answer = route ? route(request) : { status: 404, body: { message: 'not found' } }
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  api = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    routes: new Map(),
    requests: [],
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
})
afterAll(() => api?.close())
beforeEach(() => {
  api.routes.clear()
  api.requests.length = 0
})

/** Runs the provider's own profile request, with its userinfo URL pointed at the stand-in. */
function profileOf(provider: OAuthConfig<never>, tokens: TokenSet, path: string, clientId = 'client-id'): Promise<Profile> {
  const { request } = provider.userinfo as { request: (context: UserinfoContext) => Promise<Profile> }
  return request({ tokens, provider: { id: provider.id, clientId, userinfoUrl: api.url + path }, params: new URLSearchParams() })
}

const bearer = { access_token: 'the-access-token', token_type: 'bearer' }

describe('Bitbucket', () => {
  const user = { type: 'user', uuid: '{d301aafa-d676-4ee0-88be-962be7417567}', account_id: '557058:c0b7', display_name: 'Evan Cheng', nickname: 'evanc', created_on: '2011-12-20T16:34:07Z', links: { avatar: { href: 'https://bitbucket.org/account/evanc/avatar/' } } }

  it('adds the primary confirmed address of /2.0/user/emails, marked verified, following Bitbucket\'s next page', async () => {
    api.routes.set('/2.0/user', () => ({ body: user }))
    api.routes.set('/2.0/user/emails', (request) =>
      request.query.get('page') === '2'
        ? { body: { pagelen: 10, page: 2, values: [{ type: 'email', email: 'evan@example.com', is_primary: true, is_confirmed: true }] } }
        : { body: { pagelen: 10, page: 1, next: `${api.url}/2.0/user/emails?page=2`, values: [{ type: 'email', email: 'old@example.com', is_primary: false, is_confirmed: true }] } },
    )
    const profile = await profileOf(Bitbucket() as OAuthConfig<never>, bearer, '/2.0/user')
    expect(profile).toMatchObject({ uuid: user.uuid, email: 'evan@example.com', email_verified: true })
    expect(await Bitbucket().profile!(profile as never, bearer)).toMatchObject({ email: 'evan@example.com', emailVerified: true })
    expect(api.requests.map((request) => request.headers.authorization)).toEqual(['Bearer the-access-token', 'Bearer the-access-token', 'Bearer the-access-token'])
  })

  it('takes another confirmed address when the primary one is unconfirmed', async () => {
    api.routes.set('/2.0/user', () => ({ body: user }))
    api.routes.set('/2.0/user/emails', () => ({
      body: { values: [{ type: 'email', email: 'other@example.com', is_primary: false, is_confirmed: true }, { type: 'email', email: 'unconfirmed@example.com', is_primary: true, is_confirmed: false }] },
    }))
    const profile = await profileOf(Bitbucket() as OAuthConfig<never>, bearer, '/2.0/user')
    expect(profile).toMatchObject({ email: 'other@example.com', email_verified: true })
    expect(await Bitbucket().profile!(profile as never, bearer)).toMatchObject({ email: 'other@example.com', emailVerified: true })
  })

  it('marks an unconfirmed primary address unverified when no address is confirmed', async () => {
    api.routes.set('/2.0/user', () => ({ body: user }))
    api.routes.set('/2.0/user/emails', () => ({
      body: { values: [{ type: 'email', email: 'victim@example.com', is_primary: true, is_confirmed: false }, { type: 'email', email: 'old@example.com', is_primary: false, is_confirmed: false }] },
    }))
    const profile = await profileOf(Bitbucket() as OAuthConfig<never>, bearer, '/2.0/user')
    expect(profile).toMatchObject({ email: 'victim@example.com', email_verified: false })
    expect(await Bitbucket().profile!(profile as never, bearer)).toMatchObject({ email: 'victim@example.com', emailVerified: false })
  })

  it('does not follow a next link to another host (the token would go with it)', async () => {
    api.routes.set('/2.0/user', () => ({ body: user }))
    api.routes.set('/2.0/user/emails', () => ({ body: { next: 'https://attacker.example/collect', values: [] } }))
    expect(await profileOf(Bitbucket() as OAuthConfig<never>, bearer, '/2.0/user')).toMatchObject({ email: null, email_verified: false })
    expect(api.requests).toHaveLength(2)
  })

  it("reports Bitbucket's error message when the token is refused", async () => {
    api.routes.set('/2.0/user', () => ({ status: 401, body: { type: 'error', error: { message: 'Access token expired.' } } }))
    await expect(profileOf(Bitbucket() as OAuthConfig<never>, bearer, '/2.0/user')).rejects.toThrow(/answered 401: Access token expired\./)
  })
})

describe('Notion', () => {
  const person = { object: 'user', id: 'e79a0b74-3aba-4149-9f74-0bb5791a6ee6', name: 'Avocado Lovelace', avatar_url: null, type: 'person', person: { email: 'avo@example.org' } }

  it('takes the person from the token response without calling the API', async () => {
    const tokens = { ...bearer, bot_id: 'b1', workspace_id: 'w1', owner: { type: 'user', user: person } }
    expect(await profileOf(Notion() as OAuthConfig<never>, tokens, '/v1/users/me')).toEqual(person)
    expect(api.requests).toHaveLength(0)
  })

  it('falls back to the bot user\'s owner, sending the Notion-Version header', async () => {
    api.routes.set('/v1/users/me', () => ({ body: { object: 'user', id: 'bot-id', type: 'bot', bot: { owner: { type: 'user', user: person } } } }))
    expect(await profileOf(Notion() as OAuthConfig<never>, bearer, '/v1/users/me')).toEqual(person)
    expect(api.requests[0]!.headers['notion-version']).toBe(NOTION_API_VERSION)
  })

  it('refuses a workspace-owned authorization with an error that says why', async () => {
    api.routes.set('/v1/users/me', () => ({ body: { object: 'user', id: 'bot-id', type: 'bot', bot: { owner: { type: 'workspace', workspace: true } } } }))
    const tokens = { ...bearer, owner: { type: 'workspace', workspace: true } }
    await expect(profileOf(Notion() as OAuthConfig<never>, tokens, '/v1/users/me')).rejects.toThrow(/owned by a workspace, not a user/)
  })
})

describe('Strava', () => {
  it('takes the athlete from the token response without calling the API', async () => {
    const athlete = { id: 134815, username: 'marianne_t', resource_state: 2, firstname: 'Marianne', lastname: 'Teutenberg', profile: 'avatar/athlete/large.png' }
    expect(await profileOf(Strava() as OAuthConfig<never>, { ...bearer, athlete }, '/api/v3/athlete')).toEqual(athlete)
    expect(api.requests).toHaveLength(0)
  })

  it('asks GET /api/v3/athlete when the token response has no athlete', async () => {
    api.routes.set('/api/v3/athlete', () => ({ body: { id: 227615, resource_state: 3, firstname: 'John', lastname: 'Applestrava' } }))
    expect(await profileOf(Strava() as OAuthConfig<never>, bearer, '/api/v3/athlete')).toMatchObject({ id: 227615 })
    expect(api.requests[0]!.headers.authorization).toBe('Bearer the-access-token')
  })
})

describe('Naver', () => {
  it('unwraps the response object', async () => {
    api.routes.set('/v1/nid/me', () => ({ body: { resultcode: '00', message: 'success', response: { id: '32742776', nickname: 'OpenAPI', email: 'openapi@naver.com' } } }))
    expect(await profileOf(Naver() as OAuthConfig<never>, bearer, '/v1/nid/me')).toEqual({ id: '32742776', nickname: 'OpenAPI', email: 'openapi@naver.com' })
  })

  it("reports Naver's resultcode when it refuses the token", async () => {
    api.routes.set('/v1/nid/me', () => ({ status: 401, body: { resultcode: '024', message: 'Authentication failed' } }))
    await expect(profileOf(Naver() as OAuthConfig<never>, bearer, '/v1/nid/me')).rejects.toThrow(/401: resultcode 024 Authentication failed/)
  })
})

describe('Yandex', () => {
  it('asks for JSON with the "Authorization: OAuth" scheme Yandex documents', async () => {
    api.routes.set('/info', () => ({ body: { id: '1000034426', login: 'ivan', client_id: 'c', psuid: 'p', default_email: 'test@yandex.ru' } }))
    expect(await profileOf(Yandex() as OAuthConfig<never>, bearer, '/info')).toMatchObject({ id: '1000034426' })
    expect(api.requests[0]!.headers.authorization).toBe('OAuth the-access-token')
    expect(api.requests[0]!.query.get('format')).toBe('json')
  })
})

describe('Reddit', () => {
  const me = { id: '1w72', name: 'spez', icon_img: 'https://styles.redditmedia.com/icon.png?width=256&s=1', has_verified_email: true, created_utc: 1118030400 }

  it('sends a descriptive User-Agent naming the app by default, and asks for unescaped JSON', async () => {
    api.routes.set('/api/v1/me', () => ({ body: me }))
    await profileOf(Reddit() as OAuthConfig<never>, bearer, '/api/v1/me', 'reddit-app-id')
    expect(api.requests[0]!.headers['user-agent']).toBe('web:reddit-app-id:portcullis (Portcullis sign-in)')
    expect(api.requests[0]!.query.get('raw_json')).toBe('1')
  })

  it("sends the app's own User-Agent when given", async () => {
    api.routes.set('/api/v1/me', () => ({ body: me }))
    await profileOf(Reddit({ userAgent: 'web:com.example.app:1.0 (by /u/example)' }) as OAuthConfig<never>, bearer, '/api/v1/me')
    expect(api.requests[0]!.headers['user-agent']).toBe('web:com.example.app:1.0 (by /u/example)')
  })

  it('says what to do when Reddit rate-limits the request', async () => {
    api.routes.set('/api/v1/me', () => ({ status: 429, body: { message: 'Too Many Requests', error: 429 } }))
    await expect(profileOf(Reddit() as OAuthConfig<never>, bearer, '/api/v1/me')).rejects.toThrow(/429: Too Many Requests \(rate-limited: give Reddit a descriptive userAgent\)/)
  })

  it('refuses an empty userAgent at once', () => {
    expect(() => Reddit({ userAgent: ' ' })).toThrow(TypeError)
  })
})
