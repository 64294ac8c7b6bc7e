/**
 * E-mail sign-in end to end, with real parts: the Nodemailer provider sends through a real SMTP
 * server started in this process (smtp-server), the message is parsed (mailparser), its link is
 * followed by another "browser", and the session is read back. JWT and database sessions, on
 * SQLite; the single-use rule under 50 concurrent uses on SQLite and PostgreSQL.
 */
import { createHash } from 'node:crypto'
import express from 'express'
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import type { Account, Adapter, EventsOptions, User } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { SECRET } from '../support/flow.js'
import { linkOf, startSmtpServer } from '../support/smtp.js'
import { Browser, cookiesSet, followLink, useEmailRig, mountEmailApp, paramsOf, recordingLogger, requestLink, withParams } from './email-app.js'

const rig = useEmailRig()

/** Records the events of a sign-in. */
function recorder() {
  const events: { name: keyof EventsOptions; message: { user?: User; account?: Account | null; isNewUser?: boolean } }[] = []
  const on = (name: keyof EventsOptions) => (message: unknown) => void events.push({ name, message: message as (typeof events)[number]['message'] })
  return { events, config: { events: { signIn: on('signIn'), createUser: on('createUser'), updateUser: on('updateUser'), linkAccount: on('linkAccount') } } }
}

const verifyRequestUrl = () => `${rig.app.url}/api/auth/verify-request?provider=nodemailer&type=email`

