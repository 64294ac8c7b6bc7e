/**
 * The `logger` option takes the app's logger as it is (docs/configuration.md#logging): pino as
 * `(fields, message)`, winston and `{ log }` as one record, `console` and Auth.js's form as
 * `(code, ...message)`, each called as a method of its logger. A route's line carries the request's
 * fields (id, method, path, provider), cut and escaped when the client chose them.
 */
import { Writable } from 'node:stream'
import { afterAll, describe, expect, it, jest } from '@jest/globals'
import pino from 'pino'
import winston from 'winston'
import type { LoggerOption, LogRecord } from 'portcullis'
import { createLogger, logFields } from '../../src/logger.js'
import { closeAll, getCsrf, startApp, type SecurityApp } from '../support/security-app.js'

afterAll(closeAll)

/** A stream that keeps each JSON line written to it. */
function jsonLines(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  return { stream, lines }
}

/** An app whose authorize throws: its callback logs one CallbackRouteError line. */
async function failingApp(logger: LoggerOption): Promise<SecurityApp> {
  return startApp({
    config: { logger },
    authorize: jest.fn(async () => {
      throw new Error('the user directory is down')
    }),
  })
}

async function failSignIn(app: SecurityApp, requestId = 'req-7'): Promise<void> {
  const csrf = await getCsrf(app)
  await app.http
    .post('/api/auth/callback/credentials')
    .set('cookie', csrf.cookie)
    .set('x-request-id', requestId)
    .type('form')
    .send({ csrfToken: csrf.token, username: 'ada', password: 'whatever-password' })
}

const requestFields = { requestId: 'req-7', method: 'POST', route: '/api/auth/callback/credentials', provider: 'credentials' }

describe('the logger forms', () => {
  it('calls pino as pino takes it: the code and fields first, then the message', async () => {
    const { stream, lines } = jsonLines()
    const app = await failingApp(pino({ level: 'debug' }, stream))
    await failSignIn(app)
    const line = lines.find((entry) => entry['code'] === 'CallbackRouteError')
    expect(line).toMatchObject({ level: 50, ...requestFields })
    expect(line?.['msg']).toMatch(/authorize\(\) of the "credentials" provider threw: Error: the user directory is down/)
  })

  it('calls winston with one record: level, code, message and fields', async () => {
    const { stream, lines } = jsonLines()
    const app = await failingApp(winston.createLogger({ level: 'debug', format: winston.format.json(), transports: [new winston.transports.Stream({ stream })] }))
    await failSignIn(app)
    const line = lines.find((entry) => entry['code'] === 'CallbackRouteError')
    expect(line).toMatchObject({ level: 'error', ...requestFields })
    expect(line?.['message']).toMatch(/the user directory is down/)
  })

  it('gives { log } one LogRecord a line', async () => {
    const records: LogRecord[] = []
    const app = await failingApp({ log: (record) => void records.push(record) })
    await failSignIn(app)
    expect(records.find((record) => record.code === 'CallbackRouteError')).toEqual({
      level: 'error',
      code: 'CallbackRouteError',
      message: expect.stringMatching(/the user directory is down/),
      ...requestFields,
    })
  })

  it('calls console as (code, ...message)', async () => {
    const error = jest.spyOn(console, 'error').mockImplementation(() => {})
    // The UntrustedHost warning of a Host-derived origin goes to console.warn.
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const app = await failingApp(console)
      await failSignIn(app)
      expect(error).toHaveBeenCalledWith('CallbackRouteError', expect.stringMatching(/the user directory is down/))
    } finally {
      error.mockRestore()
      warn.mockRestore()
    }
  })

  it("keeps Auth.js's form, calling each level as a method of its logger", async () => {
    class AppLogger {
      readonly lines: unknown[][] = []
      error(code: string, ...message: unknown[]): void {
        this.lines.push([code, ...message])
      }
    }
    const logger = new AppLogger()
    const app = await failingApp(logger)
    await failSignIn(app)
    expect(logger.lines).toContainEqual(['CallbackRouteError', expect.stringMatching(/the user directory is down/)])
  })
})

describe('the fields of a line', () => {
  it('cuts and escapes the request id a client chose', async () => {
    const records: LogRecord[] = []
    const app = await failingApp({ log: (record) => void records.push(record) })
    await failSignIn(app, `x\t${'y'.repeat(400)}`)
    const { requestId } = records.find((record) => record.code === 'CallbackRouteError')!
    expect(requestId).toMatch(/^x\\u0009y{298}… \(402 characters\)$/)
  })

  it('gives the structured forms the fields a caller adds, and Auth.js’s form the arguments alone', () => {
    const records: LogRecord[] = []
    createLogger({ log: (record) => void records.push(record) }, false).warn('OrphanUser', 'A user stays.', logFields({ userId: 'u1' }))
    expect(records).toEqual([{ level: 'warn', code: 'OrphanUser', message: 'A user stays.', userId: 'u1' }])
    const warn = jest.fn()
    createLogger({ warn }, false).warn('OrphanUser', 'A user stays.', logFields({ userId: 'u1' }))
    expect(warn).toHaveBeenCalledWith('OrphanUser', 'A user stays.')
  })

  it('has none outside a request', () => {
    const records: LogRecord[] = []
    createLogger({ log: (record) => void records.push(record) }, false).error('PruneError', 'Pruning failed.')
    expect(records).toEqual([{ level: 'error', code: 'PruneError', message: 'Pruning failed.' }])
  })
})
