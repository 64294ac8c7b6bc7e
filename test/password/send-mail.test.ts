/**
 * The Password provider's mails through the app's own `sendMail` (instead of an SMTP server): each
 * of the three kinds arrives with its fields (kind, to, the link, its expiry, the reset link only
 * where there is one) and rendered, saying what its link does; the links work; the link is sent
 * again only to an unverified password account; a `sendMail` that fails is logged, and the visitor's
 * answer does not change.
 */
import { expect, it } from '@jest/globals'
import { KnexAdapter } from 'portcullis/adapters/knex'
import type { PasswordMail } from 'portcullis/providers/password'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { recordingLogger } from '../support/logger.js'
import { redirectOf, sessionOf } from '../support/oauth-app.js'
import { useEmailRig } from '../email/email-app.js'
import { Browser, GOOD_PASSWORD, mountPasswordApp, post, signUp } from './password-app.js'
import { until } from '../support/time-limits.js'

const rig = useEmailRig()

await describeWithDatabase('sqlite', 'the Password provider with sendMail', (server) => {
  const db = migratedDatabase(server)
  const url = () => rig.app.url
  const host = () => new URL(url()).host

  /** The app, its mails collected as `sendMail` receives them. */
  function mount(sendMail?: (mail: PasswordMail) => Promise<void>) {
    const mails: PasswordMail[] = []
    const logger = recordingLogger()
    mountPasswordApp(rig.app, db.knex, rig.smtp, { logger }, { server: undefined, sendMail: sendMail ?? (async (mail) => void mails.push(mail)) })
    /** The next mail `sendMail` received (it is called after the response). */
    const next = async (): Promise<PasswordMail> => {
      await until('sendMail called', () => mails.length > 0)
      const mail = mails.shift()
      if (!mail) throw new Error('sendMail was not called')
      return mail
    }
    return { logger, next, mails }
  }

  it('hands sendMail the verification, address-taken and reset mails, each with its fields and rendered text, and sends nothing over SMTP', async () => {
    const { next } = mount()
    const before = Date.now()
    const browser = new Browser()
    expect((await signUp(browser, url(), 'ada@example.com')).status).toBe(302)
    const verify = await next()
    expect(verify).toMatchObject({ kind: 'verify-email', to: 'ada@example.com', subject: `Confirm your e-mail address for ${host()}` })
    expect(verify).not.toHaveProperty('resetUrl')
    expect(verify.url.startsWith(`${url()}/api/auth/verify-email?`)).toBe(true)
    expect(verify.expires!.getTime()).toBeGreaterThan(before)
    expect(verify.text).toContain(`Finish signing up to ${host()}`)
    expect(verify.text).toContain(verify.url)
    expect(verify.text).toContain('nothing happens without the link')
    expect(verify.html).toContain('>Confirm my address</a>')
    // The link works: the same browser is signed in.
    expect((await browser.request(verify.url)).status).toBe(302)
    expect((await sessionOf(browser, url()))?.user.email).toBe('ada@example.com')

    // Signing up again with the address: its owner is told, with a way to set a new password.
    expect((await signUp(new Browser(), url(), 'ada@example.com', 'another good password')).status).toBe(302)
    const taken = await next()
    expect(taken).toMatchObject({ kind: 'address-taken', to: 'ada@example.com', subject: `Someone tried to sign up to ${host()} with your address` })
    expect(taken.resetUrl!.startsWith(`${url()}/api/auth/reset-password?`)).toBe(true)
    expect(taken.text).toContain(`You already have an account on ${host()}`)
    expect(taken.text).toContain(`This link sets a new one (it works once, for one hour unless the site says otherwise): ${taken.resetUrl}`)
    expect(taken.html).toContain('>Sign in</a>')

    expect((await post(new Browser(), url(), 'forgot-password', { email: 'ada@example.com' })).status).toBe(302)
    const reset = await next()
    expect(reset).toMatchObject({ kind: 'reset-password', to: 'ada@example.com', subject: `Set a new password for ${host()}` })
    expect(reset).not.toHaveProperty('resetUrl')
    expect(reset.text).toContain('Setting a new password signs you out everywhere else.')
    expect(reset.text).toContain('your password stays as it is')
    expect(reset.html).toContain('>Choose a new password</a>')
    const phone = new Browser()
    const form = await phone.request(reset.url)
    expect((await phone.submitForm(form, { password: 'a brand new password' })).headers.get('location')).toBe(`${url()}/`)

    // SMTP was not used.
    await expect(rig.smtp.nextMessage(200)).rejects.toThrow('no e-mail arrived within 200 ms')
  })

  it('sends the verification link again only to an unverified password account, and answers every address alike', async () => {
    const { next, mails } = mount()
    expect((await signUp(new Browser(), url(), 'waiting@example.com')).status).toBe(302)
    expect((await next()).kind).toBe('verify-email')
    const verified = new Browser()
    expect((await signUp(verified, url(), 'verified@example.com')).status).toBe(302)
    expect((await verified.request((await next()).url)).status).toBe(302)
    // An address with no password (a magic-link or OAuth user), unverified.
    await KnexAdapter(db.knex).createUser({ email: 'nopassword@example.com', emailVerified: null })

    const answers = []
    for (const email of ['verified@example.com', 'nopassword@example.com', 'nobody@example.com', 'waiting@example.com']) {
      const response = await post(new Browser(), url(), 'verify-email/resend', { email })
      answers.push([response.status, response.headers.get('location')])
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1)
    const again = await next()
    expect(again).toMatchObject({ kind: 'verify-email', to: 'waiting@example.com' })
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(mails).toEqual([])
    // The new link verifies the address.
    expect((await new Browser().request(again.url)).status).toBe(200)
  })

  it('logs a sendMail that fails, without the link, and answers the visitor as when it works', async () => {
    const { logger } = mount(async () => {
      throw new Error('mail API down')
    })
    const response = await signUp(new Browser(), url(), 'grace@example.com', GOOD_PASSWORD)
    expect(redirectOf(response).url.pathname).toBe('/api/auth/verify-request')
    await until('PasswordMailError logged', () => logger.codes('error').includes('PasswordMailError'))
    const logged = logger.lines.find((line) => line.code === 'PasswordMailError')
    expect(logged).toBeDefined()
    expect(JSON.stringify(logged)).toContain('mail API down')
    expect(JSON.stringify(logged)).toContain('verify-email')
    expect(JSON.stringify(logged)).not.toMatch(/token=|verify-email\?|grace@example.com/)
  })
})
