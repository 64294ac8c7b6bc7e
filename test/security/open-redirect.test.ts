/**
 * Open-redirect attacks (security/redirect.ts): wherever a `callbackUrl` enters (the credentials
 * form, the sign-in and sign-out pages' query, the sign-out form, the callback-url cookie), the
 * URL the user is finally sent to stays on the app's own origin.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Response } from 'supertest'
import {
  CALLBACK_COOKIE,
  PASSWORD,
  USERNAME,
  closeAll,
  cookieHeader,
  getCsrf,
  originOf,
  setCookie,
  startApp,
  type SecurityApp,
} from '../support/security-app.js'

afterAll(closeAll)

/** `{origin}` is replaced by the app's origin, e.g. `http://127.0.0.1:53211`. */
const PAYLOADS = [
  'https://evil.example',
  '//evil.example',
  '/\\evil.example',
  '\\\\evil.example',
  '\\/evil.example',
  '/\\/evil.example',
  'https:evil.example',
  'https:/evil.example',
  'http:\\\\evil.example',
  'http://user@evil.example',
  'http://127.0.0.1.evil.example',
  '{origin}.evil.example',
  '{origin}@evil.example',
  'http://evil.example\\@127.0.0.1',
  '%2F%2Fevil.example',
  '/%2F%2Fevil.example',
  'https%3A%2F%2Fevil.example',
  '/\t/evil.example',
  '/\n/evil.example',
  'java\tscript:alert(1)',
  'javascript:alert(1)',
  'JaVaScRiPt:alert(1)',
  'data:text/html,x',
  ' //evil.example',
  '\u0000//evil.example',
  '///evil.example',
  'https://evil.example/{origin}/',
]

const LEGIT = ['/dashboard?x=1', '{origin}/dashboard?x=1', '/a/b?next=%2F%2Fevil.example#top']

const fill = (template: string, app: SecurityApp): string => template.replaceAll('{origin}', app.origin)

const HTML_ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#96;': '`' }
const unescapeHtml = (text: string): string => text.replace(/&(?:amp|lt|gt|quot|#39|#96);/g, (entity) => HTML_ENTITIES[entity]!)

/** The value of the page's hidden `callbackUrl` input, unescaped. */
function hiddenCallbackUrl(res: Response): string {
  const match = /<input type="hidden" name="callbackUrl" value="([^"]*)">/.exec(res.text)
  if (!match) throw new Error(`no hidden callbackUrl input in the page (status ${res.status})`)
  return unescapeHtml(match[1]!)
}

/** Where the response sends the browser: the Location header, or `{ url }` for X-Auth-Return-Redirect. */
function target(res: Response): string {
  if (res.headers['location'] !== undefined) {
    expect(res.status).toBe(302)
    return res.headers['location'] as string
  }
  expect(res.status).toBe(200)
  return (res.body as { url: string }).url
}

/** The callback-url cookie the response set, if any, as URLs to check. */
function callbackCookie(res: Response): string[] {
  const cookie = setCookie(res, CALLBACK_COOKIE)
  return cookie && cookie.value !== '' ? [cookie.value] : []
}

type Sink = (app: SecurityApp, callbackUrl: string, returnRedirect: boolean) => Promise<string[]>

const withReturnRedirect = <T extends { set(name: string, value: string): T }>(test: T, on: boolean): T =>
  on ? test.set('X-Auth-Return-Redirect', '1') : test

