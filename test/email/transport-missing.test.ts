/**
 * The Nodemailer provider on an app that has not installed nodemailer (an optional peer): the mail
 * fails with the command that fixes it, and the failed import is not kept, so installing the
 * package fixes the next mail without a restart.
 */
import { expect, it, jest } from '@jest/globals'

let installed = false
jest.unstable_mockModule('nodemailer', () => {
  if (!installed) throw new Error("Cannot find package 'nodemailer'")
  return { createTransport: () => ({ sendMail: async () => ({}) }) }
})
const { sendEmail } = await import('../../src/mail/transport.js')

it('names the package to install, keeps the import error as the cause, and tries the import again on the next mail', async () => {
  const route = { server: 'smtp://127.0.0.1:1', from: 'no-reply@example.com', key: {} }
  const message = { subject: 'Sign in', text: 'Sign in', html: '' }
  const error = (await sendEmail(route, 'ada@example.com', message).catch((caught: unknown) => caught)) as Error
  expect(error.message).toBe('The nodemailer provider needs the nodemailer package: npm install nodemailer')
  expect((error.cause as Error).message).toMatch(/Cannot find package 'nodemailer'/)
  installed = true
  await expect(sendEmail(route, 'ada@example.com', message)).resolves.toBeUndefined()
})