await describeWithDatabase('sqlite', 'e-mail sign-in on SQLite', (server) => {
  const db = migratedDatabase(server)

  describe.each(['database', 'jwt'] as const)('with %s sessions', (strategy) => {
    it('mails a themed link (HTML and text) to the address, and the link signs a new user in on another device', async () => {
      const { events, config } = recorder()
      mountEmailApp(rig.app, db.knex, rig.smtp, { session: { strategy }, theme: { brandColor: '#0f766e' }, ...config })
      const browser = new Browser()
      const response = await requestLink(browser, rig.app.url, 'Ada@Example.com', { callbackUrl: '/dashboard' })
      expect(response.status).toBe(302)
      expect(response.headers.get('location')).toBe(verifyRequestUrl())
      // Nothing of a session yet.
      expect(cookiesSet(response)).not.toContain('authjs.session-token')

      const mail = await rig.smtp.nextMessage()
      expect(mail.to).toEqual(['ada@example.com'])
      expect(mail.parsed.to).toMatchObject({ value: [{ address: 'ada@example.com' }] })
      expect(mail.parsed.from?.text).toBe('"Portcullis tests" <auth@example.test>')
      const host = new URL(rig.app.url).host
      expect(mail.parsed.subject).toBe(`Sign in to ${host}`)
      const link = linkOf(mail)
      expect(link.startsWith(`${rig.app.url}/api/auth/callback/nodemailer?`)).toBe(true)
      expect(paramsOf(link)).toEqual({ token: expect.stringMatching(/^[0-9a-f]{64}$/), email: 'ada@example.com', callbackUrl: `${rig.app.url}/dashboard` })
      // The HTML part: the same link (escaped in the attribute), the host, the theme's colour.
      const html = mail.parsed.html as string
      expect(html).toContain(`href="${link.replaceAll('&', '&amp;')}"`)
      expect(html).toContain(`Sign in to <strong>${host}</strong>`)
      expect(html).toContain('#0f766e')

      // Another device: no cookie of the first one. It asks first; the token is untouched until answered.
      const phone = new Browser()
      const page = await phone.request(link)
      expect(page.status).toBe(200)
      expect(await page.clone().text()).toContain('Sign in as <strong>ada@example.com</strong>?')
      expect(cookiesSet(page)).not.toContain('authjs.session-token')
      expect(await db.knex('VerificationToken').select()).toHaveLength(1)
      const callback = await phone.submitForm(page)
      expect(callback.status).toBe(302)
      expect(callback.headers.get('location')).toBe(`${rig.app.url}/dashboard`)
      const session = await sessionOf(phone, rig.app.url)
      expect(session?.user).toMatchObject({ email: 'ada@example.com', id: expect.any(String) })
      expect(await sessionOf(browser, rig.app.url)).toBeNull()

      const users = await db.knex('User').select()
      expect(users).toHaveLength(1)
      expect(users[0]).toMatchObject({ id: session!.user.id, email: 'ada@example.com' })
      expect(users[0].emailVerified).not.toBeNull()
      // As Auth.js: no account row for e-mail, and the token is gone.
      expect(await db.knex('Account').select()).toEqual([])
      expect(await db.knex('VerificationToken').select()).toEqual([])
      expect(await db.knex('Session').count({ n: '*' }).first()).toEqual({ n: strategy === 'database' ? 1 : 0 })

      expect(events.map((event) => event.name)).toEqual(['createUser', 'signIn'])
      expect(events[1]!.message).toMatchObject({
        isNewUser: true,
        user: { id: session!.user.id, email: 'ada@example.com' },
        account: { provider: 'nodemailer', type: 'email', providerAccountId: 'ada@example.com', userId: session!.user.id },
      })
    })

    it('marks an existing user (stored with another letter case) verified and signs them in, without creating one', async () => {
      const { events, config } = recorder()
      await db.knex('User').insert({ id: 'u-grace', name: 'Grace Hopper', email: 'Grace@Example.com' })
      mountEmailApp(rig.app, db.knex, rig.smtp, { session: { strategy }, pages: { newUser: '/welcome' }, ...config })
      const browser = new Browser()
      expect((await requestLink(browser, rig.app.url, 'grace@example.com')).status).toBe(302)
      const callback = await browser.request(linkOf(await rig.smtp.nextMessage()))
      // Not a new user: the callback URL (the site's root by default), not pages.newUser.
      expect(callback.headers.get('location')).toBe(`${rig.app.url}/`)
      expect((await sessionOf(browser, rig.app.url))?.user).toMatchObject({ id: 'u-grace', name: 'Grace Hopper' })
      const users = await db.knex('User').select()
      expect(users).toHaveLength(1)
      expect(users[0].emailVerified).not.toBeNull()
      expect(events.map((event) => event.name)).toEqual(['updateUser', 'signIn'])
      expect(events[1]!.message.isNewUser).toBe(false)
    })
  })

  it('sends a new user to pages.newUser, with the callback URL', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp, { pages: { newUser: '/welcome' } })
    const browser = new Browser()
    await requestLink(browser, rig.app.url, 'new@example.com', { callbackUrl: '/dashboard' })
    const callback = await browser.request(linkOf(await rig.smtp.nextMessage()))
    expect(callback.headers.get('location')).toBe(`${rig.app.url}/welcome?callbackUrl=${encodeURIComponent(`${rig.app.url}/dashboard`)}`)
  })

  it('stores only sha256(token + secret) in hex, as Auth.js does, with the expiry of maxAge', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp, {}, { maxAge: 600 })
    const before = Date.now()
    await requestLink(new Browser(), rig.app.url, 'ada@example.com')
    const { token } = paramsOf(linkOf(await rig.smtp.nextMessage()))
    const rows = await db.knex('VerificationToken').select()
    expect(rows).toHaveLength(1)
    expect(rows[0].identifier).toBe('ada@example.com')
    expect(rows[0].token).toBe(createHash('sha256').update(`${token}${SECRET}`).digest('hex'))
    expect(rows[0].token).not.toContain(token)
    const expires = Number(rows[0].expires)
    expect(expires).toBeGreaterThanOrEqual(before + 600_000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 600_000)
  })

  describe('links that must not work: Verification (403), nothing changed', () => {
    /** Follows `link` in a fresh browser: the Verification error page, no session cookie. */
    async function expectRefused(link: string) {
      const browser = new Browser()
      const response = await followLink(browser, link)
      expect(response.status).toBe(302)
      expect(redirectOf(response)).toMatchObject({ error: 'Verification' })
      expect(redirectOf(response).url.pathname).toBe('/api/auth/error')
      expect(cookiesSet(response)).not.toContain('authjs.session-token')
      const page = await browser.request(response.headers.get('location')!)
      expect(page.status).toBe(403)
      expect(await page.text()).toContain('The sign-in link is no longer valid.')
      expect(await sessionOf(browser, rig.app.url)).toBeNull()
    }

    async function freshLink(address = 'ada@example.com'): Promise<string> {
      await requestLink(new Browser(), rig.app.url, address)
      return linkOf(await rig.smtp.nextMessage())
    }

    it('a link used a second time', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp)
      const link = await freshLink()
      expect((await followLink(new Browser(), link)).status).toBe(302)
      const users = await db.knex('User').select()
      await expectRefused(link)
      expect(await db.knex('User').select()).toEqual(users)
      expect(await db.knex('Session').select()).toHaveLength(1)
    })

    describe('with a frozen clock', () => {
      afterEach(() => {
        jest.restoreAllMocks()
      })

      it('an expired link (maxAge passed), which is then gone', async () => {
        mountEmailApp(rig.app, db.knex, rig.smtp, {}, { maxAge: 3600 })
        const link = await freshLink()
        const now = Date.now()
        jest.spyOn(Date, 'now').mockReturnValue(now + 3600_000 + 1000)
        await expectRefused(link)
        expect(await db.knex('User').select()).toEqual([])
        jest.restoreAllMocks()
        await expectRefused(link)
      })

      it('a link still inside maxAge works', async () => {
        mountEmailApp(rig.app, db.knex, rig.smtp, {}, { maxAge: 3600 })
        const link = await freshLink()
        jest.spyOn(Date, 'now').mockReturnValue(Date.now() + 3600_000 - 60_000)
        const browser = new Browser()
        expect((await followLink(browser, link)).headers.get('location')).toBe(`${rig.app.url}/`)
        expect((await sessionOf(browser, rig.app.url))?.user.email).toBe('ada@example.com')
      })
    })

    it('a link whose address was changed to another one; the real link still works', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp)
      const link = await freshLink('ada@example.com')
      await expectRefused(withParams(link, { email: 'eve@example.com' }))
      await expectRefused(withParams(link, { email: 'ADA@example.com' }))
      expect(await db.knex('User').select()).toEqual([])
      const browser = new Browser()
      await followLink(browser, link)
      expect((await sessionOf(browser, rig.app.url))?.user.email).toBe('ada@example.com')
    })

    it('a link of one address used with the token of another', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp)
      const eves = paramsOf(await freshLink('eve@example.com'))
      const adas = await freshLink('ada@example.com')
      await expectRefused(withParams(adas, { token: eves.token }))
      expect(await db.knex('VerificationToken').count({ n: '*' }).first()).toEqual({ n: 2 })
    })

    // A hand-written adapter may look the token up by its hash alone. The token is then found for any
    // address, and only the callback's own comparison stops a link for the attacker's mailbox from
    // signing in as anyone.
    it("another address's token with an adapter whose useVerificationToken ignores the identifier", async () => {
      const adapter = KnexAdapter(db.knex)
      const byTokenOnly: Adapter = {
        ...adapter,
        async useVerificationToken({ token }) {
          const row = await db.knex('VerificationToken').where({ token }).first()
          if (!row || (await db.knex('VerificationToken').where({ token }).del()) !== 1) return null
          return { identifier: row.identifier, token: row.token, expires: new Date(row.expires) }
        },
      }
      const { logger, lines } = recordingLogger()
      mountEmailApp(rig.app, db.knex, rig.smtp, { adapter: byTokenOnly, logger })
      const eves = paramsOf(await freshLink('eve@example.com'))
      await expectRefused(withParams(await freshLink('ada@example.com'), { token: eves.token }))
      expect(await db.knex('User').select()).toEqual([])
      expect(await db.knex('Session').select()).toEqual([])
      // Refused by that comparison, the one check such an adapter leaves.
      expect([...lines.warn, ...lines.debug].join('\n')).toContain('The sign-in link was issued for another address.')
    })

    it('a tampered token (one character changed, cut short, extended, upper-cased), then the real one works', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp)
      const link = await freshLink()
      const { token } = paramsOf(link)
      const flipped = `${token.slice(0, 10)}${token[10] === 'a' ? 'b' : 'a'}${token.slice(11)}`
      for (const tampered of [flipped, token.slice(0, -1), `${token}0`, token.toUpperCase(), '', 'x'.repeat(5000)]) {
        await expectRefused(withParams(link, { token: tampered }))
      }
      await expectRefused(link.replace(/&?token=[^&]*/, ''))
      expect(await db.knex('User').select()).toEqual([])
      const browser = new Browser()
      await followLink(browser, link)
      expect((await sessionOf(browser, rig.app.url))?.user.email).toBe('ada@example.com')
    })

    it('a link made with a secret the app no longer has', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp, { secret: 'an-old-secret-that-was-replaced-0123456789' })
      const link = await freshLink()
      mountEmailApp(rig.app, db.knex, rig.smtp)
      await expectRefused(link)
    })
  })

  it('accepts a link mailed before a secret rotation (the old secret still listed)', async () => {
    const old = 'the-previous-secret-0123456789abcdef'
    mountEmailApp(rig.app, db.knex, rig.smtp, { secret: old })
    await requestLink(new Browser(), rig.app.url, 'ada@example.com')
    const link = linkOf(await rig.smtp.nextMessage())
    mountEmailApp(rig.app, db.knex, rig.smtp, { secret: [SECRET, old] })
    const browser = new Browser()
    await followLink(browser, link)
    expect((await sessionOf(browser, rig.app.url))?.user.email).toBe('ada@example.com')
  })

  it('keeps the redirect same-origin: a foreign callbackUrl in the form or in the link leads to the site', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    await requestLink(new Browser(), rig.app.url, 'ada@example.com', { callbackUrl: 'https://evil.example/steal' })
    const link = linkOf(await rig.smtp.nextMessage())
    expect(paramsOf(link).callbackUrl).toBe(`${rig.app.url}/`)
    const tampered = withParams(link, { callbackUrl: 'https://evil.example/steal' })
    const response = await followLink(new Browser(), tampered)
    expect(response.headers.get('location')).toBe(`${rig.app.url}/`)
  })

  it('server-side signIn of an e-mail provider keeps the CSRF check: a link or another site cannot make the app mail', async () => {
    const portcullis = mountEmailApp(rig.app, db.knex, rig.smtp)
    const withLink = express()
    withLink.use('/api/auth', portcullis.handlers)
    withLink.get('/mail-me', portcullis.auth(() => portcullis.signIn('nodemailer', { email: 'ada@example.com' })))
    rig.app.mount(withLink)
    const sent = rig.smtp.messages.length
    const response = await new Browser().request(`${rig.app.url}/mail-me`, { headers: { 'sec-fetch-site': 'cross-site' } })
    expect(redirectOf(response)).toMatchObject({ error: 'MissingCSRF' })
    expect(rig.smtp.messages.length).toBe(sent)
    expect(await db.knex('VerificationToken').select()).toEqual([])
  })

  it('refuses a sign-in request without the CSRF token: no token, no e-mail', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    const sent = rig.smtp.messages.length
    const response = await new Browser().request(`${rig.app.url}/api/auth/signin/nodemailer`, { body: new URLSearchParams({ email: 'ada@example.com' }) })
    expect(redirectOf(response)).toMatchObject({ error: 'MissingCSRF' })
    expect(await db.knex('VerificationToken').select()).toEqual([])
    expect(rig.smtp.messages.length).toBe(sent)
  })

  it('takes a POST of the link only with the CSRF token of the confirmation page: without it, refused, the token left', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    await requestLink(new Browser(), rig.app.url, 'ada@example.com')
    const link = linkOf(await rig.smtp.nextMessage())
    const { token, email } = paramsOf(link)
    const response = await new Browser().request(link.split('?')[0]!, { body: new URLSearchParams({ token, email }) })
    expect(redirectOf(response)).toMatchObject({ error: 'MissingCSRF' })
    expect(await db.knex('VerificationToken').select()).toHaveLength(1)
  })

  describe('the signIn callback', () => {
    it('is asked before the link is sent (email.verificationRequest) and when it is followed', async () => {
      const calls: unknown[] = []
      const signIn = (params: unknown) => {
        calls.push(params)
        return true
      }
      mountEmailApp(rig.app, db.knex, rig.smtp, { callbacks: { signIn } })
      const browser = new Browser()
      await requestLink(browser, rig.app.url, 'ada@example.com')
      expect(calls).toEqual([
        {
          user: { id: expect.any(String), email: 'ada@example.com', emailVerified: null, name: null, image: null },
          account: { provider: 'nodemailer', type: 'email', providerAccountId: 'ada@example.com', userId: expect.any(String) },
          email: { verificationRequest: true },
        },
      ])
      // The user is not stored by the request: only by the link.
      expect(await db.knex('User').select()).toEqual([])
      await browser.request(linkOf(await rig.smtp.nextMessage()))
      expect(calls).toHaveLength(2)
      expect(calls[1]).toEqual({ user: expect.objectContaining({ email: 'ada@example.com' }), account: expect.objectContaining({ type: 'email' }) })
    })

    it('refusing the request sends no e-mail and stores no token', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp, { callbacks: { signIn: ({ email }) => !email?.verificationRequest } })
      const sent = rig.smtp.messages.length
      const response = await requestLink(new Browser(), rig.app.url, 'ada@example.com')
      expect(redirectOf(response)).toMatchObject({ error: 'AccessDenied' })
      expect(rig.smtp.messages.length).toBe(sent)
      expect(await db.knex('VerificationToken').select()).toEqual([])
    })

    it('refusing the followed link creates no user and no session', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp, { callbacks: { signIn: ({ email }) => email?.verificationRequest === true } })
      const browser = new Browser()
      await requestLink(browser, rig.app.url, 'ada@example.com')
      const response = await browser.request(linkOf(await rig.smtp.nextMessage()))
      expect(redirectOf(response)).toMatchObject({ error: 'AccessDenied' })
      expect(await db.knex('User').select()).toEqual([])
      expect(await sessionOf(browser, rig.app.url)).toBeNull()
    })
  })

  describe('when the mail cannot be sent', () => {
    it('SMTP server down: EmailSignInError on the sign-in page, logged without the link, no token left', async () => {
      const down = await startSmtpServer()
      await down.close()
      const { logger, lines } = recordingLogger()
      mountEmailApp(rig.app, db.knex, { url: down.url }, { logger })
      const response = await requestLink(new Browser(), rig.app.url, 'ada@example.com', { callbackUrl: '/dashboard' })
      expect(response.status).toBe(302)
      const { url, error } = redirectOf(response)
      expect(error).toBe('EmailSignInError')
      expect(url.pathname).toBe('/api/auth/signin')
      expect(await db.knex('VerificationToken').select()).toEqual([])
      const logged = lines.error.join('\n')
      expect(logged).toContain('EmailSignInError')
      expect(logged).toContain('ECONNREFUSED')
      expect(logged).not.toContain('ada@example.com')
      expect(logged).not.toMatch(/[0-9a-f]{64}/)
      const page = await (await new Browser().request(url.href)).text()
      expect(page).toContain('The sign-in e-mail could not be sent.')
    })

    it('SMTP server refusing the message (550): the same', async () => {
      const { logger, lines } = recordingLogger()
      mountEmailApp(rig.app, db.knex, rig.smtp, { logger })
      rig.smtp.rejectMessages(true)
      try {
        const response = await requestLink(new Browser(), rig.app.url, 'ada@example.com')
        expect(redirectOf(response)).toMatchObject({ error: 'EmailSignInError' })
      } finally {
        rig.smtp.rejectMessages(false)
      }
      expect(await db.knex('VerificationToken').select()).toEqual([])
      expect(lines.error.join('\n')).toContain('550')
    })
  })

  describe('addresses that could reach a second recipient or inject a header are refused', () => {
    const refused = [
      'a@b@c.example',
      '"a@b"@c.example',
      '"a"@c.example',
      'a@b.example,c@d.example',
      'a@b.example, c@d.example',
      'a@b.example;c@d.example',
      'a@b.example\r\nBcc: c@d.example',
      'a@b.example\nBcc:c@d.example',
      'Eve <eve@evil.example>',
      '<eve@evil.example>',
      'a@b.example (comment)',
      'group: a@b.example;',
      'a b@c.example',
      'a\u0000@b.example',
      'a@b.example\u200b',
      'a\u202e@b.example',
      // Look-alikes NFKC turns into the character they imitate: ＠ (full-width), ﹫ (small), ， ＜.
      'a@b.example\uff20c.example',
      'a\ufe6bb@c.example',
      'a@b.example\uff0cc@d.example',
      '\uff1ceve@evil.example\uff1e',
      'a@[127.0.0.1]',
      'a@b..example',
      '.a@b.example',
      'a@',
      '@b.example',
      '',
    ]

    it.each(refused.map((address) => [JSON.stringify(address), address]))('%s', async (_label, address) => {
      mountEmailApp(rig.app, db.knex, rig.smtp)
      const sent = rig.smtp.messages.length
      const response = await requestLink(new Browser(), rig.app.url, address)
      expect(redirectOf(response)).toMatchObject({ error: 'EmailSignInError' })
      expect(rig.smtp.messages.length).toBe(sent)
      expect(await db.knex('VerificationToken').select()).toEqual([])
    })

    it('accepts full-width letters as the letters they are (NFKC), trimmed (a trailing CR LF too) and lower-cased', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp)
      await requestLink(new Browser(), rig.app.url, '  \uff21da@Example.COM \r\n')
      const mail = await rig.smtp.nextMessage()
      expect(mail.to).toEqual(['ada@example.com'])
      expect(paramsOf(linkOf(mail)).email).toBe('ada@example.com')
    })

    it("accepts an apostrophe and + in the local part, and an internationalised domain, as one recipient", async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp)
      await requestLink(new Browser(), rig.app.url, "o'brien+tag@bücher.example")
      const mail = await rig.smtp.nextMessage()
      expect(mail.to).toHaveLength(1)
      expect(paramsOf(linkOf(mail)).email).toBe("o'brien+tag@bücher.example")
    })
  })

  describe('rate limits', () => {
    it('refuses the N+1th link for one address from any client, with 429, Retry-After and no e-mail', async () => {
      mountEmailApp(rig.app, db.knex, rig.smtp, { rateLimit: { identifier: { attempts: 2 } } })
      for (let sent = 0; sent < 2; sent += 1) {
        expect((await requestLink(new Browser(), rig.app.url, 'Ada@Example.com')).status).toBe(302)
        await rig.smtp.nextMessage()
      }
      const refused = await requestLink(new Browser(), rig.app.url, 'ada@example.com')
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(await refused.text()).toMatch(/RateLimited|wait/i)
      expect(await db.knex('VerificationToken').select()).toHaveLength(2)
      // Another address is not affected.
      expect((await requestLink(new Browser(), rig.app.url, 'grace@example.com')).status).toBe(302)
      await rig.smtp.nextMessage()
    })

    it('refuses the N+1th request from one client IP whatever the address, for known and unknown addresses alike', async () => {
      await db.knex('User').insert({ id: 'u-ada', email: 'ada@example.com' })
      mountEmailApp(rig.app, db.knex, rig.smtp, { rateLimit: { ip: { attempts: 2 } } })
      for (const address of ['ada@example.com', 'nobody@example.com']) {
        expect((await requestLink(new Browser(), rig.app.url, address)).status).toBe(302)
        await rig.smtp.nextMessage()
      }
      const [known, unknown] = [await requestLink(new Browser(), rig.app.url, 'ada@example.com'), await requestLink(new Browser(), rig.app.url, 'someone@example.com')]
      expect([known.status, unknown.status]).toEqual([429, 429])
      expect(await db.knex('VerificationToken').select()).toHaveLength(2)
    })
  })

  describe('no account enumeration', () => {
    it('answers a known and an unknown address alike: status, headers, body; both get a link', async () => {
      await db.knex('User').insert({ id: 'u-ada', email: 'ada@example.com' })
      mountEmailApp(rig.app, db.knex, rig.smtp)
      const answer = async (address: string) => {
        const response = await requestLink(new Browser(), rig.app.url, address, { callbackUrl: '/dashboard' })
        // The link's binding cookie differs as the links do: its value is masked, its shape compared.
        const headers = [...response.headers].filter(([name]) => name !== 'date').map(([name, value]) => [name, value.replace(/^(authjs\.email-link=)[\w-]{43};/, '$1<binding>;')])
        return { status: response.status, headers, body: await response.text(), mail: await rig.smtp.nextMessage() }
      }
      const known = await answer('ada@example.com')
      const unknown = await answer('nobody@example.com')
      expect(unknown.status).toBe(known.status)
      expect(unknown.headers).toEqual(known.headers)
      expect(unknown.body).toBe(known.body)
      expect(known.mail.to).toEqual(['ada@example.com'])
      expect(unknown.mail.to).toEqual(['nobody@example.com'])
      expect(known.mail.parsed.subject).toBe(unknown.mail.parsed.subject)
    })

    it('takes the same time for a known and an unknown address (medians within noise)', async () => {
      await db.knex('User').insert({ id: 'u-ada', email: 'ada@example.com' })
      // 12 links for one address would reach its rate limit: this test measures the sign-in itself.
      mountEmailApp(rig.app, db.knex, rig.smtp, { rateLimit: false })
      const time = async (address: string) => {
        const browser = new Browser()
        const { csrfToken } = (await (await browser.request(`${rig.app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
        const start = performance.now()
        await browser.request(`${rig.app.url}/api/auth/signin/nodemailer`, { body: new URLSearchParams({ csrfToken, email: address }) })
        const elapsed = performance.now() - start
        await rig.smtp.nextMessage()
        return elapsed
      }
      const known: number[] = []
      const unknown: number[] = []
      for (let round = 0; round < 12; round += 1) {
        known.push(await time('ada@example.com'))
        unknown.push(await time(`nobody${round}@example.com`))
      }
      const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
      const [a, b] = [median(known), median(unknown)]
      // Both send the same e-mail through the same server: the difference is noise, not a database write.
      expect(Math.abs(a - b)).toBeLessThan(Math.max(a, b) * 0.5 + 10)
    })
  })
})

/** 50 browsers use one link at once: exactly one session. */
async function concurrentUses(kind: DatabaseKind) {
  await describeWithDatabase(kind, `one e-mail link followed 50 times at once (${kind})`, (server) => {
    const db = migratedDatabase(server)

    it.each(['confirmed on 50 other browsers', 'opened with the asking browser\'s cookie'])('signs in exactly one of them; the other 49 get Verification (%s)', async (how) => {
      mountEmailApp(rig.app, db.knex, rig.smtp, { session: { strategy: 'database' } })
      const asking = new Browser()
      await requestLink(asking, rig.app.url, 'ada@example.com')
      const link = linkOf(await rig.smtp.nextMessage())
      const browsers = Array.from({ length: 50 }, () => new Browser())
      let responses: Response[]
      if (how.startsWith('confirmed')) {
        const pages = await Promise.all(browsers.map((browser) => browser.request(link)))
        expect(pages.map((page) => page.status)).toEqual(Array(50).fill(200))
        // Every page read first, then all 50 buttons pressed at once.
        const forms = await Promise.all(browsers.map((browser, i) => browser.formOf(pages[i]!)))
        responses = await Promise.all(browsers.map((browser, i) => browser.navigate(forms[i]!)))
      } else {
        for (const browser of browsers) browser.setCookie(rig.app.url, 'authjs.email-link', asking.cookie(rig.app.url, 'authjs.email-link')!)
        responses = await Promise.all(browsers.map((browser) => browser.request(link)))
      }
      const signedIn = responses.filter((response) => response.headers.get('location') === `${rig.app.url}/`)
      const refused = responses.filter((response) => redirectOf(response).error === 'Verification')
      expect(signedIn).toHaveLength(1)
      expect(refused).toHaveLength(49)
      expect(signedIn.every((response) => cookiesSet(response).includes('authjs.session-token'))).toBe(true)
      expect(await db.knex('Session').select()).toHaveLength(1)
      expect(await db.knex('User').select()).toHaveLength(1)
      expect(await db.knex('VerificationToken').select()).toEqual([])
    })
  })
}

await concurrentUses('sqlite')
await concurrentUses('postgres')
