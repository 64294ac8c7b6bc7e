/**
 * Sign-in codes by e-mail end to end, with real parts: the EmailCode provider mails through a real
 * SMTP server in this process, the code is read from the parsed mail and typed on the page that
 * asked for it, on SQLite and PostgreSQL. Each rule is attacked: a wrong code, an expired one, one
 * used twice, one typed in another browser, guesses past the fifth (also all at once), HEAD and
 * cross-site posts.
 */
import { describe, expect, it } from '@jest/globals'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { askForCode, Browser, codeForm, codeOf, mountCodeApp, otherCode, typeCode } from './email-code-app.js'

// The suite's SMTP server and app listener, as the e-mail link suites have them.
const rig = useEmailRig()

const COOKIE = 'authjs.email-link'

/** Asks for a code to `address` in `browser`: the code page's form (with the mailed code typed in) and the code. */
async function mailedCode(browser: Browser, address: string, callbackUrl?: string): Promise<{ form: { url: string; body: URLSearchParams }; code: string }> {
  const page = await askForCode(browser, rig.app.url, address, callbackUrl ? { callbackUrl } : {})
  const code = codeOf(await rig.smtp.nextMessage())
  return { form: await codeForm(browser, page, code), code }
}

/** The Verification error page, and no session. */
async function expectVerification(response: Response, browser: Browser): Promise<void> {
  expect(response.status).toBe(302)
  expect(redirectOf(response)).toMatchObject({ error: 'Verification' })
  expect(await sessionOf(browser, rig.app.url)).toBeNull()
}

