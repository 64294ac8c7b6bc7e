/** Chunking of large cookie values, and clearing of stale chunks. */
import { describe, expect, it } from '@jest/globals'
import {
  MAX_COOKIE_CHUNKS,
  clearChunkedCookie,
  defaultCookies,
  expiredCookie,
  readChunkedCookie,
  readChunkedCookieForms,
  resolveCookies,
  writeChunkedCookie,
} from '../../src/session/cookies.js'
import { FEATURES } from '../../src/features/index.js'

const { sessionToken } = defaultCookies(false, FEATURES)

describe('the default cookies', () => {
  // Public surface (DESIGN.md): Auth.js v5's names, so a deployment moving between the two keeps its
  // sessions, and the attributes every cookie needs (HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS).
  const base = (secure: boolean) => ({ httpOnly: true, sameSite: 'lax', path: '/', secure })
  const table = (secure: boolean, prefix: string) => ({
    sessionToken: { name: `${prefix}authjs.session-token`, options: base(secure) },
    callbackUrl: { name: `${prefix}authjs.callback-url`, options: base(secure) },
    csrfToken: { name: `${secure ? '__Host-' : ''}authjs.csrf-token`, options: base(secure) },
    pkceCodeVerifier: { name: `${prefix}authjs.pkce.code_verifier`, options: { ...base(secure), maxAge: 900 } },
    state: { name: `${prefix}authjs.state`, options: { ...base(secure), maxAge: 900 } },
    nonce: { name: `${prefix}authjs.nonce`, options: { ...base(secure), maxAge: 900 } },
    emailLink: { name: `${prefix}authjs.email-link`, options: base(secure) },
    webauthnChallenge: { name: `${prefix}authjs.challenge`, options: { ...base(secure), maxAge: 300 } },
    twoFactorPending: { name: `${prefix}authjs.two-factor`, options: { ...base(secure), maxAge: 300 } },
    emailChangeCode: { name: `${prefix}authjs.email-change-code`, options: { ...base(secure), maxAge: 900 } },
    impersonatorSession: { name: `${prefix}authjs.impersonator-session`, options: { ...base(secure), maxAge: 86_400 } },
    signUpCode: { name: `${prefix}authjs.sign-up-code`, options: { ...base(secure), maxAge: 900 } },
    signInForm: { name: `${prefix}authjs.signin-form`, options: { ...base(secure), maxAge: 300 } },
    ssoSignIn: { name: `${prefix}authjs.sso-sign-in`, options: { ...base(secure), maxAge: 600 } },
  })

  it('over HTTP: the plain names, not Secure', () => {
    expect(defaultCookies(false, FEATURES)).toEqual(table(false, ''))
  })

  it('over HTTPS: __Secure- names (__Host- for the CSRF cookie, bound to the host), Secure', () => {
    expect(defaultCookies(true, FEATURES)).toEqual(table(true, '__Secure-'))
  })

  it('gives each cookie options of its own: changing one changes no other', () => {
    const cookies = defaultCookies(false, FEATURES)
    ;(cookies.sessionToken.options as { path: string }).path = '/changed'
    expect(cookies.callbackUrl.options.path).toBe('/')
    expect(defaultCookies(false, FEATURES).sessionToken.options.path).toBe('/')
  })

  it('resolveCookies: an override replaces its cookie whole, the rest stay, and all of it is frozen', () => {
    const cookies = resolveCookies(true, { sessionToken: { name: 'app.session', options: { httpOnly: true, sameSite: 'strict', path: '/app', secure: true } } }, FEATURES)
    expect(cookies.sessionToken).toEqual({ name: 'app.session', options: { httpOnly: true, sameSite: 'strict', path: '/app', secure: true } })
    expect(cookies.state).toEqual(table(true, '__Secure-').state)
    expect(Object.isFrozen(cookies)).toBe(true)
    for (const cookie of Object.values(cookies)) {
      expect(Object.isFrozen(cookie)).toBe(true)
      expect(Object.isFrozen(cookie.options)).toBe(true)
    }
  })
})

describe('expiredCookie', () => {
  it('clears a cookie with the attributes it was set with, Max-Age=0, and without the Expires date it was set with (the two would contradict each other)', () => {
    const cookie = { name: 'authjs.email-link', options: { httpOnly: true, sameSite: 'lax', path: '/api', secure: true, domain: 'example.com', expires: new Date(Date.UTC(2030, 0, 1)) } } as const
    expect(expiredCookie(cookie)).toEqual({ name: 'authjs.email-link', value: '', options: { httpOnly: true, sameSite: 'lax', path: '/api', secure: true, domain: 'example.com', maxAge: 0 } })
    expect(expiredCookie(cookie, 'authjs.email-link.2').name).toBe('authjs.email-link.2')
    // The cookie's own options are left as they were.
    expect(cookie.options.expires).toBeInstanceOf(Date)
  })
})