/** Each place a callback URL enters, returning every URL that came out of it (the one the user goes to first). */
const SINKS: [string, Sink][] = [
  [
    'callbackUrl in the credentials form',
    async (app, callbackUrl, returnRedirect) => {
      const csrf = await getCsrf(app)
      const res = await withReturnRedirect(app.http.post('/api/auth/callback/credentials'), returnRedirect)
        .set('Cookie', csrf.cookie)
        .type('form')
        .send({ csrfToken: csrf.token, username: USERNAME, password: PASSWORD, callbackUrl })
      return [target(res), ...callbackCookie(res)]
    },
  ],
  [
    'the authjs.callback-url cookie on a credentials sign-in',
    async (app, callbackUrl, returnRedirect) => {
      const csrf = await getCsrf(app)
      const res = await withReturnRedirect(app.http.post('/api/auth/callback/credentials'), returnRedirect)
        .set('Cookie', cookieHeader(csrf.cookie, `${CALLBACK_COOKIE}=${encodeURIComponent(callbackUrl)}`))
        .type('form')
        .send({ csrfToken: csrf.token, username: USERNAME, password: PASSWORD })
      return [target(res), ...callbackCookie(res)]
    },
  ],
  [
    'callbackUrl in POST /signin/:provider',
    async (app, callbackUrl, returnRedirect) => {
      const csrf = await getCsrf(app)
      const res = await withReturnRedirect(app.http.post('/api/auth/signin/credentials'), returnRedirect)
        .set('Cookie', csrf.cookie)
        .type('form')
        .send({ csrfToken: csrf.token, callbackUrl })
      const location = target(res)
      // The sign-in page URL carries the callback URL on to the next step: check both (that one first).
      return [new URL(location).searchParams.get('callbackUrl') ?? `${app.origin}/`, location, ...callbackCookie(res)]
    },
  ],
  [
    'callbackUrl in POST /signout',
    async (app, callbackUrl, returnRedirect) => {
      const csrf = await getCsrf(app)
      const res = await withReturnRedirect(app.http.post('/api/auth/signout'), returnRedirect)
        .set('Cookie', csrf.cookie)
        .type('form')
        .send({ csrfToken: csrf.token, callbackUrl })
      return [target(res), ...callbackCookie(res)]
    },
  ],
]
// (Sign-out never reads the callback-url cookie: test/reliability/signout-redirect.test.ts.)

/** Pages that put the callback URL in their form (and the callback-url cookie). */
const PAGE_SINKS: [string, Sink][] = [
  [
    '?callbackUrl= on GET /signin (hidden input and cookie)',
    async (app, callbackUrl) => {
      const res = await app.http.get(`/api/auth/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`)
      expect(res.status).toBe(200)
      return [hiddenCallbackUrl(res), ...callbackCookie(res)]
    },
  ],
  [
    'the authjs.callback-url cookie on GET /signin',
    async (app, callbackUrl) => {
      const res = await app.http.get('/api/auth/signin').set('Cookie', `${CALLBACK_COOKIE}=${encodeURIComponent(callbackUrl)}`)
      expect(res.status).toBe(200)
      return [hiddenCallbackUrl(res), ...callbackCookie(res)]
    },
  ],
  [
    '?callbackUrl= on GET /signout (hidden input and cookie)',
    async (app, callbackUrl) => {
      const res = await app.http.get(`/api/auth/signout?callbackUrl=${encodeURIComponent(callbackUrl)}`)
      expect(res.status).toBe(200)
      return [hiddenCallbackUrl(res), ...callbackCookie(res)]
    },
  ],
]

describe('open redirects', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp()
  })

  const check = async (sink: Sink, payload: string, returnRedirect: boolean): Promise<void> => {
    const urls = await sink(app, fill(payload, app), returnRedirect)
    expect(urls.length).toBeGreaterThan(0)
    for (const url of urls) expect({ url, origin: originOf(url) }).toEqual({ url, origin: app.origin })
  }
  const keeps = async (sink: Sink, legit: string, returnRedirect: boolean): Promise<void> => {
    const given = fill(legit, app)
    const urls = await sink(app, given, returnRedirect)
    expect(urls[0]).toBe(new URL(given, `${app.origin}/`).href)
  }

  describe.each(SINKS)('%s', (_sink, sink) => {
    describe.each([
      ['302 Location', false],
      ['X-Auth-Return-Redirect JSON', true],
    ] as const)('%s', (_mode, returnRedirect) => {
      it.each(PAYLOADS)('keeps %j on the app origin', (payload) => check(sink, payload, returnRedirect))
      it.each(LEGIT)('keeps the same-origin %j as given', (legit) => keeps(sink, legit, returnRedirect))
    })
  })

  describe.each(PAGE_SINKS)('%s', (_sink, sink) => {
    it.each(PAYLOADS)('keeps %j on the app origin', (payload) => check(sink, payload, false))
    it.each(LEGIT)('keeps the same-origin %j as given', (legit) => keeps(sink, legit, false))
  })
})

describe('open redirects through pages.signIn / pages.signOut', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp({ config: { pages: { signIn: '/login', signOut: '/logout' } } })
  })

  it.each(PAYLOADS)('GET /signin and GET /signout redirect to the app page with a same-origin callbackUrl for %j', async (payload) => {
    for (const page of ['signin', 'signout']) {
      const res = await app.http.get(`/api/auth/${page}?callbackUrl=${encodeURIComponent(fill(payload, app))}`)
      expect(res.status).toBe(302)
      const location = new URL(res.headers['location'] as string)
      expect(location.origin).toBe(app.origin)
      expect(location.pathname).toBe(page === 'signin' ? '/login' : '/logout')
      expect(originOf(location.searchParams.get('callbackUrl'))).toBe(app.origin)
      for (const url of callbackCookie(res)) expect(originOf(url)).toBe(app.origin)
    }
  })
})

