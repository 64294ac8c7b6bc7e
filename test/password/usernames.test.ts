/**
 * Usernames on the Password provider (`usernames`), with real parts: a real SMTP server receives the
 * mails, real databases (SQLite, PostgreSQL, MariaDB) hold the names and their unique skeletons, and
 * cookie-jar browsers post the forms. Signing in with a username or the address, lookalikes and
 * reserved names refused, a taken name at sign-up answered as a free one (the mail says it), the
 * `/username` page and `changeUsername()` (CSRF, another user's name), the unknown name's dummy
 * verification, and two sign-ups claiming one name at once.
 */
import { describe, expect, it } from '@jest/globals'
import express from 'express'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Password, { UsernameError, usernameSkeleton, type PasswordHashing } from 'portcullis/providers/password'
import Portcullis from 'portcullis'
import { describeWithDatabase, migratedDatabase, type DatabaseKind, type DatabaseServer } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import type { TestSmtpServer } from '../support/smtp.js'
import { SECRET } from '../support/flow.js'
import { Browser, FAST_HASHING, FROM, GOOD_PASSWORD, csrfOf, mountPasswordApp, nextLink, post, signIn, signUp } from './password-app.js'

// The suite's SMTP server and app listener (each test starts with no mail waiting).
const rig = useEmailRig()

/** The text of the next mail to `to` (mails of earlier tests may still arrive). */
async function nextMailText(smtp: TestSmtpServer, to: string): Promise<string> {
  for (;;) {
    const mail = await smtp.nextMessage()
    if (mail.to.includes(to)) return mail.parsed.text ?? ''
  }
}

/** What a response shows an observer: status, where it goes, the set cookies' names. */
function observable(response: Response) {
  return {
    status: response.status,
    location: response.headers.get('location'),
    cookies: response.headers.getSetCookie().map((cookie) => cookie.replace(/=[^;]*/, '=…')),
  }
}

/** Signs up with a username and follows the link in the same browser: signed in, verified. */
async function memberWithUsername(browser: Browser, email: string, username: string, password = GOOD_PASSWORD): Promise<void> {
  const response = await signUp(browser, rig.app.url, email, password, { username })
  if (response.status !== 302) throw new Error(`sign-up answered ${response.status}`)
  const { link } = await nextLink(rig.smtp, email)
  const verified = await browser.request(link)
  if (verified.status !== 302) throw new Error(`the verification link answered ${verified.status}`)
}

/** The username rows, as stored. */
function storedUsernames(server: { readonly knex: import('knex').Knex }) {
  return server.knex('Username').select('userId', 'username', 'usernameKey').orderBy('username')
}