describe('chunked cookies', () => {
  it('keeps a small value in one cookie and clears chunks left from a larger one', () => {
    const written = writeChunkedCookie(sessionToken, 'small', {}, { 'authjs.session-token.0': 'a', 'authjs.session-token.1': 'b', other: 'x' })
    expect(written.map((c) => [c.name, c.value, c.options.maxAge])).toEqual([
      ['authjs.session-token', 'small', undefined],
      ['authjs.session-token.0', '', 0],
      ['authjs.session-token.1', '', 0],
    ])
  })

  it('splits a large value into name.0..n under 4 KB each, joins it back in index order, and clears the unchunked cookie', () => {
    const value = 'x'.repeat(5000) + 'y'.repeat(5000)
    const written = writeChunkedCookie(sessionToken, value, {}, { 'authjs.session-token': 'old' })
    const chunks = written.filter((c) => c.value !== '')
    expect(chunks.map((c) => c.name)).toEqual(['authjs.session-token.0', 'authjs.session-token.1', 'authjs.session-token.2'])
    expect(chunks.every((c) => c.value.length <= 4096 - 160)).toBe(true)
    expect(written.find((c) => c.name === 'authjs.session-token')?.options.maxAge).toBe(0)

    // Browsers may send them in any order.
    const jar = Object.fromEntries(chunks.reverse().map((c) => [c.name, c.value]))
    expect(readChunkedCookie(jar, 'authjs.session-token')).toBe(value)
  })

  it('ignores look-alike names', () => {
    expect(readChunkedCookie({ 'authjs.session-token-x': 'a', 'authjs.session-token.x': 'b', 'authjs.session-tokens.0': 'c' }, 'authjs.session-token')).toBeUndefined()
  })

  it('clears every chunk present, or the plain name when none is', () => {
    expect(clearChunkedCookie(sessionToken, { 'authjs.session-token.0': 'a', 'authjs.session-token.1': 'b' }).map((c) => c.name)).toEqual([
      'authjs.session-token.0',
      'authjs.session-token.1',
    ])
    expect(clearChunkedCookie(sessionToken, {})).toEqual([{ name: 'authjs.session-token', value: '', options: { httpOnly: true, sameSite: 'lax', path: '/', secure: false, maxAge: 0 } }])
  })

  it('joins the chunks only up to the first missing index', () => {
    expect(readChunkedCookie({ 'authjs.session-token.2': 'c', 'authjs.session-token.0': 'a', 'authjs.session-token.1': 'b' }, 'authjs.session-token')).toBe('abc')
    expect(readChunkedCookie({ 'authjs.session-token.0': 'a', 'authjs.session-token.2': 'c' }, 'authjs.session-token')).toBe('a')
    expect(readChunkedCookie({ 'authjs.session-token.0': 'a', 'authjs.session-token.1': '', 'authjs.session-token.2': 'c' }, 'authjs.session-token')).toBe('a')
    expect(readChunkedCookie({ 'authjs.session-token.1': 'b' }, 'authjs.session-token')).toBeUndefined()
  })

  it('does not take a non-canonical index (name.01) for a chunk', () => {
    expect(readChunkedCookie({ 'authjs.session-token.0': 'a', 'authjs.session-token.01': 'b' }, 'authjs.session-token')).toBe('a')
    expect(clearChunkedCookie(sessionToken, { 'authjs.session-token.00': 'a' }).map((c) => c.name)).toEqual(['authjs.session-token'])
  })
})

