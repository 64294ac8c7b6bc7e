/**
 * The Password provider end to end with real parts: a real SMTP server (smtp-server) receives the
 * mails, real databases (SQLite, PostgreSQL, MariaDB) hold users, hashes and link tokens, and
 * "browsers" (cookie jars over fetch) follow the links. Sign-up, verification, sign-in, a forgotten
 * password and its reset, a changed password, and the sessions each of them ends.
 */
import { expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import type { AuthApp } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, GOOD_PASSWORD, mountPasswordApp, nextLink, post, signIn, signUp, verifiedUser } from './password-app.js'

// The suite's SMTP server and app listener (each test starts with no mail waiting).
const rig = useEmailRig()

function flowSuite(kind: DatabaseKind) {
  return (server: Parameters<Parameters<typeof describeWithDatabase>[2]>[0]) => {
    const db = migratedDatabase(server)
    let auth: AuthApp
    const events: { name: string; email: string | null | undefined; isNewUser?: boolean | undefined }[] = []
    const mount = (options: Parameters<typeof mountPasswordApp>[4] = {}, config: Parameters<typeof mountPasswordApp>[3] = {}) => {
      events.length = 0
      const on = (name: string) => (message: { user: { email?: string | null } }) => void events.push({ name, email: message.user.email })
      // The user is created by the sign-up, not by a sign-in: every password sign-in has isNewUser false.
      const signedIn = ({ user, isNewUser }: { user: { email?: string | null }; isNewUser?: boolean | undefined }) => void events.push({ name: 'signIn', email: user.email, isNewUser })
      auth = mountPasswordApp(rig.app, db.knex, rig.smtp, { events: { createUser: on('createUser'), updateUser: on('updateUser'), signIn: signedIn }, ...config }, options)
      return auth
    }
    const url = () => rig.app.url
    const users = (knex: Knex) => knex('User').select('email', 'emailVerified')

    it('signs up: a verification mail whose link, in the same browser, verifies the address and signs in; the password signs in after', async () => {
      mount()
      const browser = new Browser()
      const response = await signUp(browser, url(), 'Ada@Example.com', GOOD_PASSWORD, { name: '  Ada  ', callbackUrl: '/dashboard' })
      expect(response.status).toBe(302)
      expect(redirectOf(response).url.href).toBe(`${url()}/api/auth/verify-request?provider=password&type=signup`)
      expect(await sessionOf(browser, url())).toBeNull()
      const stored = await db.knex('Password').select()
      expect(stored).toHaveLength(1)
      expect(stored[0].hash).toMatch(/^\$scrypt\$ln=14,r=8,p=1\$/)
      expect(JSON.stringify(await db.knex('User').select())).not.toContain(GOOD_PASSWORD)
      expect(events).toEqual([{ name: 'createUser', email: 'ada@example.com' }])

      const mail = await nextLink(rig.smtp, 'ada@example.com')
      expect(mail.to).toEqual(['ada@example.com'])
      expect(mail.subject).toBe(`Confirm your e-mail address for ${new URL(url()).host}`)
      expect(mail.link.startsWith(`${url()}/api/auth/verify-email?`)).toBe(true)
      const verified = await browser.request(mail.link)
      expect(verified.status).toBe(302)
      expect(verified.headers.get('location')).toBe(`${url()}/dashboard`)
      // The name as typed, trimmed.
      expect((await sessionOf(browser, url()))?.user).toMatchObject({ email: 'ada@example.com', name: 'Ada' })
      const [user] = await users(db.knex)
      expect(user.emailVerified).not.toBeNull()
      expect(events.slice(1)).toEqual([
        { name: 'updateUser', email: 'ada@example.com' },
        { name: 'signIn', email: 'ada@example.com', isNewUser: false },
      ])
      // The link works once: another browser is asked first, and its answer is refused.
      const second = new Browser()
      const confirm = await second.request(mail.link)
      expect(confirm.status).toBe(200)
      expect(redirectOf(await second.submitForm(confirm)).error).toBe('Verification')

      const laptop = new Browser()
      const signedIn = await signIn(laptop, url(), 'ada@example.com')
      expect(signedIn.status).toBe(302)
      expect((await sessionOf(laptop, url()))?.user.email).toBe('ada@example.com')
      expect(events.at(-1)).toEqual({ name: 'signIn', email: 'ada@example.com', isNewUser: false })
    })

    it('answers a taken address exactly as a new one (status, location, cookie names), and mails its owner instead of creating anyone', async () => {
      mount()
      await verifiedUser(new Browser(), url(), rig.smtp, 'taken@example.com')
      const fresh = await signUp(new Browser(), url(), 'fresh@example.com')
      await nextLink(rig.smtp, 'fresh@example.com')
      const taken = await signUp(new Browser(), url(), 'taken@example.com', 'another long passphrase')
      expect(taken.status).toBe(fresh.status)
      expect(taken.headers.get('location')).toBe(fresh.headers.get('location'))
      const names = (response: Response) => response.headers.getSetCookie().map((cookie) => cookie.replace(/=[^;]*/, '=…'))
      expect(names(taken)).toEqual(names(fresh))
      const owner = await nextLink(rig.smtp, 'taken@example.com')
      expect(owner.to).toEqual(['taken@example.com'])
      expect(owner.subject).toMatch(/^Someone tried to sign up to .* with your address$/)
      // The owner's password is unchanged, and nobody new exists.
      expect(Number((await db.knex('User').count({ n: '*' }).first())?.n)).toBe(2)
      expect((await signIn(new Browser(), url(), 'taken@example.com')).headers.get('location')).toBe(`${url()}/`)
      // The owner's mail: a sign-in link, and one that sets a new password, which works.
      expect(owner.links).toHaveLength(2)
      expect(owner.link).toBe(`${url()}/api/auth/signin`)
      expect(owner.links[1]!.startsWith(`${url()}/api/auth/reset-password?`)).toBe(true)
      const forgetful = new Browser()
      const reset = await forgetful.submitForm(await forgetful.request(owner.links[1]!), { password: 'the owner chose anew' })
      expect(reset.headers.get('location')).toBe(`${url()}/`)
      expect((await sessionOf(forgetful, url()))?.user.email).toBe('taken@example.com')
    })

    it('refuses a wrong password and an unknown address with the same answer, and limits attempts per address', async () => {
      mount({}, { rateLimit: { identifier: { attempts: 3, windowSeconds: 60 }, ip: { attempts: 100, windowSeconds: 60 } } })
      await verifiedUser(new Browser(), url(), rig.smtp, 'grace@example.com')
      const wrong = await signIn(new Browser(), url(), 'grace@example.com', 'not the password at all')
      const unknown = await signIn(new Browser(), url(), 'nobody@example.com', 'not the password at all')
      for (const response of [wrong, unknown]) {
        expect(response.status).toBe(302)
        expect(redirectOf(response)).toMatchObject({ error: 'CredentialsSignin', code: 'credentials' })
      }
      await signIn(new Browser(), url(), 'grace@example.com', 'still not it')
      await signIn(new Browser(), url(), 'grace@example.com', 'nor this one')
      const limited = await signIn(new Browser(), url(), 'grace@example.com')
      expect(limited.status).toBe(429)
    })

    it('requireEmailVerification: the right password of an unverified address is refused with a page that sends the link again', async () => {
      mount({ requireEmailVerification: true })
      const browser = new Browser()
      await signUp(browser, url(), 'lin@example.com')
      await nextLink(rig.smtp, 'lin@example.com')
      const refused = await signIn(new Browser(), url(), 'lin@example.com')
      expect(redirectOf(refused)).toMatchObject({ error: 'CredentialsSignin', code: 'email_not_verified' })
      const page = await new Browser().request(redirectOf(refused).url.href)
      const html = await page.text()
      expect(html).toContain('Confirm your e-mail address first')
      expect(html).toContain('action="/api/auth/verify-email/resend"')
      // A wrong password still gets the plain refusal: only the right one learns the address is unverified.
      expect(redirectOf(await signIn(new Browser(), url(), 'lin@example.com', 'wrong wrong wrong'))).toMatchObject({ code: 'credentials' })

      const resent = await post(new Browser(), url(), 'verify-email/resend', { email: 'lin@example.com' })
      expect(resent.headers.get('location')).toBe(`${url()}/api/auth/verify-request?provider=password&type=signup`)
      const { link } = await nextLink(rig.smtp, 'lin@example.com')
      const phone = new Browser()
      const confirm = await phone.request(link)
      expect(await confirm.clone().text()).toContain('Sign in as <strong>lin@example.com</strong>?')
      expect((await phone.submitForm(confirm)).status).toBe(302)
      expect((await signIn(new Browser(), url(), 'lin@example.com')).headers.get('location')).toBe(`${url()}/`)
    })

    it('resets a forgotten password: the link sets a new one, ends every other session, signs in here; the old password and the link are refused after', async () => {
      mount()
      const laptop = new Browser()
      await verifiedUser(laptop, url(), rig.smtp, 'kim@example.com')
      const phone = new Browser()
      await signIn(phone, url(), 'kim@example.com')
      expect((await sessionOf(phone, url()))?.user.email).toBe('kim@example.com')

      const asker = new Browser()
      const asked = await post(asker, url(), 'forgot-password', { email: 'KIM@example.com' })
      expect(asked.headers.get('location')).toBe(`${url()}/api/auth/verify-request?provider=password&type=reset`)
      const { link, subject } = await nextLink(rig.smtp, 'kim@example.com')
      expect(subject).toBe(`Set a new password for ${new URL(url()).host}`)
      // Opening the link uses nothing (a mail scanner may fetch it).
      const form = await asker.request(link)
      expect(form.status).toBe(200)
      expect(form.headers.get('cache-control')).toBe('private, no-cache, no-store, max-age=0')
      // The link's token is sent on to no one, this site included (its logs).
      expect(form.headers.get('referrer-policy')).toBe('no-referrer')
      expect((await asker.request(link)).status).toBe(200)

      events.length = 0
      const reset = await asker.submitForm(form, { password: 'a brand new passphrase' })
      expect(reset.status).toBe(302)
      expect(events.filter((event) => event.name === 'signIn')).toEqual([{ name: 'signIn', email: 'kim@example.com', isNewUser: false }])
      expect((await sessionOf(asker, url()))?.user.email).toBe('kim@example.com')
      expect(await sessionOf(phone, url())).toBeNull()
      expect(await sessionOf(laptop, url())).toBeNull()
      expect(redirectOf(await signIn(new Browser(), url(), 'kim@example.com'))).toMatchObject({ error: 'CredentialsSignin' })
      expect((await signIn(new Browser(), url(), 'kim@example.com', 'a brand new passphrase')).headers.get('location')).toBe(`${url()}/`)
      // The token was used: the same form again is refused.
      const replayer = new Browser()
      const replay = await replayer.request(link)
      expect(redirectOf(await replayer.submitForm(replay, { password: 'yet another passphrase' })).error).toBe('Verification')
    })

    it('answers a reset request for an unknown address as for a known one, and mails nobody', async () => {
      mount()
      await verifiedUser(new Browser(), url(), rig.smtp, 'known@example.com')
      const known = await post(new Browser(), url(), 'forgot-password', { email: 'known@example.com' })
      await nextLink(rig.smtp, 'known@example.com')
      const unknown = await post(new Browser(), url(), 'forgot-password', { email: 'unknown@example.com' })
      expect(unknown.status).toBe(known.status)
      expect(unknown.headers.get('location')).toBe(known.headers.get('location'))
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(rig.smtp.messages.filter((mail) => mail.to.includes('unknown@example.com'))).toEqual([])
    })

    it('changes the password through changePassword(): the current one checked, the other sessions ended, this one kept', async () => {
      const portcullis = mount()
      const laptop = new Browser()
      await verifiedUser(laptop, url(), rig.smtp, 'ines@example.com')
      const phone = new Browser()
      await signIn(phone, url(), 'ines@example.com')
      portcullis.app.post('/account/password', async (req, res, next) => {
        try {
          await portcullis.changePassword(req, { currentPassword: String(req.query.current), newPassword: String(req.query.next), skipCsrfCheck: true })
          res.send('changed')
        } catch (error) {
          res.status(400).send((error as { code?: string }).code ?? String(error))
        }
        void next
      })
      const wrong = await laptop.request(`${url()}/account/password?current=nope&next=another%20long%20passphrase`, { method: 'POST' })
      expect(await wrong.text()).toBe('wrong_password')
      const common = await laptop.request(`${url()}/account/password?current=${encodeURIComponent(GOOD_PASSWORD)}&next=password123`, { method: 'POST' })
      expect(await common.text()).toBe('common')
      const changed = await laptop.request(`${url()}/account/password?current=${encodeURIComponent(GOOD_PASSWORD)}&next=another%20long%20passphrase`, { method: 'POST' })
      expect(await changed.text()).toBe('changed')
      expect((await sessionOf(laptop, url()))?.user.email).toBe('ines@example.com')
      expect(await sessionOf(phone, url())).toBeNull()
      expect((await signIn(new Browser(), url(), 'ines@example.com', 'another long passphrase')).headers.get('location')).toBe(`${url()}/`)
      expect(events.filter((event) => event.name === 'updateUser').length).toBeGreaterThanOrEqual(2)
    })

    it('follows the linking rules: a magic link to the address signs in the same user, and unlinkAccount() counts the password as a way in', async () => {
      const Nodemailer = (await import('portcullis/providers/nodemailer')).default
      const Password = (await import('portcullis/providers/password')).default
      const { KnexAdapter } = await import('portcullis/adapters/knex')
      const { authApp } = await import('../support/app-rig.js')
      const { SECRET } = await import('../support/flow.js')
      const { FAST_HASHING, FROM } = await import('./password-app.js')
      const adapter = KnexAdapter(db.knex)
      const app = authApp({ secret: SECRET, adapter, providers: [Password({ hashing: FAST_HASHING }), Nodemailer({ server: rig.smtp.url, from: FROM })] })
      app.app.post('/unlink/:provider', app.auth(async (req, res) => {
        try {
          res.json(await app.unlinkAccount(String(req.params.provider), { skipCsrfCheck: true }))
        } catch (error) {
          res.status(400).json({ code: (error as { code?: string }).code })
        }
      }))
      rig.app.mount(app.app)
      const browser = new Browser()
      await verifiedUser(browser, url(), rig.smtp, 'link@example.com')
      const user = (await adapter.getUserByEmail('link@example.com'))!
      await adapter.linkAccount({ userId: user.id, type: 'oauth', provider: 'github', providerAccountId: '4242' })

      // A magic link to the same address is the same user (the address is verified).
      const phone = new Browser()
      const { csrfToken } = (await (await phone.request(`${url()}/api/auth/csrf`)).json()) as { csrfToken: string }
      await phone.request(`${url()}/api/auth/signin/nodemailer`, { body: new URLSearchParams({ csrfToken, email: 'link@example.com' }) })
      const { link } = await nextLink(rig.smtp, 'link@example.com')
      await phone.request(link)
      expect((await sessionOf(phone, url()))?.user.id).toBe(user.id)

      // GitHub is not the last way in: the password is one (the e-mail link another).
      const unlinked = await browser.request(`${url()}/unlink/github`, { method: 'POST' })
      expect(await unlinked.json()).toMatchObject({ provider: 'github', providerAccountId: '4242' })

      // Without e-mail sign-in: the password counts; without it too, the last account stays.
      const bare = authApp({ secret: SECRET, adapter, providers: [Password({ hashing: FAST_HASHING, server: rig.smtp.url, from: FROM })] })
      bare.app.post('/unlink/:provider', bare.auth(async (req, res) => {
        try {
          res.json(await bare.unlinkAccount(String(req.params.provider), { skipCsrfCheck: true }))
        } catch (error) {
          res.status(400).json({ code: (error as { code?: string }).code })
        }
      }))
      rig.app.mount(bare.app)
      // No e-mail sign-in here: only the password makes GitHub not the last way in.
      await adapter.linkAccount({ userId: user.id, type: 'oauth', provider: 'github', providerAccountId: '4242' })
      expect(await (await browser.request(`${url()}/unlink/github`, { method: 'POST' })).json()).toMatchObject({ provider: 'github' })
      await adapter.linkAccount({ userId: user.id, type: 'oauth', provider: 'github', providerAccountId: '4242' })
      await db.knex('Password').where({ userId: user.id }).del()
      expect(await (await browser.request(`${url()}/unlink/github`, { method: 'POST' })).json()).toEqual({ code: 'last_sign_in_method' })
    })

    it('with passkeys configured, the end of a sign-up offers one: the passkeys page, going on to where the sign-up was headed', async () => {
      const Password = (await import('portcullis/providers/password')).default
      const Passkey = (await import('portcullis/providers/passkey')).default
      const { KnexAdapter } = await import('portcullis/adapters/knex')
      const { authApp } = await import('../support/app-rig.js')
      const { SECRET } = await import('../support/flow.js')
      const { FAST_HASHING, FROM } = await import('./password-app.js')
      const adapter = KnexAdapter(db.knex)
      const app = authApp({ secret: SECRET, adapter, providers: [Password({ hashing: FAST_HASHING, server: rig.smtp.url, from: FROM }), Passkey({ relayingParty: { origin: url().replace('127.0.0.1', 'localhost') } })] })
      rig.app.mount(app.app)
      const browser = new Browser()
      await signUp(browser, url(), 'keys@example.com', GOOD_PASSWORD, { callbackUrl: '/dashboard' })
      const { link } = await nextLink(rig.smtp, 'keys@example.com')
      const verified = await browser.request(link)
      expect(verified.headers.get('location')).toBe(`${url()}/api/auth/passkeys?callbackUrl=${encodeURIComponent(`${url()}/dashboard`)}`)
      const page = await (await browser.request(verified.headers.get('location')!)).text()
      expect(page).toContain(`<input type="hidden" name="callbackUrl" value="${url()}/dashboard">`)
      expect(page).toContain(`<a href="${url()}/dashboard">Not now</a>`)
      // Only to this site.
      const away = await (await browser.request(`${url()}/api/auth/passkeys?callbackUrl=${encodeURIComponent('https://evil.example/')}`)).text()
      expect(away).toContain(`<a href="${url()}/">Not now</a>`)

      // A user with a passkey already goes straight on.
      const user = (await adapter.getUserByEmail('keys@example.com'))!
      await adapter.createAuthenticator({ credentialID: 'Y3JlZGVudGlhbA==', userId: user.id, providerAccountId: 'Y3JlZGVudGlhbA==', credentialPublicKey: 'cGs=', counter: 0, credentialDeviceType: 'singleDevice', credentialBackedUp: false, transports: null })
      await db.knex('User').where({ id: user.id }).update({ emailVerified: null })
      await post(new Browser(), url(), 'verify-email/resend', { email: 'keys@example.com', callbackUrl: '/dashboard' })
      const again = await nextLink(rig.smtp, 'keys@example.com')
      const phone = new Browser()
      const signedIn = await phone.submitForm(await phone.request(again.link))
      expect(signedIn.headers.get('location')).toBe(`${url()}/dashboard`)
    })

    it(`keeps the password table on ${kind}: one row a user, replaced in place, gone with the user`, async () => {
      const { adapter } = { adapter: (await import('portcullis/adapters/knex')).KnexAdapter(db.knex) }
      const user = await adapter.createUser({ email: 'row@example.com', emailVerified: null })
      expect(await adapter.getUserPassword(user.id)).toBeNull()
      await adapter.setUserPassword(user.id, '$scrypt$first')
      await adapter.setUserPassword(user.id, '$scrypt$Second')
      expect(await adapter.getUserPassword(user.id)).toBe('$scrypt$Second')
      expect(Number((await db.knex('Password').count({ n: '*' }).first())?.n)).toBe(1)
      await adapter.deleteUser(user.id)
      expect(await adapter.getUserPassword(user.id)).toBeNull()
    })
  }
}

await describeWithDatabase('sqlite', 'the Password provider on SQLite', flowSuite('sqlite'))
await describeWithDatabase('postgres', 'the Password provider on PostgreSQL', flowSuite('postgres'))
await describeWithDatabase('mariadb', 'the Password provider on MariaDB', flowSuite('mariadb'))
