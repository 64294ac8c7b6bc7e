/**
 * The default address normaliser and the default e-mail, as units: what is accepted, what is
 * refused, and, for every accepted address, that nodemailer's own address parser reads exactly one
 * recipient from it (the property the normaliser exists for). The e-mail escapes what it shows.
 */
import { describe, expect, it } from '@jest/globals'
import addressparser from 'nodemailer/lib/addressparser'
import { normalizeEmailAddress } from '../../src/mail/normalize.js'
import { renderLinkEmail, renderVerificationEmail } from '../../src/mail/message.js'
import { generateVerificationToken, hashVerificationToken, isBoundLink, linkBinding, sameTokenHash } from '../../src/mail/token.js'
import { createHash } from 'node:crypto'

describe('normalizeEmailAddress', () => {
  const accepted: [string, string][] = [
    ['ada@example.com', 'ada@example.com'],
    ['  Ada.Lovelace@Example.COM  ', 'ada.lovelace@example.com'],
    ['ada+tag@example.com', 'ada+tag@example.com'],
    ["o'brien@example.com", "o'brien@example.com"],
    ['user@localhost', 'user@localhost'],
    ['josé@bücher.example', 'josé@bücher.example'],
    ['\uff21\uff24\uff21@example.com', 'ada@example.com'],
    ['ada@example.com\r\n', 'ada@example.com'],
  ]
  it.each(accepted)('accepts %j as %j', (input, expected) => {
    expect(normalizeEmailAddress(input)).toBe(expected)
  })

  const refused = [
    'a@b@c',
    '"a@b"@c',
    'a@b,c@d',
    'a@b\r\nBcc:c@d',
    'a@b\nbcc:c@d',
    'a@b.example\u0085bcc:c@d',
    'a <a@b>',
    'a@b (c)',
    'g: a@b;',
    'a\\@b@c',
    'a@b\u2028c',
    'a@b\u00a0c',
    'a\u200d@b',
    // A refused character before allowed ones, in the local part and in a label after the first.
    'a<b@c.example',
    'a\u202eb@c.example',
    'a@b.ex_ample',
    'a@b\ufeffc',
    'a\u202e@b',
    'a@b\uff20c',
    'a@b\ufe6bc',
    'a@b\uff0cc@d',
    'a@b\uff1bc@d',
    '\uff02a@b\uff02@c',
    'a@b\u2024\u2024c',
    'a@-b.example',
    'a@b-.example',
    'a@[::1]',
    'a..b@c',
    `${'a'.repeat(65)}@b.example`,
    `a@${'b'.repeat(250)}.example`,
    'x'.repeat(400),
    '',
    '@',
  ]
  it.each(refused.map((input) => [JSON.stringify(input), input]))('refuses %s', (_label, input) => {
    expect(() => normalizeEmailAddress(input)).toThrow(/Not a valid e-mail address/)
  })

  // Each refusal for its own reason (the log says which), at the exact bounds of RFC 5321 §4.5.3.1.
  const reasons: [string, string, RegExp][] = [
    ['nothing before the "@"', '@b.example', /the part before or after "@" is empty/],
    ['nothing after the "@"', 'a@', /the part before or after "@" is empty/],
    ['a local part ending in a dot', 'a.@b.example', /the part before "@" has a character that is not allowed/],
    ['a local part starting with a dot', '.a@b.example', /the part before "@" has a character that is not allowed/],
    ['a 65-character local part', `${'a'.repeat(65)}@b.example`, /the address is too long/],
    ['321 characters of input, even with only spaces around an address', `${' '.repeat(321 - 'a@b.example'.length)}a@b.example`, /the address is too long/],
    ['two "@"', 'a@b@c.example', /exactly one "@"/],
    ['an IP literal', 'a@[127.0.0.1]', /the domain is not a host name/],
    // (Broken punycode such as xn--a is no example: Node 24's URL parser takes it, Node 20's and 22's refuse it.)
    ['a domain the pattern takes but IDNA refuses (a label starting with a combining mark)', 'a@\u0338a.example', /the domain is not a host name/],
    ['nothing at all', '', /the address is missing/],
  ]
  it.each(reasons)('refuses %s, saying why', (_what, input, reason) => {
    expect(() => normalizeEmailAddress(input)).toThrow(reason)
    expect(() => normalizeEmailAddress(input)).toThrow(expect.objectContaining({ name: 'InvalidEmailAddressError' }))
  })

  it('accepts the longest addresses there are: a 64-character local part, 254 characters in all, 320 characters of input', () => {
    const local = 'a'.repeat(64)
    expect(normalizeEmailAddress(`${local}@b.example`)).toBe(`${local}@b.example`)
    // 254: the local part, "@", and labels of 63 characters and less.
    const domain = `${'d'.repeat(63)}.${'e'.repeat(63)}.${'g'.repeat(254 - 65 - 128)}`
    const longest = `${local}@${domain}`
    expect(longest).toHaveLength(254)
    expect(normalizeEmailAddress(longest)).toBe(longest)
    expect(() => normalizeEmailAddress(`${local}@${domain}g`)).toThrow(/the address is too long/)
    const padded = `${' '.repeat(320 - 'a@b.example'.length)}a@b.example`
    expect(padded).toHaveLength(320)
    expect(normalizeEmailAddress(padded)).toBe('a@b.example')
  })

  it('refuses what is not a string', () => {
    for (const input of [undefined, null, 42, ['a@b'], { email: 'a@b' }]) expect(() => normalizeEmailAddress(input)).toThrow(TypeError)
  })

  it("leaves nodemailer's address parser exactly one address, the same, for every address it accepts", () => {
    const candidates = [...accepted.map(([input]) => input), "a!#$%&'*+/=?^_`{|}~-@example.com", 'a.b-c@d-e.f.example', 'ü@ü.example']
    for (const candidate of candidates) {
      const address = normalizeEmailAddress(candidate)
      expect(addressparser(address)).toEqual([{ address, name: '' }])
    }
  })
})