describe('forwarded headers from an untrusted client', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp()
  })

  it('ignores X-Forwarded-Host / X-Forwarded-Proto when the app trusts no proxy', async () => {
    const csrf = await getCsrf(app)
    const res = await app.http
      .post('/api/auth/signout')
      .set('Cookie', csrf.cookie)
      .set('X-Forwarded-Host', 'evil.example')
      .set('X-Forwarded-Proto', 'https')
      .type('form')
      .send({ csrfToken: csrf.token, callbackUrl: 'https://evil.example/' })
    expect(res.status).toBe(302)
    expect(originOf(res.headers['location'])).toBe(app.origin)
  })

  it('keeps the sign-in page form on the app origin with a forged X-Forwarded-Host', async () => {
    const res = await app.http.get('/api/auth/signin?callbackUrl=https%3A%2F%2Fevil.example%2F').set('X-Forwarded-Host', 'evil.example')
    expect(res.status).toBe(200)
    expect(originOf(hiddenCallbackUrl(res))).toBe(app.origin)
  })
})

describe('Host headers that the URL parser normalises', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp()
  })

  // The redirect check compares the URL parser's origin of the candidate with the site's origin;
  // when the latter is the Host header as written, any Host the parser rewrites (an explicit
  // default port, IPv4 shorthand) makes every same-origin callbackUrl fail the check.
  it.each([
    ['an explicit default port', 'localhost:80', 'http://localhost'],
    ['IPv4 shorthand', '127.1', 'http://127.0.0.1'],
  ])('keeps a same-origin callbackUrl when the Host has %s (%s)', async (_name, host, origin) => {
    const csrf = await getCsrf(app)
    const res = await app.http
      .post('/api/auth/signout')
      .set('Host', host)
      .set('Cookie', csrf.cookie)
      .type('form')
      .send({ csrfToken: csrf.token, callbackUrl: '/dashboard?x=1' })
    expect(res.status).toBe(302)
    expect(res.headers['location']).toBe(`${origin}/dashboard?x=1`)
  })
})

// `http://user:pw@<site>/` is on the site's origin, but a browser shows the credentials part to the
// user (and some prompt for it or refuse the URL): a phishing link could make the site's own redirect
// carry a message of the attacker's in it. Such a callbackUrl is not kept, not even its path.
describe('a callbackUrl on the app origin that carries credentials', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp()
  })

  const withCredentials = (userinfo: string) => {
    const url = new URL(app.origin)
    return `${url.protocol}//${userinfo}@${url.host}/dashboard`
  }

  describe.each(SINKS)('%s', (_sink, sink) => {
    it.each(['user:pw', 'user', ':pw', 'support%20call%20%2B1-555-0100:x'])('sends %j@<origin>/dashboard to the site root', async (userinfo) => {
      const urls = await sink(app, withCredentials(userinfo), false)
      expect(urls[0]).toBe(`${app.origin}/`)
      for (const url of urls) expect(url).not.toContain('@')
    })
  })

  describe.each(PAGE_SINKS)('%s', (_sink, sink) => {
    it('puts the site root in the page instead of user:pw@<origin>/dashboard', async () => {
      const urls = await sink(app, withCredentials('user:pw'), false)
      expect(urls[0]).toBe(`${app.origin}/`)
      for (const url of urls) expect(url).not.toContain('@')
    })
  })
})

// A callbackUrl is kept in a cookie and sent back in Location: one over 4,096 characters (a whole
// cookie's worth) is not kept, even on the site's origin.
describe('an over-long callbackUrl', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp()
  })

  const ofLength = (length: number) => {
    const start = `${app.origin}/dashboard?q=`
    return start + 'x'.repeat(length - start.length)
  }

  describe.each(SINKS)('%s', (_sink, sink) => {
    it('keeps one of 4,096 characters and sends one of 4,097 to the site root', async () => {
      expect((await sink(app, ofLength(4096), false))[0]).toBe(ofLength(4096))
      expect((await sink(app, ofLength(4097), false))[0]).toBe(`${app.origin}/`)
    })
  })
})