function adapterSuite(kind: DatabaseKind) {
  return (server: DatabaseServer) => {
    const db = migratedDatabase(server)

    it(`keeps usernames on ${kind}: one per user, replaced in place, unique by skeleton, gone with the user`, async () => {
      const adapter = KnexAdapter(db.knex)
      const ada = await adapter.createUser({ email: 'ada@example.com', emailVerified: null })
      const eve = await adapter.createUser({ email: 'eve@example.com', emailVerified: null })
      expect(await adapter.getUsername(ada.id)).toBeNull()
      expect(await adapter.getUserByUsername('ada')).toBeNull()
      expect(await adapter.setUsername(ada.id, 'Ada', usernameSkeleton('Ada'))).toBe(true)
      expect(await adapter.getUsername(ada.id)).toBe('Ada')
      expect((await adapter.getUserByUsername('ada'))?.email).toBe('ada@example.com')
      // Another user's skeleton: refused, nothing changed, no throw.
      expect(await adapter.setUsername(eve.id, 'a.da', usernameSkeleton('a.da'))).toBe(false)
      expect(await adapter.getUsername(eve.id)).toBeNull()
      // The owner's own name in another case, then another name: the row is replaced.
      expect(await adapter.setUsername(ada.id, 'ADA', usernameSkeleton('ADA'))).toBe(true)
      expect(await adapter.setUsername(ada.id, 'countess', usernameSkeleton('countess'))).toBe(true)
      expect(await storedUsernames(db)).toEqual([{ userId: ada.id, username: 'countess', usernameKey: 'countess' }])
      // The old name is free again.
      expect(await adapter.setUsername(eve.id, 'ada', 'ada')).toBe(true)
      // MySQL/MariaDB's default collation would find `ADA` by `ada`: the key column compares bytes.
      expect(await adapter.getUserByUsername('ADA')).toBeNull()
      await adapter.deleteUser(ada.id)
      expect(await adapter.getUserByUsername('countess')).toBeNull()
      expect(await storedUsernames(db)).toEqual([{ userId: eve.id, username: 'ada', usernameKey: 'ada' }])
    })

    it(`lets one of six concurrent sign-ups claiming one username have it on ${kind}; the others are made without it, answered alike and told by mail`, async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      const emails = Array.from({ length: 6 }, (_, index) => `racer${index}@example.com`)
      const responses = await Promise.all(emails.map((email) => signUp(new Browser(), rig.app.url, email, GOOD_PASSWORD, { username: 'Racer' })))
      expect(responses.map((response) => response.status)).toEqual(Array(6).fill(302))
      expect(new Set(responses.map((response) => JSON.stringify(observable(response))))).toHaveProperty('size', 1)
      // Nobody lost: six users, one of them with the name.
      expect(Number((await db.knex('User').count({ n: '*' }).first())?.n)).toBe(6)
      const rows = await storedUsernames(db)
      expect(rows).toHaveLength(1)
      const mails = new Map<string, string>()
      while (mails.size < 6) {
        const mail = await rig.smtp.nextMessage()
        mails.set(mail.to[0]!, mail.parsed.text ?? '')
      }
      const told = [...mails.values()].filter((text) => text.includes('The username you asked for is taken'))
      expect(told).toHaveLength(5)
      const owner = await db.knex('User').where({ id: rows[0].userId }).first()
      expect(mails.get(owner.email)).not.toContain('is taken')
    })
  }
}

await describeWithDatabase('sqlite', 'usernames on SQLite', adapterSuite('sqlite'))
await describeWithDatabase('postgres', 'usernames on PostgreSQL', adapterSuite('postgres'))
await describeWithDatabase('mariadb', 'usernames on MariaDB', adapterSuite('mariadb'))

/** FAST_HASHING, counting its verifications. */
function countingHashing(): PasswordHashing & { calls: { verify: number } } {
  const calls = { verify: 0 }
  return { calls, hash: FAST_HASHING.hash, verify: (password, stored) => (calls.verify++, FAST_HASHING.verify(password, stored)), needsRehash: FAST_HASHING.needsRehash }
}