describe('verification tokens', () => {
  it('compares stored hashes exactly: another length or one character off is another hash (never an exception)', () => {
    const hash = hashVerificationToken('token', 'secret')
    expect(sameTokenHash(hash, hash)).toBe(true)
    expect(sameTokenHash(hash, `${hash} `)).toBe(false)
    expect(sameTokenHash(hash, hash.slice(1))).toBe(false)
    expect(sameTokenHash(hash, `${hash.slice(0, -1)}${hash.endsWith('0') ? '1' : '0'}`)).toBe(false)
    expect(sameTokenHash(hash, hash.toUpperCase())).toBe(false)
  })

  it("takes a link's browser binding made under any configured secret (rotation), and nothing else", () => {
    const secrets = ['new secret', 'old secret']
    expect(isBoundLink(linkBinding('token', 'new secret'), 'token', secrets)).toBe(true)
    expect(isBoundLink(linkBinding('token', 'old secret'), 'token', secrets)).toBe(true)
    expect(isBoundLink(linkBinding('token', 'gone secret'), 'token', secrets)).toBe(false)
    expect(isBoundLink(linkBinding('other token', 'new secret'), 'token', secrets)).toBe(false)
    expect(isBoundLink(`${linkBinding('token', 'new secret')}x`, 'token', secrets)).toBe(false)
    expect(isBoundLink('', 'token', secrets)).toBe(false)
    expect(isBoundLink(undefined, 'token', secrets)).toBe(false)
  })

  it('are 32 random bytes in hex, different each time', () => {
    const tokens = new Set(Array.from({ length: 100 }, generateVerificationToken))
    expect(tokens.size).toBe(100)
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{64}$/)
  })

  it('are stored as Auth.js stores them: sha256(token + secret), hex', () => {
    expect(hashVerificationToken('abc', 'secret')).toBe(createHash('sha256').update('abcsecret').digest('hex'))
  })
})

describe('the default e-mail', () => {
  const url = 'https://example.com/api/auth/callback/email?callbackUrl=https%3A%2F%2Fexample.com%2F&token=abc&email=ada%40example.com'

  it('has a subject, a text part and an HTML part, with the host and the link', () => {
    const mail = renderVerificationEmail({ url, theme: {} })
    expect(mail.subject).toBe('Sign in to example.com')
    expect(mail.text).toContain(url)
    expect(mail.text).toContain('Sign in to example.com')
    expect(mail.html).toContain(`href="${url.replaceAll('&', '&amp;')}"`)
    expect(mail.html).toContain('Sign in to <strong>example.com</strong>')
  })

  it('says, in both parts, that the link works once and may be ignored; no logo unless the theme has one', () => {
    const mail = renderVerificationEmail({ url, theme: {} })
    const note = 'The link works once. If you did not ask for it, you can ignore this e-mail.'
    expect(mail.text).toBe(`Sign in to example.com\n\n${url}\n\n${note}\n`)
    expect(mail.html).toContain(`<p style="margin:16px 0 0;font-size:14px;line-height:1.5;color:#636c76">${note}</p>`)
    expect(mail.html).not.toContain('<img')
    expect(mail.html).toMatch(/<a href="[^"]+" target="_blank" style="[^"]+">Sign in<\/a>/)
  })

  it('puts each paragraph of a note in both parts, in order', () => {
    const mail = renderLinkEmail({ url, theme: {}, subject: 'Reset', heading: ['Reset on ', 'example.com'], button: 'Reset', note: ['First paragraph.', 'Second paragraph.'] })
    expect(mail.text).toBe(`Reset on example.com\n\n${url}\n\nFirst paragraph.\n\nSecond paragraph.\n`)
    const paragraph = (text: string) => `<p style="margin:16px 0 0;font-size:14px;line-height:1.5;color:#636c76">${text}</p>`
    expect(mail.html).toContain(`${paragraph('First paragraph.')}\n${paragraph('Second paragraph.')}\n`)
  })

  it('escapes what it shows and drops unsafe theme values', () => {
    const hostile = `https://example.com/api/auth/callback/email?callbackUrl=%22%3E&token=t&email="><script>alert(1)</script>`
    const mail = renderVerificationEmail({ url: hostile, theme: { brandColor: 'red;}</style><script>x</script>', logo: 'javascript:alert(1)' } })
    expect(mail.html).not.toContain('<script>')
    expect(mail.html).toContain('&lt;script&gt;')
    expect(mail.html).not.toContain('javascript:')
    expect(mail.html).toContain('#346df1')
  })

  it('makes a logo given as a path absolute on the site, since a mail client has no page to resolve it against', () => {
    const mail = renderVerificationEmail({ url: 'https://example.com/api/auth/callback/email?token=t&email=a%40b.c', theme: { logo: '/brand/logo.png' } })
    expect(mail.html).toContain('src="https://example.com/brand/logo.png"')
  })
})
