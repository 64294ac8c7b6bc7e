/**
 * Linking more accounts and unlinking them: a signed-in user who signs in with another provider gets
 * it linked; the server-side `unlinkAccount(providerId)` removes one, CSRF-checked, and refuses the
 * last way to sign in, also when two requests race for a user's last two accounts. Two OIDC providers
 * on the real in-process IdP; the accounts in real SQLite and PostgreSQL databases.
 */
import express from 'express'
import type { Knex } from 'knex'
import { afterAll, beforeAll, beforeEach, expect, it } from '@jest/globals'
import Portcullis, { type AccountUnlinkError, type PortcullisConfig, type PortcullisResult, type RefreshAccessTokenError } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import OIDC from 'portcullis/providers/oidc'
import { authApp } from '../support/app-rig.js'
import { Browser } from '../support/browser.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, SECRET, sessionOf, signInWith, silentLogger, type Listener } from '../support/oauth-app.js'

let idp: TestIdp
let app: Listener

beforeAll(async () => {
  app = await listen()
  idp = await startIdp({
    clients: ['corp', 'partner'].map((id) => ({ client_id: id, client_secret: `${id}-secret`, redirect_uris: [app.callbackUrl(id)] })),
  })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
})

const provider = (id: string) => OIDC({ id, name: id, issuer: idp.issuer, clientId: id, clientSecret: `${id}-secret`, dangerouslyAllowInsecureRequests: true })

/** Portcullis plus the app's own route that unlinks, as an app's "connected accounts" page would POST to it. */
function mount(db: { readonly knex: Knex }, config: Partial<PortcullisConfig> = {}): PortcullisResult {
  const { app: server, ...portcullis } = authApp({ secret: SECRET, logger: silentLogger, providers: [provider('corp'), provider('partner')], adapter: KnexAdapter(db.knex), ...config })
  server.get(
    '/token/:provider',
    portcullis.auth(async (req, res) => {
      try {
        res.json({ token: await portcullis.getAccessToken(String(req.params.provider)) })
      } catch (error) {
        res.status(401).json({ code: (error as RefreshAccessTokenError).code })
      }
    }),
  )
  server.get('/csrf', portcullis.auth((req, res) => void res.json({ csrfToken: portcullis.getCsrfToken(req, res) })))
  server.post(
    '/unlink/:provider',
    express.urlencoded({ extended: false }),
    portcullis.auth(async (req, res) => {
      try {
        const account = await portcullis.unlinkAccount(String(req.params.provider), { providerAccountId: req.body.providerAccountId })
        res.json({ removed: `${account.provider}:${account.providerAccountId}` })
      } catch (error) {
        const { type, code } = error as AccountUnlinkError
        res.status(409).json({ type, code: code ?? null })
      }
    }),
  )
  app.mount(server)
  return portcullis
}

