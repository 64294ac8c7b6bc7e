/**
 * A sign-in link signs in at once only in the browser that asked for it (its `authjs.email-link`
 * cookie binds the token). Anywhere else it asks "Sign in as …?" and only the CSRF-checked POST of
 * that page uses the token. So a mail scanner that prefetches the link (GET or HEAD) does not burn
 * it, and an attacker who mails a link to himself and sends a victim to it does not sign the victim
 * in to the attacker's account unseen (login CSRF). HEAD never uses a token.
 */
import { expect, it } from '@jest/globals'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { Browser, cookiesSet, mailedLink, mountEmailApp, useEmailRig } from './email-app.js'

const rig = useEmailRig()

await describeWithDatabase('sqlite', 'e-mail links bound to the asking browser', (server) => {
  const db = migratedDatabase(server)
  const tokens = () => db.knex('VerificationToken').select('identifier')

  const linkFor = (browser: Browser, address: string) => mailedLink(rig, browser, address)

  it('a scanner that fetches the link (GET, HEAD) first burns nothing: the user then signs in with it', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    const user = new Browser()
    const link = await linkFor(user, 'ada@example.com')
    const scanner = new Browser()
    const head = await scanner.request(link, { method: 'HEAD' })
    expect(head.status).toBe(200)
    const get = await scanner.request(link)
    expect(get.status).toBe(200)
    expect(cookiesSet(get)).not.toContain('authjs.session-token')
    expect(await tokens()).toEqual([{ identifier: 'ada@example.com' }])

    const opened = await user.request(link)
    expect(opened.status).toBe(302)
    expect(opened.headers.get('location')).toBe(`${rig.app.url}/`)
    expect((await sessionOf(user, rig.app.url))?.user.email).toBe('ada@example.com')
    expect(await sessionOf(scanner, rig.app.url)).toBeNull()
    expect(await tokens()).toEqual([])
    // The binding is spent with the link.
    expect(user.cookie(rig.app.url, 'authjs.email-link')).toBeUndefined()
  })

  it('HEAD with the asking browser\'s cookie does not use the token either', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    const user = new Browser()
    const link = await linkFor(user, 'ada@example.com')
    const head = await user.request(link, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(cookiesSet(head)).toEqual([])
    expect(await tokens()).toHaveLength(1)
    expect(await sessionOf(user, rig.app.url)).toBeNull()
    expect((await user.request(link)).headers.get('location')).toBe(`${rig.app.url}/`)
  })

  it('login CSRF: a victim sent to the attacker\'s own link sees whose account it is, and is not signed in without pressing the button', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    const attacker = new Browser()
    const link = await linkFor(attacker, 'mallory@evil.example')
    const victim = new Browser()
    const page = await victim.request(link, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } })
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('Sign in as <strong>mallory@evil.example</strong>?')
    expect(await sessionOf(victim, rig.app.url)).toBeNull()
    expect(await tokens()).toHaveLength(1)
    // Another site cannot press the button for the victim: the POST needs the page's CSRF token.
    const { searchParams } = new URL(link)
    const forged = await victim.request(link.split('?')[0]!, {
      body: new URLSearchParams({ token: searchParams.get('token')!, email: searchParams.get('email')! }),
      headers: { 'sec-fetch-site': 'cross-site' },
    })
    expect(redirectOf(forged).error).toBe('MissingCSRF')
    expect(await sessionOf(victim, rig.app.url)).toBeNull()
    expect(await tokens()).toHaveLength(1)
  })

  it('the cookie binds only the link it came with: another link, or a forged cookie, asks first', async () => {
    mountEmailApp(rig.app, db.knex, rig.smtp)
    const browser = new Browser()
    const first = await linkFor(browser, 'ada@example.com')
    const second = await linkFor(browser, 'ada@example.com')
    // The second request's cookie replaced the first's.
    expect((await browser.request(first)).status).toBe(200)
    const other = await linkFor(new Browser(), 'bob@example.com')
    expect((await browser.request(other)).status).toBe(200)
    const forged = new Browser()
    forged.setCookie(rig.app.url, 'authjs.email-link', 'A'.repeat(43))
    expect((await forged.request(second)).status).toBe(200)
    expect(await tokens()).toHaveLength(3)
    expect((await browser.request(second)).headers.get('location')).toBe(`${rig.app.url}/`)
    expect(await tokens()).toHaveLength(2)
  })
})
