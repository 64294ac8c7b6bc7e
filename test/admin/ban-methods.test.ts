/**
 * A ban refuses the sign-in of every method before a session exists: an e-mail link, a
 * credentials form and a passkey here (the password's and OAuth's are in admin-api.test.ts and the
 * scale-out suite). The refusal is the admin wing's `beforeSession` hook, which the core's sign-in finish asks
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
import request from 'supertest'
import { fetchCsrfToken } from '../support/flow.js'
import { SoftwareAuthenticator } from '../support/software-authenticator.js'
import { passkeyApp, passkeyDatabase } from '../passkey/passkey-app.js'

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

it('refuses a passkey sign-in of a banned user', async () => {
  const origin = 'https://app.example.com'
  const db = await passkeyDatabase()
  try {
    const app = passkeyApp(db, origin, { config: { roles: access, admin: true, rateLimit: { ip: { attempts: 1_000, windowSeconds: 900 } } } })
    // The token first: a supertest request takes the cookies its agent has when it is made.
    const post = async (agent: request.Agent, path: string, fields: Record<string, unknown>) => {
      const csrfToken = await fetchCsrfToken(agent)
      return agent.post(`/api/auth/${path}`).type('form').send({ csrfToken, ...fields })
    }
    const options = async (agent: request.Agent, action: string) => (await agent.get(`/api/auth/webauthn-options/passkey?action=${action}`).expect(200)).body.options
    // Eve signs in (the credentials form), registers a passkey, and is banned.
    const user = await app.adapter.createUser({ email: 'eve.passkey@example.com', name: null, emailVerified: null })
    const eve = request.agent(app.app)
    const signedIn = await post(eve, 'callback/credentials', { email: 'eve.passkey@example.com' })
    expect([signedIn.status, signedIn.headers.location]).toEqual([302, expect.any(String)])
    expect(new URL(signedIn.headers.location!, origin).searchParams.get('error')).toBeNull()
    const authenticator = new SoftwareAuthenticator(origin)
    await post(eve, 'callback/passkey', { action: 'register', data: JSON.stringify(authenticator.register(await options(eve, 'register'))) })
    expect(await db('Authenticator').where({ userId: user.id }).first()).toBeDefined()
    await app.adapter.banUser(user.id, { at: new Date(), reason: null, expiresAt: null })

    const browser = request.agent(app.app)
    const refused = await post(browser, 'callback/passkey', { data: JSON.stringify(authenticator.authenticate(await options(browser, 'authenticate'))) })
    expect(new URL(refused.headers.location!, origin).searchParams.get('error')).toBe('UserBanned')
    expect((await browser.get('/me')).body?.user).toBeUndefined()
  } finally {
    await db.destroy()
  }
})