await describeWithDatabase('sqlite', 'usernames: sign-up, sign-in and change', (server) => {
  const db = migratedDatabase(server)
  const url = () => rig.app.url

  describe('sign-in', () => {
    it('signs in with the username, a lookalike of it (case, fullwidth, separators), or the address; the session is the user of the address', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      await memberWithUsername(new Browser(), 'ada@example.com', 'Ada.Lovelace')
      for (const typed of ['Ada.Lovelace', 'ada.lovelace', 'adalovelace', 'ａｄａ．ｌｏｖｅｌａｃｅ', '  ada_lovelace ', 'ada@example.com']) {
        const browser = new Browser()
        const response = await signIn(browser, url(), typed)
        expect([typed, response.headers.get('location')]).toEqual([typed, `${url()}/`])
        expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')
      }
      // A wrong password with the username, and a name nobody has: the answer of a wrong address.
      for (const typed of ['Ada.Lovelace', 'nobody-here', 'nobody@example.com']) {
        expect(redirectOf(await signIn(new Browser(), url(), typed, 'not the password at all'))).toMatchObject({ error: 'CredentialsSignin', code: 'credentials' })
      }
    })

    it("reaches the session's user through the session callback, as the guide shows", async () => {
      const adapter = KnexAdapter(db.knex)
      mountPasswordApp(rig.app, db.knex, rig.smtp, {
        adapter,
        callbacks: { session: async ({ session, user }) => ({ ...session, user: { ...session.user, username: await adapter.getUsername(user.id) } }) },
      }, { usernames: true })
      const browser = new Browser()
      await memberWithUsername(browser, 'shown@example.com', 'Shown.Name')
      expect((await sessionOf(browser, url()))?.user).toMatchObject({ email: 'shown@example.com', username: 'Shown.Name' })
    })

    it('an unknown username costs one verification, as a wrong password and an unknown address do', async () => {
      const hashing = countingHashing()
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true, hashing })
      await memberWithUsername(new Browser(), 'grace@example.com', 'grace')
      // The dummy hash is made on the first unknown name: make it before counting.
      await signIn(new Browser(), url(), 'warm-up', 'some wrong password')
      hashing.calls.verify = 0
      const wrong = observable(await signIn(new Browser(), url(), 'grace', 'some wrong password'))
      expect(hashing.calls.verify).toBe(1)
      const unknownName = observable(await signIn(new Browser(), url(), 'hopper', 'some wrong password'))
      expect(hashing.calls.verify).toBe(2)
      const unknownAddress = observable(await signIn(new Browser(), url(), 'hopper@example.com', 'some wrong password'))
      expect(hashing.calls.verify).toBe(3)
      expect(unknownName).toEqual(wrong)
      expect(unknownAddress).toEqual(wrong)
    })

    it('limits attempts per username, lookalikes counted as one name', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, { rateLimit: { identifier: { attempts: 3, windowSeconds: 60 }, ip: { attempts: 100, windowSeconds: 60 } } }, { usernames: true })
      await memberWithUsername(new Browser(), 'lin@example.com', 'lin.r')
      for (const typed of ['lin.r', 'LIN-R', 'lin_r']) expect(redirectOf(await signIn(new Browser(), url(), typed, 'not the password at all')).error).toBe('CredentialsSignin')
      expect((await signIn(new Browser(), url(), 'linr')).status).toBe(429)
    })

    it('requireEmailVerification: the right password with the username of an unverified account gets the "send the link again" form, not filled in with the name', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true, requireEmailVerification: true })
      expect((await signUp(new Browser(), url(), 'waiting@example.com', GOOD_PASSWORD, { username: 'waiting' })).status).toBe(302)
      await nextLink(rig.smtp, 'waiting@example.com')
      const browser = new Browser()
      const refused = await signIn(browser, url(), 'waiting')
      expect(redirectOf(refused)).toMatchObject({ error: 'CredentialsSignin', code: 'email_not_verified' })
      const page = await (await browser.request(refused.headers.get('location')!)).text()
      expect(page).toMatch(/<input id="resend-email" type="email" name="email" autocomplete="email" required>/)
      expect(await sessionOf(browser, url())).toBeNull()
    })

    it('without usernames, a name with no @ is a malformed address, as before', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp)
      await memberWithUsername(new Browser(), 'off@example.com', 'ignored-name')
      expect(await db.knex('Username').select()).toEqual([])
      expect(redirectOf(await signIn(new Browser(), url(), 'ignored-name')).error).toBe('CredentialsSignin')
    })
  })

  describe('sign-up', () => {
    it('answers a taken username exactly as a free one (status, location, cookie names), makes the account without it, and says so in the mail', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      await memberWithUsername(new Browser(), 'first@example.com', 'ada')
      const free = await signUp(new Browser(), url(), 'free@example.com', GOOD_PASSWORD, { username: 'babbage' })
      const freeMail = await nextMailText(rig.smtp, 'free@example.com')
      // `Ada` and fullwidth `ａｄａ` are `ada`; `a.da` too.
      for (const [email, username] of [['second@example.com', 'Ada'], ['third@example.com', 'ａｄａ'], ['fourth@example.com', 'a.da']] as const) {
        const taken = await signUp(new Browser(), url(), email, GOOD_PASSWORD, { username })
        expect(observable(taken)).toEqual(observable(free))
        const text = await nextMailText(rig.smtp, email)
        expect(text).toContain('The username you asked for is taken')
        expect(text).toContain(`${url()}/api/auth/username`)
        // The mail repeats nothing the visitor typed.
        expect(text).not.toContain(username)
      }
      expect(freeMail).not.toContain('taken')
      expect(Number((await db.knex('User').count({ n: '*' }).first())?.n)).toBe(5)
      expect((await storedUsernames(db)).map((row) => row.username)).toEqual(['ada', 'babbage'])
    })

    it('a taken address with a free username: the same answer, no name claimed, its owner mailed as before', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      await memberWithUsername(new Browser(), 'owner@example.com', 'holder')
      const free = await signUp(new Browser(), url(), 'new@example.com', GOOD_PASSWORD, { username: 'newcomer' })
      await nextMailText(rig.smtp, 'new@example.com')
      const taken = await signUp(new Browser(), url(), 'owner@example.com', 'another long passphrase', { username: 'squatter' })
      expect(observable(taken)).toEqual(observable(free))
      expect((await nextLink(rig.smtp, 'owner@example.com')).subject).toMatch(/^Someone tried to sign up to .* with your address$/)
      expect((await storedUsernames(db)).map((row) => row.username)).toEqual(['holder', 'newcomer'])
    })

    it("frees the username an unverified sign-up chose with someone else's address once the owner proves it (a reset link)", async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      expect((await signUp(new Browser(), url(), 'victim@example.com', 'the attacker chose this one', { username: 'victim' })).status).toBe(302)
      await nextLink(rig.smtp, 'victim@example.com')
      expect((await signIn(new Browser(), url(), 'victim', 'the attacker chose this one')).headers.get('location')).toBe(`${url()}/`)
      await post(new Browser(), url(), 'forgot-password', { email: 'victim@example.com' })
      const { link } = await nextLink(rig.smtp, 'victim@example.com')
      const owner = new Browser()
      expect((await owner.submitForm(await owner.request(link), { password: 'the owner chose this one' })).headers.get('location')).toBe(`${url()}/`)
      expect(await storedUsernames(db)).toEqual([])
      expect(redirectOf(await signIn(new Browser(), url(), 'victim', 'the attacker chose this one')).error).toBe('CredentialsSignin')
      expect(redirectOf(await signIn(new Browser(), url(), 'victim', 'the owner chose this one')).error).toBe('CredentialsSignin')
    })

    it('refuses reserved names and their lookalikes, bad characters, mixed scripts and bad lengths on the form, creating nobody', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: { reserved: ['portcullis-team', 'acme'] } })
      const refusals: [string, RegExp][] = [
        ['admin', /reserved/],
        ['adrnin', /reserved/],
        ['Adm1n', /reserved/],
        ['ＡＤＭＩＮ', /reserved/],
        ['root', /reserved/],
        ['ACME', /reserved/],
        ['a.c.m.e', /reserved/],
        ['ab', /at least 3/],
        ['x'.repeat(31), /at most 30/],
        ['_ada', /characters/],
        ['ada lovelace', /characters/],
        ['ada@home', /characters/],
        ['ada\u200b', /characters/],
        ['аda', /characters/],
      ]
      for (const [index, [username, message]] of refusals.entries()) {
        const browser = new Browser()
        // An address each: sign-ups are rate-limited per address.
        const response = await signUp(browser, url(), `refused${index}@example.com`, GOOD_PASSWORD, { username })
        expect([username, response.status]).toEqual([username, 400])
        expect([username, await response.text()]).toEqual([username, expect.stringMatching(message)])
      }
      expect(await db.knex('User').select()).toEqual([])
    })

    it('with a pattern that lets other scripts in, refuses a Latin and Cyrillic mix and folds whole-script lookalikes', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: { pattern: /^[\p{L}\p{N}][\p{L}\p{N}._-]*$/u } })
      const mixed = await signUp(new Browser(), url(), 'mixed@example.com', GOOD_PASSWORD, { username: 'pаypal' })
      expect(mixed.status).toBe(400)
      expect(await mixed.text()).toMatch(/different alphabets/)
      // All Cyrillic `асе` looks like Latin `ace`: the second is taken.
      await memberWithUsername(new Browser(), 'latin@example.com', 'ace')
      await signUp(new Browser(), url(), 'cyrillic@example.com', GOOD_PASSWORD, { username: 'асе' })
      expect(await nextMailText(rig.smtp, 'cyrillic@example.com')).toContain('is taken')
      // A name of one other script is fine.
      await memberWithUsername(new Browser(), 'greek@example.com', 'Σωκράτης')
      expect((await signIn(new Browser(), url(), 'σωκρατης')).headers.get('location')).toBe(`${url()}/`)
    })

    it('required: a sign-up without a username is refused; the page asks for it', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: { required: true } })
      const page = await (await new Browser().request(`${url()}/api/auth/signup`)).text()
      expect(page).toMatch(/<input id="signup-username" type="text" name="username"[^>]* required>/)
      const response = await signUp(new Browser(), url(), 'quiet@example.com')
      expect(response.status).toBe(400)
      expect(await response.text()).toContain('Choose a username.')
      expect(await db.knex('User').select()).toEqual([])
    })

    it('the server-side signUp() takes a username and refuses a reserved one with UsernameError', async () => {
      const app = mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      const request = Object.assign(Object.create(null), { method: 'POST', headers: { host: new URL(url()).host }, url: '/' })
      await expect(app.signUp(request, { email: 'x@example.com', password: GOOD_PASSWORD, username: 'support', skipCsrfCheck: true })).rejects.toMatchObject({ type: 'Username', code: 'reserved' })
      await expect(app.signUp(request, { email: 'x@example.com', password: GOOD_PASSWORD, username: 'support' })).rejects.toMatchObject({ type: 'MissingCSRF' })
      await app.signUp(request, { email: 'x@example.com', password: GOOD_PASSWORD, username: 'xavier', skipCsrfCheck: true })
      expect((await storedUsernames(db)).map((row) => row.username)).toEqual(['xavier'])
    })
  })

  describe('change', () => {
    it('the /username page shows the name and changes it; a signed-out visitor is sent to sign in', async () => {
      const events: string[] = []
      mountPasswordApp(rig.app, db.knex, rig.smtp, { events: { updateUser: ({ user }) => void events.push(user.email ?? '') } }, { usernames: true })
      const browser = new Browser()
      await memberWithUsername(browser, 'mae@example.com', 'mae')
      events.length = 0
      const page = await browser.request(`${url()}/api/auth/username`)
      expect(page.status).toBe(200)
      expect(await page.clone().text()).toContain('Your username is <strong>mae</strong>')
      const changed = await browser.submitForm(page, { username: 'Mae.Jemison' })
      expect(changed.headers.get('location')).toBe(`${url()}/api/auth/username`)
      expect(await (await browser.request(`${url()}/api/auth/username`)).text()).toContain('Your username is <strong>Mae.Jemison</strong>')
      expect(events).toEqual(['mae@example.com'])
      expect((await signIn(new Browser(), url(), 'maejemison')).headers.get('location')).toBe(`${url()}/`)
      expect(redirectOf(await signIn(new Browser(), url(), 'mae')).error).toBe('CredentialsSignin')
      const stranger = await new Browser().request(`${url()}/api/auth/username`)
      expect(stranger.headers.get('location')).toBe(`${url()}/api/auth/signin?${new URLSearchParams({ callbackUrl: `${url()}/api/auth/username` })}`)
    })

    it("refuses another user's username and its lookalikes as taken, and a post without the CSRF token", async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      await memberWithUsername(new Browser(), 'owner@example.com', 'modest')
      const mallory = new Browser()
      await memberWithUsername(mallory, 'mallory@example.com', 'mallory')
      for (const username of ['modest', 'MODEST', 'rnodest', 'm0dest', 'mo-dest']) {
        const response = await post(mallory, url(), 'username', { username })
        expect([username, response.status]).toEqual([username, 400])
        expect(await response.text()).toContain('is taken')
      }
      // No token, a wrong one: refused before anything is read.
      for (const body of [new URLSearchParams({ username: 'free-name' }), new URLSearchParams({ username: 'free-name', csrfToken: 'forged' })]) {
        expect(redirectOf(await mallory.request(`${url()}/api/auth/username`, { body })).error).toBe('MissingCSRF')
      }
      expect((await storedUsernames(db)).map((row) => row.username)).toEqual(['mallory', 'modest'])
      expect((await signIn(new Browser(), url(), 'modest')).headers.get('location')).toBe(`${url()}/`)
    })

    it('limits tries at changing the username per user, so that taken names cannot be listed by trying them', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, { rateLimit: { identifier: { attempts: 3, windowSeconds: 60 }, ip: { attempts: 100, windowSeconds: 60 } } }, { usernames: true })
      const browser = new Browser()
      await memberWithUsername(browser, 'prober@example.com', 'prober')
      const statuses = []
      for (const username of ['taken-1', 'taken-2', 'taken-3', 'taken-4']) statuses.push((await post(browser, url(), 'username', { username })).status)
      expect(statuses).toEqual([302, 302, 302, 429])
      expect((await storedUsernames(db)).map((row) => row.username)).toEqual(['taken-3'])
    })

    it('changeUsername() is CSRF-checked, needs a signed-in user, and throws taken for a name another user has', async () => {
      const app = mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      app.app.post('/profile/username', express.urlencoded({ extended: false }), async (req, res) => {
        try {
          res.send(await app.changeUsername(req, { username: String(req.body.username), csrfToken: String(req.body.csrfToken ?? '') }))
        } catch (error) {
          res.status(400).send(error instanceof UsernameError ? error.code : (error as { type?: string }).type)
        }
      })
      await memberWithUsername(new Browser(), 'other@example.com', 'other')
      const browser = new Browser()
      await memberWithUsername(browser, 'me@example.com', 'me-myself')
      const call = async (who: Browser, username: string, csrf?: string) => {
        const response = await who.request(`${url()}/profile/username`, { body: new URLSearchParams({ username, ...(csrf === undefined ? {} : { csrfToken: csrf }) }) })
        return [response.status, await response.text()]
      }
      expect(await call(browser, 'newname')).toEqual([400, 'MissingCSRF'])
      const csrf = await csrfOf(browser, url())
      expect(await call(browser, 'Other', csrf)).toEqual([400, 'taken'])
      expect(await call(browser, 'help', csrf)).toEqual([400, 'reserved'])
      expect(await call(browser, '  ＮｅｗＮａｍｅ ', csrf)).toEqual([200, 'NewName'])
      const stranger = new Browser()
      expect(await call(stranger, 'strange', await csrfOf(stranger, url()))).toEqual([400, 'AccountUnlinkError'])
    })

    it('has no /username without usernames; HEAD of the page changes nothing', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp)
      const browser = new Browser()
      await memberWithUsername(browser, 'plain@example.com', 'plain')
      expect((await browser.request(`${url()}/api/auth/username`)).status).toBe(400)
      expect((await post(browser, url(), 'username', { username: 'plain' })).status).toBe(400)
      expect(await db.knex('Username').select()).toEqual([])
      mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { usernames: true })
      const head = await browser.request(`${url()}/api/auth/username`, { method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(await db.knex('Username').select()).toEqual([])
    })

    it('links the username page from the account page when usernames are on', async () => {
      mountPasswordApp(rig.app, db.knex, rig.smtp, { account: { server: rig.smtp.url, from: FROM } }, { usernames: true })
      const browser = new Browser()
      await memberWithUsername(browser, 'acc@example.com', 'acc')
      expect(await (await browser.request(`${url()}/api/auth/account`)).text()).toContain(`href="/api/auth/username"`)
    })
  })

  describe('config', () => {
    it('refuses bad usernames options at init, naming the option', () => {
      const init = (usernames: unknown) => () =>
        Portcullis({ secret: SECRET, adapter: KnexAdapter(db.knex), providers: [Password({ server: rig.smtp.url, from: FROM, usernames: usernames as never })] })
      expect(init({ minLength: 0 })).toThrow(/usernames\.minLength/)
      expect(init({ minLength: 5, maxLength: 4 })).toThrow(/usernames\.maxLength/)
      expect(init({ maxLength: 65 })).toThrow(/usernames\.maxLength/)
      expect(init({ pattern: '^[a-z]+$' })).toThrow(/usernames\.pattern must be a RegExp/)
      expect(init({ pattern: /^[a-z]+$/g })).toThrow(/g or y flag/)
      expect(init({ reserved: [''] })).toThrow(/usernames\.reserved/)
      expect(init('yes')).toThrow(/usernames must be true/)
      expect(init(true)).not.toThrow(/usernames/)
      const adapter = { ...KnexAdapter(db.knex), getUserByUsername: undefined }
      expect(() => Portcullis({ secret: SECRET, adapter, providers: [Password({ server: rig.smtp.url, from: FROM, usernames: true })] })).toThrow(/no getUserByUsername/)
    })

    it('the sign-in field takes a username when usernames are on', () => {
      expect(Password({ usernames: true }).credentials.email).toMatchObject({ label: 'E-mail or username', type: 'text' })
      expect(Password().credentials.email).toMatchObject({ label: 'E-mail', type: 'email' })
    })
  })
})
