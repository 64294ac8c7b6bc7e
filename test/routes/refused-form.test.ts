/**
 * The sign-in page after a refused sign-in, with a password form and an e-mail link form on one
 * page (issue 62, item 8): the two address fields say what they do, the address typed comes back in
 * the form that failed (never the password, never in the URL), the message stands at that form, and
 * the "confirm your address first" form is filled in with the address. Real parts: an SMTP server,
 * SQLite through the Knex adapter.
 */
import { expect, it } from '@jest/globals'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Nodemailer from 'portcullis/providers/nodemailer'
import Password from 'portcullis/providers/password'
import { authApp } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { SECRET } from '../support/flow.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, FAST_HASHING, FROM, GOOD_PASSWORD, nextLink, post, signIn, signUp } from '../password/password-app.js'

const rig = useEmailRig()
const FORM_COOKIE = 'authjs.signin-form'

void describeWithDatabase('sqlite', 'the sign-in page after a refused sign-in', (server) => {
  const db = migratedDatabase(server)
  const url = () => rig.app.url
  const mount = () => {
    const auth = authApp({
      secret: SECRET,
      adapter: KnexAdapter(db.knex),
      providers: [Nodemailer({ server: rig.smtp.url, from: FROM }), Password({ server: rig.smtp.url, from: FROM, hashing: FAST_HASHING, requireEmailVerification: true })],
    })
    rig.app.mount(auth.app)
  }
  const page = async (browser: Browser, response: Response) => (await browser.request(response.headers.get('location')!)).text()
  /** The `<input>` named `name` inside the form that posts to `action`. */
  const input = (html: string, action: string, name: string) => {
    const form = new RegExp(`<form method="post" action="${action}">[\\s\\S]*?</form>`).exec(html)?.[0] ?? ''
    return new RegExp(`<input[^>]*name="${name}"[^>]*>`).exec(form)?.[0]
  }

  it('labels the e-mail link field by what it does, apart from the password form\'s address', async () => {
    mount()
    const html = await (await new Browser().request(`${url()}/api/auth/signin`)).text()
    expect(html).toContain('>E-mail address for a sign-in link</label>')
    expect(html.match(/<label for="[^"]+">E-mail<\/label>/g)).toHaveLength(1)
    // The link field's label is said once: two fields asking for an address never share one name.
    expect(html.match(/<label[^>]*>E-mail address for a sign-in link<\/label>/g)).toHaveLength(1)
  })

  it('keeps the address of a refused password sign-in in its form, says which form failed, and forgets it after one page', async () => {
    mount()
    const browser = new Browser()
    const refused = await signIn(browser, url(), 'Grace@Example.com', 'not the password')
    expect(refused.status).toBe(302)
    // Not in the URL (logs, history): in a sealed cookie that does not show the address either.
    expect(refused.headers.get('location')).not.toContain('Grace')
    const sealed = browser.cookie(url(), FORM_COOKIE)
    expect(sealed).toBeDefined()
    expect(sealed).not.toContain('Grace')
    expect(Buffer.from(sealed!.split('.')[1] ?? '', 'base64url').toString()).not.toContain('Grace')

    const html = await page(browser, refused)
    expect(input(html, '/api/auth/callback/password', 'email')).toContain('value="Grace@Example.com"')
    expect(input(html, '/api/auth/callback/password', 'password')).not.toContain('value=')
    expect(input(html, '/api/auth/signin/nodemailer', 'email')).not.toContain('value=')
    expect(html).not.toContain('not the password')
    // The message stands right above the form that failed, and names it.
    expect(html).toMatch(/<div class="alert" role="alert">Sign in with Password failed\. Check the details you entered are correct\.<\/div><form method="post" action="\/api\/auth\/callback\/password">/)
    expect(html.match(/class="alert"/g)).toHaveLength(1)

    // Read once: the cookie is cleared, and the next page is blank.
    expect(browser.cookie(url(), FORM_COOKIE)).toBeUndefined()
    const again = await (await browser.request(refused.headers.get('location')!)).text()
    expect(input(again, '/api/auth/callback/password', 'email')).not.toContain('value=')
    // Without the form, the message is the page's, at the top, as before.
    expect(again).toMatch(/<h1>Sign in<\/h1>\n<div class="alert" role="alert">Sign in failed\. Check the details you provided are correct\.<\/div>/)
  })

  it('keeps a refused address of the e-mail link form in that form', async () => {
    mount()
    const browser = new Browser()
    const refused = await post(browser, url(), 'signin/nodemailer', { email: 'not an address' })
    expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('EmailSignInError')
    const html = await page(browser, refused)
    expect(input(html, '/api/auth/signin/nodemailer', 'email')).toContain('value="not an address"')
    expect(input(html, '/api/auth/callback/password', 'email')).not.toContain('value=')
    expect(html).toMatch(/<div class="alert" role="alert">The sign-in link could not be sent\. Check the address and try again\.<\/div><form method="post" action="\/api\/auth\/signin\/nodemailer">/)
  })

  it('fills the "send the link again" field of an unverified address with the address typed', async () => {
    mount()
    await signUp(new Browser(), url(), 'lin@example.com')
    await nextLink(rig.smtp, 'lin@example.com')
    const browser = new Browser()
    const refused = await signIn(browser, url(), 'lin@example.com', GOOD_PASSWORD)
    expect(new URL(refused.headers.get('location')!).searchParams.get('code')).toBe('email_not_verified')
    const html = await page(browser, refused)
    expect(html).toContain('Confirm your e-mail address first')
    expect(input(html, '/api/auth/verify-email/resend', 'email')).toContain('value="lin@example.com"')
    expect(input(html, '/api/auth/callback/password', 'email')).toContain('value="lin@example.com"')
  })

  it('ignores a form cookie it did not seal, and one brought to a page that shows no refusal', async () => {
    mount()
    const forged = new Browser()
    forged.setCookie(url(), FORM_COOKIE, 'eyJhbGciOiJub25lIn0.eyJwaWQiOiJwYXNzd29yZCIsImYiOnsiZW1haWwiOiJ4QGV2aWwuZXhhbXBsZSJ9fQ.')
    const html = await (await forged.request(`${url()}/api/auth/signin?error=CredentialsSignin&code=credentials`)).text()
    expect(html).not.toContain('evil.example')
    expect(forged.cookie(url(), FORM_COOKIE)).toBeUndefined()

    const browser = new Browser()
    await signIn(browser, url(), 'grace@example.com', 'not the password')
    const plain = await (await browser.request(`${url()}/api/auth/signin`)).text()
    expect(plain).not.toContain('grace@example.com')
    expect(browser.cookie(url(), FORM_COOKIE)).toBeUndefined()
  })
})
