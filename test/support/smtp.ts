/**
 * A real SMTP server in the test process (`smtp-server` on 127.0.0.1, an ephemeral port) that keeps
 * every message it accepts: its SMTP envelope (MAIL FROM, RCPT TO) and the message parsed with
 * `mailparser`. Point the nodemailer provider at `server.url`.
 *
 * @example
 * ```ts
 * const smtp = await startSmtpServer()
 * Nodemailer({ server: smtp.url, from: 'Test <auth@example.test>' })
 * const mail = await smtp.nextMessage()
 * mail.parsed.text // contains the link
 * await smtp.close()
 * ```
 */
import type { AddressInfo } from 'node:net'
import { simpleParser, type ParsedMail } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { STEP_LIMIT_MS } from './time-limits.js'

/** One accepted message. */
export interface CapturedMail {
  /** MAIL FROM. */
  from: string
  /** Every RCPT TO, in order. */
  to: string[]
  /** The message as received. */
  raw: string
  parsed: ParsedMail
}

/** The running server. */
export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`, with TLS off (the in-process server has no certificate). */
  readonly url: string
  readonly port: number
  /** Every message accepted so far. */
  readonly messages: readonly CapturedMail[]
  /**
   * The next message (one already received and not yet taken, or the next to arrive); rejects when none
   * arrives within `timeoutMs` (STEP_LIMIT_MS: a bound on a hang; a shorter one only to check that none comes).
   */
  nextMessage(timeoutMs?: number): Promise<CapturedMail>
  /** Marks every message received so far as taken: `nextMessage` waits for a new one. */
  skipReceived(): void
  /** From now on, answer DATA with `550 <reason>` (true) or accept again (false). */
  rejectMessages(reject: boolean): void
  close(): Promise<void>
}

/** Starts the server. */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const messages: CapturedMail[] = []
  let taken = 0
  const waiting: ((mail: CapturedMail) => void)[] = []
  let rejecting = false

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // No reverse DNS lookup of 127.0.0.1 per connection (~100 ms here).
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (rejecting) {
          const error = Object.assign(new Error('Mailbox unavailable (test server rejecting)'), { responseCode: 550 })
          return callback(error)
        }
        const raw = Buffer.concat(chunks).toString('utf8')
        simpleParser(raw).then(
          (parsed) => {
            const mail: CapturedMail = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((recipient) => recipient.address),
              raw,
              parsed,
            }
            messages.push(mail)
            const waiter = waiting.shift()
            if (waiter) {
              taken += 1
              waiter(mail)
            }
            callback()
          },
          (error: Error) => callback(error),
        )
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port

  return {
    url: `smtp://127.0.0.1:${port}?ignoreTLS=true`,
    port,
    messages,
    nextMessage(timeoutMs = STEP_LIMIT_MS) {
      if (taken < messages.length) return Promise.resolve(messages[taken++]!)
      return new Promise((resolve, reject) => {
        const waiter = (mail: CapturedMail) => {
          clearTimeout(timer)
          resolve(mail)
        }
        // A waiter that gave up leaves the queue, or it would take the next message from a later wait.
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1)
          reject(new Error(`no e-mail arrived within ${timeoutMs} ms`))
        }, timeoutMs)
        waiting.push(waiter)
      })
    },
    skipReceived() {
      taken = messages.length
    },
    rejectMessages(reject) {
      rejecting = reject
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** The sign-in link of an e-mail: the one URL of its text part. */
export function linkOf(mail: CapturedMail): string {
  const links = (mail.parsed.text ?? '').match(/https?:\/\/\S+/g) ?? []
  if (links.length !== 1) throw new Error(`expected one link in the e-mail's text, found ${links.length}`)
  return links[0]!
}
