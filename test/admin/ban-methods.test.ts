/**
 * A ban refuses the sign-in of every method before a session exists: an e-mail link and a
 * credentials form here (the password's and OAuth's are in admin-api.test.ts and the scale-out
 * suite). The refusal is the admin wing's `beforeSession` hook, which the core's sign-in finish asks
 * whatever the method. SQLite (the hook reads the ban through the adapter, as on every database).
 */
import { expect, it } from '@jest/globals'
import { adminStatements, defineAccess } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import Nodemailer from 'portcullis/providers/nodemailer'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { Browser } from '../support/browser.js'
import { mountApp, redirectOf } from '../support/oauth-app.js'
import { followLink, mailedLink, useEmailRig } from '../email/email-app.js'

const rig = useEmailRig()
const access = defineAccess({ statements: { ...adminStatements } })

await describeWithDatabase('sqlite', 'a ban, by sign-in method', (server) => {
  const db = migratedDatabase(server)
  const mount = () => {
    const adapter = KnexAdapter(db.knex)
    mountApp(rig.app, {
      adapter,
      roles: access,
      admin: true,
      providers: [
        Nodemailer({ server: rig.smtp.url, from: 'Portcullis <no-reply@example.com>' }),
        Credentials({ credentials: { email: {} }, authorize: async ({ email }) => adapter.getUserByEmail(String(email)) }),
      ],
    })
    return adapter
  }
  const session = async (browser: Browser) => (await (await browser.request(`${rig.app.url}/api/auth/session`)).json()) as { user?: { email?: string } } | null

  it('refuses the e-mail link of a banned user, and lets them in once the ban is lifted', async () => {
    const adapter = mount()
    const user = await adapter.createUser({ email: 'eve.link@example.com', emailVerified: null })
    await adapter.banUser(user.id, { at: new Date(), reason: 'spam', expiresAt: null })
    const browser = new Browser()
    const refused = await followLink(browser, await mailedLink(rig, browser, 'eve.link@example.com'))
    expect(redirectOf(refused).error).toBe('UserBanned')
    expect(await session(browser)).toBeNull()

    await adapter.unbanUser(user.id)
    const again = new Browser()
    expect(redirectOf(await followLink(again, await mailedLink(rig, again, 'eve.link@example.com'))).error).toBeNull()
    expect((await session(again))?.user?.email).toBe('eve.link@example.com')
  })

  it('refuses a credentials sign-in of a banned user', async () => {
    const adapter = mount()
    const user = await adapter.createUser({ email: 'eve.form@example.com', emailVerified: null })
    await adapter.banUser(user.id, { at: new Date(), reason: null, expiresAt: new Date(Date.now() + 60_000) })
    const browser = new Browser()
    const { csrfToken } = (await (await browser.request(`${rig.app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
    const refused = await browser.request(`${rig.app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken, email: 'eve.form@example.com' }) })
    expect(redirectOf(refused).error).toBe('UserBanned')
    expect(await session(browser)).toBeNull()
  })
})