for (const kind of ['sqlite', 'postgres'] as const satisfies readonly DatabaseKind[]) {
  await describeWithDatabase(kind, `sign-in codes by e-mail on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    const rows = () => db.knex('VerificationToken').select()

    it('mails a six-digit code, answers with the page asking for it, and the code typed there signs a new user in', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp, { theme: { brandColor: '#0f766e' } })
      const browser = new Browser()
      const page = await askForCode(browser, rig.app.url, 'Ada@Example.com', { callbackUrl: '/dashboard' })
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(browser.cookie(rig.app.url, COOKIE)).toMatch(/^code\.[\w-]{43}$/)

      const mail = await rig.smtp.nextMessage()
      expect(mail.to).toEqual(['ada@example.com'])
      const code = codeOf(mail)
      const host = new URL(rig.app.url).host
      // The subject (shown on lock screens) names the site, not the code; the HTML is themed.
      expect(mail.parsed.subject).toBe(`Your sign-in code for ${host}`)
      expect(mail.parsed.html).toContain(`>${code}</p>`)
      expect(mail.parsed.html).toContain('#0f766e')

      // Stored: six rows (the code and its five tries), none holding the code or the address in clear.
      const stored = await rows()
      expect(stored).toHaveLength(6)
      for (const row of stored) {
        expect(row.identifier).toMatch(/^email-code:[0-9a-f]{64}$/)
        expect(row.token).toMatch(/^[0-9a-f]{64}$/)
        expect(JSON.stringify(row)).not.toContain(code)
        expect(JSON.stringify(row)).not.toContain('ada@example.com')
      }

      const form = await codeForm(browser, page, code)
      expect(form.url).toBe(`${rig.app.url}/api/auth/callback/email-code`)
      expect(form.body.get('email')).toBe('ada@example.com')
      const signedIn = await browser.request(form.url, { body: form.body })
      expect(signedIn.status).toBe(302)
      expect(signedIn.headers.get('location')).toBe(`${rig.app.url}/dashboard`)
      expect((await sessionOf(browser, rig.app.url))?.user).toMatchObject({ email: 'ada@example.com' })
      const user = await db.knex('User').where({ email: 'ada@example.com' }).first()
      expect(user.emailVerified).not.toBeNull()
      // Used: every row is gone, and the binding cookie is cleared.
      expect(await rows()).toEqual([])
      expect(browser.cookie(rig.app.url, COOKIE)).toBeUndefined()
    })

    it('gives JSON clients (X-Auth-Return-Redirect) the URL of the same page, which the code is then typed on', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const answer = await askForCode(browser, rig.app.url, 'ada@example.com', { callbackUrl: '/dashboard', headers: { 'x-auth-return-redirect': '1' } })
      expect(answer.status).toBe(200)
      const { url } = (await answer.json()) as { url: string }
      expect(url).toBe(`${rig.app.url}/api/auth/callback/email-code?${new URLSearchParams({ email: 'ada@example.com', callbackUrl: `${rig.app.url}/dashboard` })}`)
      const code = codeOf(await rig.smtp.nextMessage())
      const form = await codeForm(browser, await browser.request(url), code)
      const signedIn = await browser.request(form.url, { body: form.body })
      expect(signedIn.headers.get('location')).toBe(`${rig.app.url}/dashboard`)
      expect((await sessionOf(browser, rig.app.url))?.user.email).toBe('ada@example.com')
    })

    it('marks the address of an existing unverified user verified (the code proves it)', async () => {
      await db.knex('User').insert({ id: 'u1', email: 'bob@example.com', emailVerified: null })
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form } = await mailedCode(browser, 'bob@example.com')
      expect((await browser.request(form.url, { body: form.body })).status).toBe(302)
      expect((await sessionOf(browser, rig.app.url))?.user).toMatchObject({ email: 'bob@example.com' })
      expect((await db.knex('User').where({ id: 'u1' }).first()).emailVerified).not.toBeNull()
    })

    it('shows the page again after a wrong code, with the tries left, and the right code still signs in', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      const wrong = await typeCode(browser, form, otherCode(code))
      expect(wrong.status).toBe(400)
      const text = await wrong.text()
      expect(text).toContain('That code is not right. 4 tries left.')
      expect(text).toContain('name="code"')
      expect(await sessionOf(browser, rig.app.url)).toBeNull()
      // Not a number: no try is used.
      expect((await typeCode(browser, form, 'abcdef')).status).toBe(400)
      expect(await (await typeCode(browser, form, otherCode(code, 2))).text()).toContain('3 tries left')

      expect((await typeCode(browser, form, code)).status).toBe(302)
      expect((await sessionOf(browser, rig.app.url))?.user).toMatchObject({ email: 'ada@example.com' })
    })

    it('refuses an expired code', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      // Ten minutes later, as its rows have it.
      await db.knex('VerificationToken').update({ expires: new Date(Date.now() - 1000) })
      await expectVerification(await typeCode(browser, form, code), browser)
    })

    it('refuses a code used twice', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      const binding = browser.cookie(rig.app.url, COOKIE)!
      const csrf = browser.cookie(rig.app.url, 'authjs.csrf-token')!
      expect((await typeCode(browser, form, code)).status).toBe(302)
      // The same browser, its cookies of before put back and signed out: the code is spent.
      const again = new Browser()
      again.setCookie(rig.app.url, COOKIE, binding)
      again.setCookie(rig.app.url, 'authjs.csrf-token', csrf)
      await expectVerification(await typeCode(again, form, code), again)
    })

    it('refuses the code in another browser than the one that asked, without using a try of it', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      const other = new Browser()
      const { csrfToken } = (await (await other.request(`${rig.app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
      const body = new URLSearchParams(form.body)
      body.set('csrfToken', csrfToken)
      for (let attempt = 0; attempt < 6; attempt += 1) await expectVerification(await other.request(form.url, { body }), other)
      // A binding cookie of its own (another code asked there) does not open this one either: the
      // first code is a wrong try of the second.
      await mailedCode(other, 'ada@example.com')
      const wrong = await other.request(form.url, { body })
      expect(wrong.status).toBe(400)
      expect(await wrong.text()).toContain('4 tries left')
      expect(await sessionOf(other, rig.app.url)).toBeNull()

      expect(await (await typeCode(browser, form, otherCode(code))).text()).toContain('4 tries left')
      expect((await typeCode(browser, form, code)).status).toBe(302)
    })

    it('refuses the code for another address than the one it was mailed to (a wrong try), and signs in as no one', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      const forged = new URLSearchParams(form.body)
      forged.set('email', 'eve@example.com')
      const refused = await browser.request(form.url, { body: forged })
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain('4 tries left')
      expect(await sessionOf(browser, rig.app.url)).toBeNull()
      expect(await db.knex('User').select()).toEqual([])
      expect((await typeCode(browser, form, code)).status).toBe(302)
      expect((await sessionOf(browser, rig.app.url))?.user.email).toBe('ada@example.com')
    })

    it('voids the code after five wrong tries: the right one is refused after them', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      for (let attempt = 1; attempt <= 4; attempt += 1) {
        const wrong = await typeCode(browser, form, otherCode(code, attempt))
        expect(wrong.status).toBe(400)
        expect(await wrong.text()).toContain(5 - attempt === 1 ? '1 try left' : `${5 - attempt} tries left`)
      }
      await expectVerification(await typeCode(browser, form, otherCode(code, 5)), browser)
      await expectVerification(await typeCode(browser, form, code), browser)
    })

    it('counts tries race-free: of 20 wrong codes posted at once, four get the page, the rest are refused, and the right one after them too', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp, { rateLimit: false })
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => typeCode(browser, form, otherCode(code, index + 1))))
      const statuses = answers.map((answer) => answer.status)
      expect(statuses.filter((status) => status === 400)).toHaveLength(4)
      expect(statuses.filter((status) => status === 302)).toHaveLength(16)
      for (const answer of answers.filter((one) => one.status === 302)) expect(redirectOf(answer).error).toBe('Verification')
      await expectVerification(await typeCode(browser, form, code), browser)
    })

    it('counts code tries against the address (rateLimit.identifier): past the window even a new code is refused with 429', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp, { rateLimit: { identifier: { attempts: 3 } } })
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      for (let attempt = 1; attempt <= 3; attempt += 1) expect((await typeCode(browser, form, otherCode(code, attempt))).status).toBe(400)
      const limited = await typeCode(browser, form, code)
      expect(limited.status).toBe(429)
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
      expect(await sessionOf(browser, rig.app.url)).toBeNull()
    })

    it('HEAD sends no mail and uses no code', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const { form, code } = await mailedCode(browser, 'ada@example.com')
      const before = rig.smtp.messages.length
      // HEAD runs as GET, which /signin/<id> does not serve (the core's 400 for any provider).
      const headSignIn = await browser.request(`${rig.app.url}/api/auth/signin/email-code`, { method: 'HEAD' })
      expect(headSignIn.status).toBe(400)
      const headCallback = await browser.request(`${form.url}?${form.body}`, { method: 'HEAD' })
      expect(headCallback.status).toBe(200)
      expect(await headCallback.text()).toBe('')
      // A GET with the form's fields in the query (a link checker, a prefetch) only shows the page again.
      const shown = await browser.request(`${form.url}?${form.body}`)
      expect(shown.status).toBe(200)
      expect(await shown.text()).toContain('name="code"')
      // And without the browser's cookie, not even that.
      await expectVerification(await new Browser().request(`${form.url}?${form.body}`), new Browser())
      expect(rig.smtp.messages.length).toBe(before)
      expect(await rows()).toHaveLength(6)
      expect((await typeCode(browser, form, code)).status).toBe(302)
    })

    it('refuses posts without the CSRF token or from another site: no mail sent, no code used', async () => {
      mountCodeApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      const before = rig.smtp.messages.length
      for (const attack of [
        askForCode(browser, rig.app.url, 'ada@example.com', { csrfToken: null }),
        askForCode(browser, rig.app.url, 'ada@example.com', { csrfToken: 'forged|token' }),
        askForCode(browser, rig.app.url, 'ada@example.com', { headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } }),
      ]) {
        const refused = await attack
        expect(refused.status).toBe(302)
        expect(redirectOf(refused).error).toBe('MissingCSRF')
      }
      expect(rig.smtp.messages.length).toBe(before)
      expect(await rows()).toEqual([])

      const { form, code } = await mailedCode(browser, 'ada@example.com')
      const withoutToken = new URLSearchParams(form.body)
      withoutToken.delete('csrfToken')
      for (const response of [
        await browser.request(form.url, { body: withoutToken }),
        await typeCode(browser, form, code, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }),
      ]) {
        expect(redirectOf(response).error).toBe('MissingCSRF')
        expect(await sessionOf(browser, rig.app.url)).toBeNull()
      }
      expect(await rows()).toHaveLength(6)
      expect((await typeCode(browser, form, code)).status).toBe(302)
    })
  })
}

describe('EmailCode on the sign-in page', () => {
  it('is listed as an e-mail provider whose form posts the address to /signin/email-code', async () => {
    const { knex: createKnex } = { knex: (await import('knex')).default }
    const knex = createKnex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    try {
      mountCodeApp(rig.app, knex, rig.smtp)
      const providers = (await (await fetch(`${rig.app.url}/api/auth/providers`)).json()) as Record<string, unknown>
      expect(providers['email-code']).toEqual({
        id: 'email-code',
        name: 'Email code',
        type: 'email',
        signinUrl: `${rig.app.url}/api/auth/signin/email-code`,
        callbackUrl: `${rig.app.url}/api/auth/callback/email-code`,
      })
      const page = await (await fetch(`${rig.app.url}/api/auth/signin`)).text()
      expect(page).toContain('action="/api/auth/signin/email-code"')
      expect(page).toContain('name="email"')
    } finally {
      await knex.destroy()
    }
  })
})
