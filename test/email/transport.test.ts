/**
 * How the Nodemailer provider's mail leaves: the development console transport (what it prints),
 * one nodemailer transporter per provider (made once, reused by every later mail), and the
 * recipient handed to nodemailer as an address object, never a string it would parse as a list.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { renderVerificationEmail } from '../../src/mail/message.js'
import { sendEmail, sendVerificationEmail } from '../../src/mail/transport.js'
import type { SendVerificationRequestParams } from 'portcullis/providers/email'

const url = 'https://example.com/api/auth/callback/nodemailer?callbackUrl=https%3A%2F%2Fexample.com%2F&token=abc&email=ada%40example.com'
const expires = new Date(Date.UTC(2026, 10, 26, 12, 0, 0))

/** What sendVerificationEmail reads of its params. */
const paramsFor = (provider: object) => ({ identifier: 'ada@example.com', url, expires, provider, theme: {} }) as unknown as SendVerificationRequestParams

afterEach(() => {
  jest.restoreAllMocks()
})

describe("server: 'console'", () => {
  it('prints the recipient, the subject, the expiry and the text part (indented), and sends nothing', async () => {
    const printed: unknown[][] = []
    jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args))
    await sendVerificationEmail(paramsFor({ server: 'console', from: 'no-reply@localhost' }))
    const { text } = renderVerificationEmail({ url, theme: {} })
    const indented = text.split('\n').map((line) => `  ${line}`).join('\n')
    expect(printed).toEqual([
      [`[portcullis] Development e-mail transport (server: 'console'): not sent. To: "ada@example.com", subject "Sign in to example.com", expires 2026-11-26T12:00:00.000Z\n${indented}`],
    ])
  })

  it('leaves the expiry out when the mail has none', async () => {
    const printed: unknown[][] = []
    jest.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args))
    await sendEmail({ server: 'console', from: undefined, key: {} }, 'ada@example.com', { subject: 'Hello', text: 'One line', html: '' })
    expect(printed).toEqual([[`[portcullis] Development e-mail transport (server: 'console'): not sent. To: "ada@example.com", subject "Hello"\n  One line`]])
  })
})

describe('through nodemailer', () => {
  /** A nodemailer transport plugin that keeps what it is given, and which transporter (Mailer) sent it. */
  function capturingTransport() {
    const sent: { data: Record<string, unknown>; mailer: unknown }[] = []
    const transport = {
      name: 'capture',
      version: '1',
      mailer: undefined as unknown,
      send(mail: { data: Record<string, unknown> }, callback: (error: Error | null, info: unknown) => void) {
        sent.push({ data: mail.data, mailer: this.mailer })
        callback(null, { envelope: {}, messageId: '<test@localhost>' })
      },
    }
    return { transport, sent }
  }

  it('makes one transporter per provider and reuses it for every later mail', async () => {
    const { transport, sent } = capturingTransport()
    const provider = { server: transport, from: 'Example <no-reply@example.com>' }
    await sendVerificationEmail(paramsFor(provider))
    await sendVerificationEmail(paramsFor(provider))
    expect(sent).toHaveLength(2)
    expect(sent[0]!.mailer).toBeDefined()
    expect(sent[1]!.mailer).toBe(sent[0]!.mailer)
    // Another provider with the same server gets a transporter of its own.
    await sendVerificationEmail(paramsFor({ ...provider }))
    expect(sent[2]!.mailer).not.toBe(sent[0]!.mailer)
  })

  it('hands nodemailer the recipient as an address object with no name, the sender, and both parts', async () => {
    const { transport, sent } = capturingTransport()
    await sendVerificationEmail(paramsFor({ server: transport, from: 'Example <no-reply@example.com>' }))
    const mail = renderVerificationEmail({ url, theme: {} })
    expect(sent[0]!.data).toMatchObject({ to: { name: '', address: 'ada@example.com' }, from: 'Example <no-reply@example.com>', subject: mail.subject, text: mail.text, html: mail.html })
  })
})
