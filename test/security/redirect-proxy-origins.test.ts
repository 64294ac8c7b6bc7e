/**
 * The redirect proxy's allow-list (`redirectProxy.allowedOrigins`): exact origins and one-label
 * wildcards, nothing looser. The end-to-end refusal is in test/oauth/proxy.test.ts.
 */
import { describe, expect, it } from '@jest/globals'
import Portcullis, { InvalidConfigurationError } from 'portcullis'
import { originAllowed, parseOriginPattern, type OriginPattern } from '../../src/security/redirect.js'
import { SECRET, credentialsProvider } from '../support/flow.js'

const patterns = (...values: string[]): OriginPattern[] => values.map((value) => parseOriginPattern(value)!)

describe('redirectProxy.allowedOrigins', () => {
  it('takes an exact origin: scheme, host and port must all match', () => {
    const allowed = patterns('https://staging.example.com', 'http://localhost:3000')
    expect(originAllowed('https://staging.example.com', allowed)).toBe(true)
    expect(originAllowed('http://localhost:3000', allowed)).toBe(true)
    for (const origin of ['http://staging.example.com', 'https://staging.example.com:8443', 'https://x.staging.example.com', 'https://staging.example.com.evil.example', 'https://evilstaging.example.com', 'http://localhost:3001']) {
      expect([origin, originAllowed(origin, allowed)]).toEqual([origin, false])
    }
  })

  it('takes https://*.domain for exactly one label in place of the star', () => {
    const allowed = patterns('https://*.preview.example')
    expect(originAllowed('https://pr-12.preview.example', allowed)).toBe(true)
    for (const origin of ['https://preview.example', 'https://a.b.preview.example', 'https://pr-12.preview.example.evil.example', 'http://pr-12.preview.example', 'https://pr-12.preview.example:444', 'https://evilpreview.example']) {
      expect([origin, originAllowed(origin, allowed)]).toEqual([origin, false])
    }
  })

  it('refuses at init what is not an origin, naming the entry', () => {
    for (const value of ['https://example.com/path', 'https://user:pw@example.com', 'example.com', 'https://*', 'https://a.*.example', 'ftp://example.com', 'https://example.com?x=1', '*']) {
      expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], redirectProxy: { allowedOrigins: [value] } })).toThrow(InvalidConfigurationError)
      expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], redirectProxy: { allowedOrigins: [value] } })).toThrow(value)
    }
    expect(() => Portcullis({ secret: SECRET, providers: [credentialsProvider], redirectProxy: { allowedOrigins: ['https://ok.example', 'https://*.ok.example/'] } })).not.toThrow()
  })
})
