/**
 * Single sign-on in a real browser (Chromium, playwright-core): on the built-in sign-in page a person
 * types their work address, is sent to their organization's identity provider (home-realm discovery),
 * signs in there and comes back signed in and a member of the organization. The IdP is the example's
 * dev OpenID provider on 127.0.0.1, another site than the app (http://localhost). Screenshots go to
 * /tmp/sso-*.png for a person to look at.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals'
import knex, { type Knex } from 'knex'
import type { DevIdp } from '../../examples/express/dev-idp.js'
import { KnexAdapter, migrationSource } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import SSO from 'portcullis/providers/sso'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { useBrowserRig } from '../support/browser-rig.js'
import { describeWithChromium } from '../support/chromium.js'
import { startQuietDevIdp } from '../support/dev-idp.js'
import { startDevSamlIdp, type DevSamlIdp } from '../../examples/express/dev-saml-idp.js'

const SECRET = 'sso-browser-suite-secret-0123456789abcdef'
export const SCREENSHOTS = { signIn: '/tmp/sso-signin.png', page: '/tmp/sso-page.png', refused: '/tmp/sso-refused.png', samlLogin: '/tmp/sso-saml-idp.png', samlContinue: '/tmp/sso-saml-continue.png' }

describeWithChromium('single sign-on in Chromium: the work address on the sign-in page leads to the organization\'s IdP and back', () => {
  const rig = useBrowserRig()
  let db: Knex
  let app: AuthApp
  let adapter: ReturnType<typeof KnexAdapter>
  let idp: DevIdp
  let samlIdp: DevSamlIdp
  let organizationId: string
  let samlOrganizationId: string
  beforeAll(async () => {
    idp = await startQuietDevIdp({ host: '127.0.0.1', clientRedirectUri: `${rig.origin}/api/auth/callback/sso` })
    samlIdp = await startDevSamlIdp({ host: '127.0.0.1', appOrigin: rig.origin })
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    await db.migrate.latest({ migrationSource: migrationSource() })
    adapter = KnexAdapter(db)
    const owner = await adapter.createUser({ email: 'owner@example.org', emailVerified: null, name: 'Owner', image: null })
    app = authApp({
      secret: SECRET,
      adapter,
      session: { strategy: 'database' },
      organizations: true,
      providers: [
        SSO({ domainVerification: 'dns-or-admin', dangerouslyAllowInternalUrls: true }),
        Credentials({ authorize: async ({ email, password }) => (password === 'pw' && typeof email === 'string' ? adapter.getUserByEmail(email) : null) }),
      ],
    })
    rig.serve(app.app)
    // The organization, its domain (the dev IdP's addresses are <login>@example.test) marked verified, its connection.
    const { organization } = (await adapter.createOrganization!({ name: 'Example Test', slug: 'example-test', logo: null, metadata: null }, { userId: owner.id, roles: ['owner'] }))!
    organizationId = organization.id
    const domain = await adapter.createSsoDomain!({ organizationId, domain: 'example.test', token: 'a'.repeat(32) })
    if (domain === 'taken') throw new Error('the domain is taken')
    await app.markSsoDomainVerified(domain.id)
    const { sealClientSecret } = await import('../../src/features/sso/connection.js')
    await adapter.createSsoConnection!({
      organizationId,
      type: 'oidc',
      name: 'Example IdP',
      enabled: true,
      ssoOnly: false,
      defaultRole: 'member',
      settings: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: sealClientSecret({ secrets: [SECRET] } as never, idp.clientSecret), scopes: ['profile', 'email'] },
    })
  })
  beforeAll(async () => {
    // A second organization, whose people sign in through the example's dev SAML IdP (another site).
    const owner = await adapter.createUser({ email: 'owner@analytical-engines.test', emailVerified: null, name: 'Owner', image: null })
    const { organization } = (await adapter.createOrganization!({ name: 'Analytical Engines', slug: 'analytical-engines', logo: null, metadata: null }, { userId: owner.id, roles: ['owner'] }))!
    samlOrganizationId = organization.id
    const domain = await adapter.createSsoDomain!({ organizationId: samlOrganizationId, domain: samlIdp.domain, token: 'b'.repeat(32) })
    if (domain === 'taken') throw new Error('the domain is taken')
    await app.markSsoDomainVerified(domain.id)
    await adapter.createSsoConnection!({
      organizationId: samlOrganizationId,
      type: 'saml',
      name: 'Dev SAML IdP',
      enabled: true,
      ssoOnly: false,
      defaultRole: 'member',
      settings: { idpEntityId: samlIdp.entityId, ssoUrl: samlIdp.ssoUrl, certificates: [samlIdp.certificate], metadataUrl: null, allowIdpInitiated: false },
    })
  })
  afterAll(async () => {
    await idp?.close()
    await samlIdp?.close()
    await db?.destroy()
  })

  it('signs in from the work address on the sign-in page, through the IdP, as a new member', async () => {
    const page = await (await rig.newContext({ viewport: { width: 900, height: 800 } })).newPage()
    await page.goto(`${rig.origin}/api/auth/signin?callbackUrl=%2Fme`)
    const address = page.getByLabel('Work e-mail address')
    await expect(address.isVisible()).resolves.toBe(true)
    await address.fill('grace@example.test')
    await page.screenshot({ path: SCREENSHOTS.signIn, fullPage: true })
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click()

    // The organization's IdP, on the other site, with the address as its hint.
    await page.waitForURL((url) => url.origin === idp.issuer && url.pathname.startsWith('/interaction/'))
    await page.fill('input[name="login"]', 'grace')
    await page.fill('input[name="password"]', 'any password')
    await page.getByRole('button', { name: 'Sign-in' }).click()
    await page.waitForURL(`${rig.origin}/me`)
    const session = JSON.parse(await page.locator('body').innerText()) as { user: { email: string } }
    expect(session.user.email).toBe('grace@example.test')
    const grace = (await adapter.getUserByEmail('grace@example.test'))!
    expect(await adapter.getMember!(organizationId, grace.id)).toMatchObject({ roles: ['member'] })
  })

  it('an address no organization verified comes back to the sign-in page with why, the address kept out of the URL', async () => {
    const page = await (await rig.newContext({ viewport: { width: 900, height: 800 } })).newPage()
    await page.goto(`${rig.origin}/api/auth/signin`)
    await page.getByLabel('Work e-mail address').fill('someone@elsewhere.example')
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click()
    await page.waitForURL((url) => url.pathname === '/api/auth/signin' && url.searchParams.get('error') === 'SSO')
    expect(page.url()).not.toContain('elsewhere')
    await expect(page.getByRole('alert').innerText()).resolves.toContain('No organization signs in this address with single sign-on')
    await page.screenshot({ path: SCREENSHOTS.refused, fullPage: true })
  })

  it("the organization's SSO page shows its domain and connection, and a disable button that works", async () => {
    const context = await rig.newContext({ viewport: { width: 900, height: 1400 } })
    const { csrfToken } = (await (await context.request.get(`${rig.origin}/api/auth/csrf`)).json()) as { csrfToken: string }
    expect((await context.request.post(`${rig.origin}/api/auth/callback/credentials`, { form: { csrfToken, email: 'owner@example.org', password: 'pw' }, maxRedirects: 0 })).status()).toBe(302)
    const page = await context.newPage()
    await page.goto(`${rig.origin}/api/auth/sso?organizationId=${organizationId}`)
    await expect(page.locator('h1').innerText()).resolves.toBe('Example Test: single sign-on')
    await expect(page.locator('[data-domains]').innerText()).resolves.toContain("example.test verified (the app's word)")
    await expect(page.locator('[data-redirect-uri]').innerText()).resolves.toBe(`${rig.origin}/api/auth/callback/sso`)
    await page.screenshot({ path: SCREENSHOTS.page, fullPage: true })
    await page.locator('[data-connections]').getByRole('button', { name: 'Disable' }).click()
    await page.waitForURL((url) => url.pathname === '/api/auth/sso')
    await expect(page.locator('[data-connection-state]').innerText()).resolves.toContain('disabled')
    await page.locator('[data-connections]').getByRole('button', { name: 'Enable' }).click()
    await page.waitForURL((url) => url.pathname === '/api/auth/sso')
    await expect(page.locator('[data-connection-state]').innerText()).resolves.toContain('enabled')
  })

  it("signs in through a SAML IdP on another site: its cross-site POST goes through the same-site continue page", async () => {
    const page = await (await rig.newContext({ viewport: { width: 900, height: 800 } })).newPage()
    const scripts: string[] = []
    page.on('request', (request) => void (request.resourceType() === 'script' && scripts.push(new URL(request.url()).pathname)))
    await page.goto(`${rig.origin}/api/auth/signin?callbackUrl=%2Fme`)
    await page.getByLabel('Work e-mail address').fill('babbage@analytical-engines.test')
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click()
    await page.waitForURL((url) => url.origin === new URL(samlIdp.ssoUrl).origin && url.pathname === '/sso')
    await page.getByLabel('E-mail address').fill('babbage@analytical-engines.test')
    await page.screenshot({ path: SCREENSHOTS.samlLogin, fullPage: true })
    await page.getByRole('button', { name: 'Sign in' }).click()
    // The IdP's page posts to the ACS (cross-site: the Lax sign-in cookie stays behind); the ACS's page
    // posts it again from this site with its one script, and the sign-in ends at the callback URL.
    await page.waitForURL(`${rig.origin}/me`)
    expect(scripts).toContain('/api/auth/saml-continue.js')
    const session = JSON.parse(await page.locator('body').innerText()) as { user: { email: string; name: string } }
    expect(session.user).toMatchObject({ email: 'babbage@analytical-engines.test', name: 'Babbage' })
    const babbage = (await adapter.getUserByEmail('babbage@analytical-engines.test'))!
    expect(await adapter.getMember!(samlOrganizationId, babbage.id)).toMatchObject({ roles: ['member'] })
  })

  it('without scripts, the continue page is a button that finishes the SAML sign-in', async () => {
    const context = await rig.newContext({ viewport: { width: 900, height: 700 }, javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(`${rig.origin}/api/auth/signin?callbackUrl=%2Fme`)
    await page.getByLabel('Work e-mail address').fill('lovelace@analytical-engines.test')
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click()
    await page.getByLabel('E-mail address').fill('lovelace@analytical-engines.test')
    await page.getByRole('button', { name: 'Sign in' }).click()
    // The IdP's own page, without its script, shows its Continue button; then this site's.
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForURL((url) => url.pathname.startsWith('/api/auth/saml-acs/'))
    await expect(page.locator('h1').innerText()).resolves.toBe('Signing you in')
    await page.screenshot({ path: SCREENSHOTS.samlContinue, fullPage: true })
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForURL(`${rig.origin}/me`)
    expect((JSON.parse(await page.locator('body').innerText()) as { user: { email: string } }).user.email).toBe('lovelace@analytical-engines.test')
  })
})
