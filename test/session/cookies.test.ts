/** Chunking of large cookie values, and clearing of stale chunks. */
import { describe, expect, it } from '@jest/globals'
import { clearChunkedCookie, defaultCookies, readChunkedCookie, writeChunkedCookie } from '../../src/session/cookies.js'

const { sessionToken } = defaultCookies(false)

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

    // Browsers may send them in any order; index 10 sorts after 2.
    const jar = Object.fromEntries(chunks.reverse().map((c) => [c.name, c.value]))
    expect(readChunkedCookie(jar, 'authjs.session-token')).toBe(value)
    expect(readChunkedCookie({ 'authjs.session-token.10': 'c', 'authjs.session-token.2': 'b', 'authjs.session-token.0': 'a' }, 'authjs.session-token')).toBe('abc')
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
})
