/**
 * HTML injection into the built-in pages: whatever the configuration or the request puts on a page
 * (provider names, field labels, the error code, the callback URL, the theme) is escaped or
 * dropped, and every page forbids framing and scripts through its CSP header.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Response } from 'supertest'
import type { Theme } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { CALLBACK_COOKIE, acceptingAuthorize, closeAll, startApp, type SecurityApp } from '../support/security-app.js'

afterAll(closeAll)

const SCRIPT = '"><script>alert(1)</script>'
const MARKUP = [
  SCRIPT,
  "'><script>alert(1)</script>",
  '" autofocus onfocus="alert(1)',
  "' onmouseover='alert(1)",
  '</style><script>alert(1)</script>',
  '</title><script>alert(1)</script>',
  '<svg onload=alert(1)>',
  '<img src=x onerror=alert(1)>',
  'javascript:alert(1)',
]

/** Elements an injection would add to the page. */
const INJECTED_ELEMENT = /<(?:script|svg|iframe|object|embed|base)\b|<img src=x/i
/** Attributes an injection would add to a real tag (outside any quoted value): event handlers, autofocus. */
const INJECTED_ATTRIBUTE = /\son[a-z]+\s*=|\sautofocus\b/i
/** A script URL as the value of a URL attribute. */
const SCRIPT_URL = /(?:href|src|action)\s*=\s*["']?\s*javascript:/i

/** A tag's attribute names, with every double-quoted value emptied (all the pages quote with "). */
const unquoted = (tag: string): string => tag.replace(/"[^"]*"/g, '""')

/** The page's tags, `<name …>`, where an injected attribute would take effect (text between them is inert). */
const tags = (page: string): string[] => page.match(/<[a-zA-Z][^>]*>/g) ?? []

function expectSafePage(res: Response): void {
  expect(res.status).toBeLessThan(600)
  expect(res.headers['content-type']).toMatch(/^text\/html/)
  expect(res.text).toMatch(/^<!doctype html>/i)
  expect(res.text).not.toMatch(INJECTED_ELEMENT)
  expect(tags(res.text).filter((tag) => INJECTED_ATTRIBUTE.test(unquoted(tag)) || SCRIPT_URL.test(tag))).toEqual([])
  expect(res.headers['content-security-policy']).toEqual(expect.stringContaining("frame-ancestors 'none'"))
  expect(res.headers['content-security-policy']).not.toMatch(/script-src[^;]*(?:'unsafe-inline'|\*)/)
  expect(res.headers['x-frame-options']).toBe('DENY')
}

const PAGES = ['/api/auth/signin', '/api/auth/signout', '/api/auth/error', '/api/auth/error?error=Configuration', '/api/auth/verify-request']

describe('pages of an app configured with markup', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp({
      config: {
        providers: [
          Credentials({
            id: 'hostile',
            name: SCRIPT,
            credentials: {
              username: { label: SCRIPT, placeholder: SCRIPT },
              password: { label: '" autofocus onfocus="alert(1)', placeholder: "' onmouseover='alert(1)", type: SCRIPT },
              [SCRIPT]: { label: '<svg onload=alert(1)>' },
            },
            authorize: acceptingAuthorize() as never,
          }),
        ],
        theme: {
          colorScheme: SCRIPT as Theme['colorScheme'],
          brandColor: 'red;}</style><script>alert(1)</script>',
          buttonText: SCRIPT,
          logo: `https://cdn.example/logo.png?${SCRIPT}`,
        },
      },
    })
  })

  it('shows the provider name and labels escaped on the sign-in page', async () => {
    const res = await app.http.get('/api/auth/signin')
    expectSafePage(res)
    expect(res.status).toBe(200)
    // Escaped, not dropped: the page still says what the app configured.
    expect(res.text).toContain('Sign in with &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(res.text).toContain('placeholder="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"')
    expect(res.text).toContain('placeholder="&#39; onmouseover=&#39;alert(1)"')
    // A field type outside the allowed list becomes text rather than being echoed.
    expect(res.text).not.toMatch(/type="[^"]*script/)
  })

  it('puts no theme markup into the <style> element or the logo', async () => {
    const res = await app.http.get('/api/auth/signin')
    expectSafePage(res)
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.text)?.[1] ?? ''
    // The invalid colours fell back to the defaults; nothing of them reached the CSS.
    expect(style).toContain(':root{--brand:#346df1;--button-text:#fff}')
    expect(style).not.toMatch(/<|red;|script|alert\(/)
    expect(res.text).not.toContain('</style><script>')
  })

  it.each(PAGES)('GET %s is escaped and framed by CSP', async (path) => {
    expectSafePage(await app.http.get(path))
  })

  it('lists the provider name only as JSON from GET /providers, never as a page', async () => {
    const res = await app.http.get('/api/auth/providers')
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    expect((res.body as Record<string, { name: string }>)['hostile']?.name).toBe(SCRIPT)
  })
})

describe('pages given markup in the request', () => {
  let app: SecurityApp

  beforeAll(async () => {
    app = await startApp()
  })

  describe.each(MARKUP)('payload %j', (payload) => {
    const q = encodeURIComponent(payload)

    it.each([
      `/api/auth/signin?error=${q}`,
      `/api/auth/signin?error=CredentialsSignin&code=${q}`,
      `/api/auth/error?error=${q}`,
      `/api/auth/verify-request?error=${q}`,
    ])('GET %s does not echo the value', async (path) => {
      const res = await app.http.get(path)
      expectSafePage(res)
      expect(res.status).toBeLessThan(500)
      // Unknown error codes get a generic message; the value itself never reaches the page.
      expect(res.text).not.toContain('alert(1)')
    })

    it.each([`/api/auth/signin?callbackUrl=${q}`, `/api/auth/signout?callbackUrl=${q}`])('GET %s keeps the callback URL inert', async (path) => {
      const res = await app.http.get(path)
      expectSafePage(res)
      expect(res.status).toBe(200)
    })

    it('GET /signin with the markup in the callback-url cookie keeps it inert', async () => {
      const res = await app.http.get('/api/auth/signin').set('Cookie', `${CALLBACK_COOKIE}=${q}`)
      expectSafePage(res)
      expect(res.status).toBe(200)
    })
  })

  it('a same-origin callbackUrl with markup in its path or query is kept, but escaped', async () => {
    const callbackUrl = `/next?${SCRIPT}`
    for (const page of ['signin', 'signout']) {
      const res = await app.http.get(`/api/auth/${page}?callbackUrl=${encodeURIComponent(callbackUrl)}`)
      expectSafePage(res)
      expect(res.text).toMatch(new RegExp(`name="callbackUrl" value="${app.origin.replaceAll('.', '\\.')}/next\\?`))
    }
  })

  it('the CSRF token on the page is the cookie token, so a forged cookie cannot put markup there', async () => {
    const res = await app.http.get('/api/auth/signin').set('Cookie', `authjs.csrf-token=${encodeURIComponent(`${SCRIPT}|abc`)}`)
    expectSafePage(res)
    expect(res.text).toMatch(/name="csrfToken" value="[0-9a-f]{64}"/)
  })
})
