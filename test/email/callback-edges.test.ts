/**
 * The e-mail callback's edges: the longest link parameters it looks up, the moment a link expires,
 * what each refusal logs, the confirmation page of a link without a callbackUrl, the address that
 * page shows (a valid one, normalised, or no page), and the binding cookie it clears (with the
 * attributes it was set with, or a browser would keep it).
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import { KnexAdapter } from 'portcullis/adapters/knex'
import { barrier } from '../support/barrier.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { linkOf } from '../support/smtp.js'
import { freezeClock } from '../two-factor/two-factor-app.js'
import { Browser, followLink, mailedLink, mountEmailApp, recordingLogger, requestLink, useEmailRig, withParams, type LogLines } from './email-app.js'

const rig = useEmailRig()
const LONGEST = 1024

afterEach(() => {
  jest.useRealTimers()
})

await describeWithDatabase('sqlite', 'the e-mail callback', (server) => {
  const db = migratedDatabase(server)

  const linkFor = (browser: Browser, address: string) => mailedLink(rig, browser, address)
  /** What a refusal logs: its warn and debug lines. */
  const logged = (lines: LogLines) => [...lines.warn, ...lines.debug].join('\n')

  /** The error a link answers with (confirmed, when it asks), and what was logged by then. */
  async function refusal(browser: Browser, link: string, lines: LogLines) {
    const response = await followLink(browser, link)
    return { error: redirectOf(response).error, logged: logged(lines) }
  }

  it(`looks up a token and an address of up to ${LONGEST} characters, and refuses longer ones before the database`, async () => {
    const { logger, lines } = recordingLogger()
    mountEmailApp(rig.app, db.knex, rig.smtp, { logger })
    const user = new Browser()
    const link = await linkFor(user, 'ada@example.com')
    const asked = (changes: Record<string, string>) => new Browser().request(withParams(link, changes))
    // Another browser is asked to confirm: nothing is looked up yet, but the parameters passed.
    expect((await asked({ token: 't'.repeat(LONGEST) })).status).toBe(200)
    // An address that long is no address: its page is not shown; the browser that asked looks it up.
    const longest = `${'a'.repeat(LONGEST - 12)}@example.com`
    expect(redirectOf(await asked({ email: longest })).error).toBe('Verification')
    expect(redirectOf(await user.request(withParams(link, { email: longest }))).error).toBe('Verification')
    expect(logged(lines)).toContain('The sign-in link is unknown, already used, or for another address.')
    for (const changes of [{ token: 't'.repeat(LONGEST + 1) }, { email: `${'a'.repeat(LONGEST - 11)}@example.com` }, { token: '' }] as Record<string, string>[]) {
      const response = await asked(changes)
      expect(redirectOf(response).error).toBe('Verification')
    }
    expect(logged(lines)).toContain('The sign-in link has no token or no e-mail address.')
    // The real link still works.
    expect((await user.request(link)).status).toBe(302)
    expect((await sessionOf(user, rig.app.url))?.user.email).toBe('ada@example.com')
  })

  it("the confirmation page shows the link's address normalised, and no page at all for text that is no address", async () => {
    const { logger, lines } = recordingLogger()
    mountEmailApp(rig.app, db.knex, rig.smtp, { logger })
    const link = await linkFor(new Browser(), 'ada@example.com')
    const shown = await new Browser().request(withParams(link, { email: '  Ada@Example.COM ' }))
    expect(shown.status).toBe(200)
    expect(await shown.text()).toContain('Sign in as <strong>ada@example.com</strong>?')
    // Text of an attacker's choosing, in a link to the site's own page.
    const text = 'security@example.com. URGENT: your account is locked, call +1 555 0100'
    const response = await new Browser().request(withParams(link, { email: text }))
    expect(redirectOf(response).error).toBe('Verification')
    expect(await response.text()).not.toContain('URGENT')
    expect(logged(lines)).toContain('The sign-in link has no valid e-mail address.')
    // The token was not touched: the link still signs in.
    const phone = new Browser()
    expect((await followLink(phone, link)).status).toBe(302)
    expect((await sessionOf(phone, rig.app.url))?.user.email).toBe('ada@example.com')
  })

  it('a link works until the last millisecond of its life, and not one after', async () => {
    const start = Date.UTC(2026, 10, 26, 9, 0, 0)
    const { logger, lines } = recordingLogger()
    mountEmailApp(rig.app, db.knex, rig.smtp, { logger }, { maxAge: 600 })
    freezeClock(start)
    const first = new Browser()
    const second = new Browser()
    const firstLink = await linkFor(first, 'ada@example.com')
    const secondLink = await linkFor(second, 'bob@example.com')
    freezeClock(start + 600_000)
    // (The binding cookie has the link's life too: the browser has dropped it, so it confirms first.)
    expect((await followLink(first, firstLink)).headers.get('location')).toBe(`${rig.app.url}/`)
    expect((await sessionOf(first, rig.app.url))?.user.email).toBe('ada@example.com')
    freezeClock(start + 600_001)
    const late = await refusal(second, secondLink, lines)
    expect(late.error).toBe('Verification')
    expect(late.logged).toContain('The sign-in link has expired.')
    expect(await sessionOf(second, rig.app.url)).toBeNull()
  })

  it('logs why a used link is refused', async () => {
    const { logger, lines } = recordingLogger()
    mountEmailApp(rig.app, db.knex, rig.smtp, { logger })
    const user = new Browser()
    const link = await linkFor(user, 'ada@example.com')
    expect((await user.request(link)).status).toBe(302)
    const used = await refusal(user, link, lines)
    expect(used.error).toBe('Verification')
    expect(used.logged).toContain('The sign-in link is unknown, already used, or for another address.')
  })

  it('the confirmation page of a link without a callbackUrl sends the browser to the site root once confirmed', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    const link = await linkFor(new Browser(), 'ada@example.com')
    const url = new URL(link)
    url.searchParams.delete('callbackUrl')
    const other = new Browser()
    const page = await other.request(url.href)
    expect(page.status).toBe(200)
    const confirmed = await other.submitForm(page)
    expect(confirmed.headers.get('location')).toBe(`${rig.app.url}/`)
    expect((await sessionOf(other, rig.app.url))?.user.email).toBe('ada@example.com')
  })

  /** The Knex adapter, its createUser held until `count` calls have arrived, then all let go at once. */
  function createUsersAtOnce(count: number) {
    const adapter = KnexAdapter(db.knex)
    const arrived = barrier(count)
    return {
      ...adapter,
      createUser: async (user: Parameters<NonNullable<typeof adapter.createUser>>[0]) => {
        await arrived()
        return adapter.createUser!(user)
      },
    }
  }

  it('two links for one new address followed at once: one user, created once, both browsers signed in as it', async () => {
    const events: { name: string; id: string | undefined }[] = []
    const on = (name: string) => ({ user }: { user: { id?: string } }) => void events.push({ name, id: user.id })
    const signIns: boolean[] = []
    mountEmailApp(rig.app, db.knex, rig.smtp, {
      adapter: createUsersAtOnce(2),
      events: { createUser: on('createUser'), updateUser: on('updateUser'), signIn: ({ isNewUser }) => void signIns.push(isNewUser === true) },
    })
    const browsers = [new Browser(), new Browser()]
    const links = [await linkFor(browsers[0]!, 'newcomer@example.com'), await linkFor(browsers[1]!, 'newcomer@example.com')]
    const responses = await Promise.all(browsers.map((browser, i) => browser.request(links[i]!)))
    expect(responses.map((response) => redirectOf(response).error)).toEqual([null, null])
    const users = await db.knex('User').where({ email: 'newcomer@example.com' })
    expect(users).toHaveLength(1)
    expect(users[0].emailVerified).not.toBeNull()
    const sessions = await Promise.all(browsers.map((browser) => sessionOf(browser, rig.app.url)))
    expect(sessions.map((session) => session?.user.id)).toEqual([users[0].id, users[0].id])
    // The loser found the winner's user and marked it verified, as for any returning user.
    expect(events).toEqual(expect.arrayContaining([{ name: 'createUser', id: users[0].id }, { name: 'updateUser', id: users[0].id }]))
    expect(events).toHaveLength(2)
    // Only the winner's sign-in made the user.
    expect(signIns.sort()).toEqual([false, true])
  })

  it('a createUser that fails with no user to fall back on: the error page, and the address kept out of the log', async () => {
    const { logger, lines } = recordingLogger()
    const failing = {
      ...KnexAdapter(db.knex),
      createUser: async (user: { email?: string | null }) => {
        // The value in the message itself, not in SQL text (which is stripped on its own).
        throw new Error(`Key (email)=(${user.email}): Connection terminated unexpectedly`)
      },
    }
    mountEmailApp(rig.app, db.knex, rig.smtp, { adapter: failing, logger })
    const browser = new Browser()
    const response = await browser.request(await linkFor(browser, 'lost@example.com'))
    expect(redirectOf(response)).toMatchObject({ error: 'AdapterError' })
    expect(await sessionOf(browser, rig.app.url)).toBeNull()
    const all = JSON.stringify(lines)
    expect(all).toContain('Connection terminated unexpectedly')
    expect(all).toContain('createUser')
    expect(all).not.toContain('lost@example.com')
  })

  it('clears the binding cookie with the attributes it was set with', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    const user = new Browser()
    const asked = await requestLink(user, rig.app.url, 'ada@example.com')
    const set = asked.headers.getSetCookie().find((cookie) => cookie.startsWith('authjs.email-link='))!
    const attributes = (cookie: string) => cookie.split('; ').slice(1).filter((attribute) => !/^(Max-Age|Expires)=/i.test(attribute)).sort()
    const opened = await user.request(linkOf(await rig.smtp.nextMessage()))
    const cleared = opened.headers.getSetCookie().find((cookie) => cookie.startsWith('authjs.email-link='))!
    expect(cleared).toMatch(/^authjs\.email-link=; /)
    expect(cleared).toMatch(/; Max-Age=0(;|$)/)
    expect(attributes(cleared)).toEqual(attributes(set))
  })
})