describe('the chunk cap', () => {
  // A cookie's 4096 bytes less room for its name and attributes, as cookies.ts budgets them.
  const chunkSize = 4096 - 160

  /** A request with `count` chunks `name.0 … name.{count-1}` of one character each. */
  const manyChunks = (count: number): Record<string, string> =>
    Object.fromEntries(Array.from({ length: count }, (_, index) => [`authjs.session-token.${index}`, 'x']))
  const clearedNames = (cookies: { name: string; options: { maxAge?: number } }[]): string[] =>
    cookies.filter((c) => c.options.maxAge === 0).map((c) => c.name)
  const firstNames = (count: number): string[] => Array.from({ length: count }, (_, index) => `authjs.session-token.${index}`)

  it('is 10 chunks: more than the 3 chunks jwt.maxSize allows by default, and than any usual request header limit carries', () => {
    expect(MAX_COOKIE_CHUNKS).toBe(10)
  })

  it('reads at most MAX_COOKIE_CHUNKS chunks; later ones are ignored', () => {
    expect(readChunkedCookie(manyChunks(10_000), 'authjs.session-token')).toBe('x'.repeat(MAX_COOKIE_CHUNKS))
    expect(readChunkedCookieForms(manyChunks(10_000), 'authjs.session-token').chunked).toBe('x'.repeat(MAX_COOKIE_CHUNKS))
  })

  it('clears at most MAX_COOKIE_CHUNKS chunks on sign-out, however many the request carries (10,000 sent)', () => {
    const cleared = clearChunkedCookie(sessionToken, { ...manyChunks(10_000), 'authjs.session-token': 'whole' })
    expect(cleared.map((c) => c.name)).toEqual(['authjs.session-token', ...firstNames(MAX_COOKIE_CHUNKS)])
  })

  it('clears at most MAX_COOKIE_CHUNKS leftover chunks when writing (10,000 sent)', () => {
    const written = writeChunkedCookie(sessionToken, 'small', {}, manyChunks(10_000))
    expect(written).toHaveLength(1 + MAX_COOKIE_CHUNKS)
    expect(clearedNames(written)).toEqual(firstNames(MAX_COOKIE_CHUNKS))
  })

  it('refuses to write a value that needs more chunks than it reads back', () => {
    expect(writeChunkedCookie(sessionToken, 'x'.repeat(MAX_COOKIE_CHUNKS * chunkSize), {}, {})).toHaveLength(MAX_COOKIE_CHUNKS)
    expect(() => writeChunkedCookie(sessionToken, 'x'.repeat(MAX_COOKIE_CHUNKS * chunkSize + 1), {}, {})).toThrow(
      new TypeError(`writeChunkedCookie: a value of ${MAX_COOKIE_CHUNKS * chunkSize + 1} bytes needs more than ${MAX_COOKIE_CHUNKS} chunks of ${chunkSize}.`),
    )
  })

  it('writes a value of exactly one chunk\'s size as the whole cookie, and one byte more as two chunks', () => {
    expect(writeChunkedCookie(sessionToken, 'x'.repeat(chunkSize), {}, {}).map((cookie) => [cookie.name, cookie.value.length])).toEqual([['authjs.session-token', chunkSize]])
    expect(writeChunkedCookie(sessionToken, 'x'.repeat(chunkSize + 1), {}, {}).map((cookie) => [cookie.name, cookie.value.length])).toEqual([
      ['authjs.session-token.0', chunkSize],
      ['authjs.session-token.1', 1],
    ])
  })
})

describe('readChunkedCookieForms', () => {
  it('gives the whole cookie and the joined chunks apart, and the chunk names present within the cap', () => {
    const forms = readChunkedCookieForms(
      { 'authjs.session-token': 'whole', 'authjs.session-token.1': 'b', 'authjs.session-token.0': 'a', 'authjs.session-token.3': 'd', 'authjs.session-token.12': 'z' },
      'authjs.session-token',
    )
    expect(forms).toEqual({ whole: 'whole', chunked: 'ab', chunkNames: ['authjs.session-token.0', 'authjs.session-token.1', 'authjs.session-token.3'] })
  })

  it('takes empty values for absent, but still names them for clearing', () => {
    expect(readChunkedCookieForms({ 'authjs.session-token': '', 'authjs.session-token.0': '' }, 'authjs.session-token')).toEqual({
      whole: undefined,
      chunked: undefined,
      chunkNames: ['authjs.session-token.0'],
    })
  })

  it('finds a chunk among many other cookies, and none in names that only look like one (other length, other separator)', () => {
    const others = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`cookie${i}`, 'v']))
    const lookalikes = { 'authjs.session-token.': 'x', 'authjs.session-token-0': 'x', 'authjs.session-tokeN.0': 'x', 'authjs.session-token.10': 'x', 'xauthjs.session-token.0': 'x' }
    expect(readChunkedCookieForms({ ...others, ...lookalikes, 'authjs.session-token': 'whole' }, 'authjs.session-token')).toEqual({ whole: 'whole', chunked: undefined, chunkNames: [] })
    expect(readChunkedCookieForms({ ...others, ...lookalikes, 'authjs.session-token.0': 'a' }, 'authjs.session-token')).toEqual({
      whole: undefined,
      chunked: 'a',
      chunkNames: ['authjs.session-token.0'],
    })
  })

  it('takes no chunk from the prototype: only the cookies the request carries', () => {
    const inherited = Object.create({ 'authjs.session-token.0': 'planted' }) as Record<string, string>
    inherited['authjs.session-token'] = 'whole'
    expect(readChunkedCookieForms(inherited, 'authjs.session-token')).toEqual({ whole: 'whole', chunked: undefined, chunkNames: [] })
  })
})
