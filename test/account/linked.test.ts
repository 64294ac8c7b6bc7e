/**
 * Linked accounts on the account page, with a real OpenID Provider (oidc-provider) and SQLite:
 * "Connect" is the provider's sign-in made while signed in, which links the account under the
 * usual rules; "Disconnect" never removes the last way in; and an OAuth-only user confirms a fresh
 * sign-in by a new round trip. Attacks: connecting an OAuth account that belongs to another user,
 * disconnecting someone's last way in.
 */
import { afterEach, expect, it, jest } from '@jest/globals'
import type { Knex } from 'knex'
import { KnexAdapter } from 'portcullis/adapters/knex'
import OIDC from 'portcullis/providers/oidc'
import Password from 'portcullis/providers/password'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { finishSignIn, mountApp, redirectOf, sessionOf, signInWith } from '../support/oauth-app.js'
import { useOAuthRig } from '../support/oauth-rig.js'
import { FAST_HASHING } from '../password/password-app.js'
import { freezeClock, GOOD_PASSWORD, post, signIn, STALE_MS } from './account-app.js'

const rig = useOAuthRig((app) => [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [app.callbackUrl('corp')] }])
const T0 = Date.UTC(2026, 11, 20, 12, 0, 0)

afterEach(() => {
  jest.useRealTimers()
})

await describeWithDatabase('sqlite', 'linked accounts on the account page', (server) => {
  const db = migratedDatabase(server)
  const url = () => rig.app.url
  const mount = () =>
    mountApp(rig.app, {
      adapter: KnexAdapter(db.knex),
      providers: [
        Password({ server: 'console', from: 'auth@example.test', hashing: FAST_HASHING }),
        OIDC({ id: 'corp', name: 'Corp', issuer: rig.idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true }),
      ],
      account: true,
    })
  const accountsOf = async (knex: Knex, email: string) => {
    const user = await knex('User').where({ email }).first()
    return user ? (await knex('Account').where({ userId: user.id }).select('provider', 'providerAccountId')).map((row) => `${row.provider}:${row.providerAccountId}`) : []
  }
  async function passwordUser(email: string): Promise<Browser> {
    const adapter = KnexAdapter(db.knex)
    const user = await adapter.createUser({ email, emailVerified: new Date() })
    await adapter.setUserPassword(user.id, await FAST_HASHING.hash(GOOD_PASSWORD))
    const browser = new Browser()
    expect((await signIn(browser, url(), email)).status).toBe(302)
    return browser
  }
  /** Presses the account page's "Connect Corp" and logs in at the IdP as `login`. */
  async function connect(browser: Browser, login: string): Promise<Response> {
    const page = await browser.request(`${url()}/api/auth/account`)
    const html = await page.text()
    expect(html).toContain('Connect Corp')
    const form = /<form method="post" action="([^"]*\/signin\/corp)">[\s\S]*?name="csrfToken" value="([^"]+)"[\s\S]*?name="callbackUrl" value="([^"]+)"/.exec(html)!
    const started = await browser.request(new URL(form[1]!, url()).href, { body: new URLSearchParams({ csrfToken: form[2]!, callbackUrl: form[3]! }) })
    expect(started.status).toBe(302)
    return finishSignIn(browser, await browser.authorize(started.headers.get('location')!, login))
  }

  it('connects an OAuth account to the signed-in user, who can then disconnect it while a password remains', async () => {
    mount()
    const ada = await passwordUser('ada@example.com')
    const back = await connect(ada, 'ada-at-corp')
    expect(back.headers.get('location')).toBe(`${url()}/api/auth/account`)
    expect(await accountsOf(db.knex, 'ada@example.com')).toEqual(['corp:ada-at-corp'])
    const page = await (await ada.request(`${url()}/api/auth/account`)).text()
    expect(page).toContain('Disconnect Corp')
    const gone = await post(ada, url(), 'account/disconnect', { provider: 'corp' })
    expect(gone.headers.get('location')).toBe(`${url()}/api/auth/account`)
    expect(await accountsOf(db.knex, 'ada@example.com')).toEqual([])
  })

  it('refuses to connect an OAuth account that belongs to another user, and links nothing', async () => {
    mount()
    // Bob's account at Corp, made by his own first sign-in.
    expect((await signInWith(new Browser(), url(), 'corp', 'bob')).status).toBe(302)
    const bob = await db.knex('Account').where({ provider: 'corp', providerAccountId: 'bob' }).first()
    const mallory = await passwordUser('mallory@example.com')
    const refused = await connect(mallory, 'bob')
    expect(redirectOf(refused).error).toBe('OAuthAccountNotLinked')
    expect(await accountsOf(db.knex, 'mallory@example.com')).toEqual([])
    expect(await db.knex('Account').where({ provider: 'corp', providerAccountId: 'bob' }).first()).toEqual(bob)
    expect((await sessionOf(mallory, url()))?.user.email).toBe('mallory@example.com')
  })

  it('never disconnects the last way in', async () => {
    mount()
    const bob = new Browser()
    expect((await signInWith(bob, url(), 'corp', 'bob')).status).toBe(302)
    const refused = await post(bob, url(), 'account/disconnect', { provider: 'corp' })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toContain('That is your only way to sign in')
    expect(await db.knex('Account').where({ provider: 'corp', providerAccountId: 'bob' }).count({ n: '*' })).toEqual([{ n: 1 }])
  })

  it('lets an OAuth-only user confirm a fresh sign-in by a new round trip to the provider', async () => {
    freezeClock(T0)
    mount()
    const bob = new Browser()
    expect((await signInWith(bob, url(), 'corp', 'bob')).status).toBe(302)
    jest.setSystemTime(T0 + STALE_MS)
    const stale = await post(bob, url(), 'account/delete', { confirm: 'yes' })
    const confirmPage = await bob.request(stale.headers.get('location')!)
    const html = await confirmPage.text()
    expect(html).toContain('Sign in again with Corp')
    expect(html).not.toContain('name="password"')
    // The page's form: a new sign-in at Corp, which comes back to the account page.
    const again = await signInWith(bob, url(), 'corp', 'bob', { callbackUrl: `${url()}/api/auth/account` })
    expect(again.headers.get('location')).toBe(`${url()}/api/auth/account`)
    expect((await post(bob, url(), 'account/delete', { confirm: 'yes' })).headers.get('location')).toBe(`${url()}/`)
    expect(await db.knex('User').count({ n: '*' })).toEqual([{ n: 0 }])
  })
})