async function unlink(browser: Browser, providerId: string, fields: Record<string, string> = {}) {
  const { csrfToken } = (await (await browser.request(`${app.url}/csrf`)).json()) as { csrfToken: string }
  const response = await browser.request(`${app.url}/unlink/${providerId}`, { body: new URLSearchParams({ csrfToken, ...fields }) })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

/** What the app's `getAccessToken` route answers `browser` for `providerId`. */
async function tokenAnswer(browser: Browser, providerId: string): Promise<{ status: number; body: unknown }> {
  const response = await browser.request(`${app.url}/token/${providerId}`)
  return { status: response.status, body: await response.json() }
}

const GOT_TOKEN = { status: 200, body: { token: expect.any(String) } }
const NO_ACCOUNT = { status: 401, body: { code: 'no_account' } }

/** Signs in with corp, then, still signed in, with partner: one user, two accounts. */
async function userWithTwoAccounts(): Promise<Browser> {
  const browser = new Browser()
  expect((await signInWith(browser, app.url, 'corp', 'alice')).status).toBe(302)
  // The IdP remembers alice, so this is her account at the second provider: linked to the signed-in user.
  expect((await signInWith(browser, app.url, 'partner', 'alice')).status).toBe(302)
  return browser
}


for (const kind of ['sqlite', 'postgres'] as const) {
  await describeWithDatabase(kind, `linking and unlinking accounts on ${kind}`, (server) => {
    const db = migratedDatabase(server)
    beforeEach(() => {
      mount(db)
    })

    const accounts = () => db.knex('Account').select('provider', 'providerAccountId').orderBy('provider')

    it('links a second provider to the signed-in user, then unlinks it; the user still signs in with the first', async () => {
      const browser = await userWithTwoAccounts()
      const users = await db.knex('User').select('id')
      expect(users).toHaveLength(1)
      expect(await accounts()).toEqual([
        { provider: 'corp', providerAccountId: 'alice' },
        { provider: 'partner', providerAccountId: 'alice' },
      ])

      expect(await unlink(browser, 'partner')).toEqual({ status: 200, body: { removed: 'partner:alice' } })
      expect(await accounts()).toEqual([{ provider: 'corp', providerAccountId: 'alice' }])
      const again = new Browser()
      expect((await signInWith(again, app.url, 'corp', 'alice')).status).toBe(302)
      expect((await sessionOf(again, app.url))?.user?.id).toBe(users[0].id)
    })

    it('with JWT sessions, takes the unlinked provider\'s tokens out of the session cookie: getAccessToken no longer has them', async () => {
      mount(db, { session: { strategy: 'jwt' } })
      const browser = await userWithTwoAccounts()
      expect(await tokenAnswer(browser, 'partner')).toEqual(GOT_TOKEN)
      expect(await unlink(browser, 'partner')).toEqual({ status: 200, body: { removed: 'partner:alice' } })
      expect(await tokenAnswer(browser, 'partner')).toEqual(NO_ACCOUNT)
      // The other provider's tokens stay.
      expect(await tokenAnswer(browser, 'corp')).toEqual(GOT_TOKEN)
    })

    it("with JWT sessions, the user's other browsers stop getting the unlinked provider's tokens too", async () => {
      mount(db, { session: { strategy: 'jwt' } })
      const laptop = await userWithTwoAccounts()
      const phone = await userWithTwoAccounts()
      expect(await tokenAnswer(phone, 'partner')).toEqual(GOT_TOKEN)
      expect(await unlink(laptop, 'partner')).toEqual({ status: 200, body: { removed: 'partner:alice' } })
      // The phone's cookie still holds partner's tokens; the account they belong to is gone.
      expect(await tokenAnswer(phone, 'partner')).toEqual(NO_ACCOUNT)
      expect(await tokenAnswer(phone, 'corp')).toEqual(GOT_TOKEN)
    })

    it('refuses to unlink the last way to sign in, and keeps it', async () => {
      const browser = await userWithTwoAccounts()
      await unlink(browser, 'partner')
      expect(await unlink(browser, 'corp')).toEqual({ status: 409, body: { type: 'AccountUnlinkError', code: 'last_sign_in_method' } })
      expect(await accounts()).toEqual([{ provider: 'corp', providerAccountId: 'alice' }])
    })

    it('counts no account at a provider that is no longer configured (it signs nobody in), in the adapter too', async () => {
      const browser = await userWithTwoAccounts()
      // The app retires partner; the user's account row there stays.
      mount(db, { providers: [provider('corp')] })
      expect(await unlink(browser, 'corp')).toEqual({ status: 409, body: { type: 'AccountUnlinkError', code: 'last_sign_in_method' } })
      const [{ id: userId }] = await db.knex('User').select('id')
      const corp = { provider: 'corp', providerAccountId: 'alice' }
      expect(await KnexAdapter(db.knex).unlinkAccount(corp, { unlessLastOf: userId, countedProviders: ['corp'] })).toBeNull()
      expect(await unlink(browser, 'partner')).toEqual({ status: 200, body: { removed: 'partner:alice' } })
      expect(await accounts()).toEqual([corp])
    })

    it('lets exactly one of two concurrent unlinks of the last two accounts through', async () => {
      const browser = await userWithTwoAccounts()
      const { csrfToken } = (await (await browser.request(`${app.url}/csrf`)).json()) as { csrfToken: string }
      const results = await Promise.all(
        ['corp', 'partner', 'corp', 'partner'].map(async (id) => (await browser.request(`${app.url}/unlink/${id}`, { body: new URLSearchParams({ csrfToken }) })).status),
      )
      expect(results.filter((status) => status === 200)).toHaveLength(1)
      expect(await accounts()).toHaveLength(1)
    })

    it('refuses without the CSRF token, when nobody is signed in, and for a provider the user has not linked', async () => {
      const browser = await userWithTwoAccounts()
      const forged = await browser.request(`${app.url}/unlink/partner`, { body: new URLSearchParams({}) })
      expect(forged.status).toBe(409)
      expect(await forged.json()).toEqual({ type: 'MissingCSRF', code: null })
      expect(await unlink(new Browser(), 'partner')).toEqual({ status: 409, body: { type: 'AccountUnlinkError', code: 'not_signed_in' } })
      expect(await unlink(browser, 'partner', { providerAccountId: 'someone-else' })).toEqual({ status: 409, body: { type: 'AccountUnlinkError', code: 'not_linked' } })
      expect(await accounts()).toHaveLength(2)
    })
  })
}

it('is an AccountUnlinkError with code unsupported_adapter without an adapter', async () => {
  const portcullis = Portcullis({ secret: SECRET, logger: silentLogger, providers: [provider('corp')] })
  const server = express()
  server.post('/unlink', portcullis.auth(async (_req, res) => {
    const error = await portcullis.unlinkAccount('corp', { skipCsrfCheck: true }).catch((caught: AccountUnlinkError) => caught)
    res.json({ type: (error as AccountUnlinkError).type, code: (error as AccountUnlinkError).code })
  }))
  app.mount(server)
  const response = await new Browser().request(`${app.url}/unlink`, { body: new URLSearchParams() })
  expect(await response.json()).toEqual({ type: 'AccountUnlinkError', code: 'unsupported_adapter' })
})
