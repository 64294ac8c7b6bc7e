/**
 * GET /error: the status the spec gives each code, and nothing in the log. The code is the
 * visitor's choice (`/api/auth/error?error=Configuration` is a link anyone can open), so it must not
 * page an operator: the failure that sent a user there was logged where it happened.
 */
import request from 'supertest'
import { describe, expect, it, jest } from '@jest/globals'
import { createTestApp } from '../support/flow.js'
import { recordingLogger, type RecordingLogger } from '../support/logger.js'

function logged(logger: RecordingLogger): unknown[][] {
  return logger.lines.map((line) => [line.code, ...line.message])
}

describe('GET /error', () => {
  it.each([
    ['Configuration', 500],
    ['AccessDenied', 403],
    ['Verification', 403],
    ['AdapterError', 503],
    ['CredentialsSignin', 200],
    ['Whatever', 200],
    ['', 200],
  ])('answers ?error=%s with %i and logs nothing, at any level, however often it is asked', async (code, status) => {
    const logger = recordingLogger()
    // trustHost: the origin comes from Host without the once-per-instance development warning.
    const { app } = createTestApp({ logger, debug: true, trustHost: true })
    for (let i = 0; i < 3; i++) {
      const page = await request(app).get(`/api/auth/error?error=${encodeURIComponent(code)}`)
      expect(page.status).toBe(status)
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    }
    expect(await request(app).head('/api/auth/error?error=Configuration')).toMatchObject({ status: 500 })
    expect(logged(logger)).toEqual([])
  })

  it('writes nothing to the console with the built-in logger either', async () => {
    const spies = (['error', 'warn', 'log', 'debug'] as const).map((method) => jest.spyOn(console, method).mockImplementation(() => {}))
    try {
      const { app } = createTestApp({ trustHost: true })
      await request(app).get('/api/auth/error?error=Configuration').expect(500)
      expect(spies.flatMap((spy) => spy.mock.calls)).toEqual([])
    } finally {
      spies.forEach((spy) => spy.mockRestore())
    }
  })

  it("redirects to the app's error page with the code, and logs nothing", async () => {
    const logger = recordingLogger()
    const { app } = createTestApp({ logger, debug: true, trustHost: true, pages: { error: '/oops' } })
    const response = await request(app).get('/api/auth/error?error=Configuration').expect(302)
    expect(response.headers.location).toMatch(/\/oops\?error=Configuration$/)
    expect(logged(logger)).toEqual([])
  })
})
