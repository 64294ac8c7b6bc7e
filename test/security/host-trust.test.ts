/**
 * The Host header is the client's to choose: an origin taken from it poisons every redirect and
 * link (host-header poisoning). In production Portcullis refuses it unless AUTH_URL or trustHost
 * says where the site is; in development it goes on, with one warning.
 */
import express from 'express'
import request from 'supertest'
import { beforeEach, describe, expect, it, jest } from '@jest/globals'
import Portcullis, { type PortcullisConfig } from 'portcullis'
import { SECRET, credentialsProvider, fetchCsrfToken } from '../support/flow.js'
import { isolateEnv } from '../support/env.js'

isolateEnv(['NODE_ENV', 'AUTH_URL', 'AUTH_TRUST_HOST'])

function appFor(config: Partial<PortcullisConfig>, logger = { error: jest.fn(), warn: jest.fn(), debug: jest.fn() }) {
  const { handlers, auth } = Portcullis({ secret: SECRET, providers: [credentialsProvider], logger, callbacks: { authorized: ({ auth: session }) => !!session }, ...config })
  const app = express()
  app.use('/api/auth', handlers)
  app.use('/dashboard', auth)
  app.get('/dashboard', (_req, res) => void res.send('secret'))
  app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).json({ handled: error.name }))
  return { app, logger }
}

describe('in production', () => {
  beforeEach(() => {
    process.env.NODE_ENV = 'production'
  })

  it('refuses every auth route rather than build URLs from the Host header: no Location ever points at the attacker’s host', async () => {
    const { app, logger } = appFor({})
    for (const path of ['/api/auth/signin', '/api/auth/signout', '/api/auth/csrf', '/dashboard']) {
      const response = await request(app).get(path).set('Host', 'evil.example')
      expect(response.status).toBe(500)
      expect(response.headers.location).toBeUndefined()
      expect(response.text).not.toContain('evil.example')
    }
    // The fix is logged once per instance, naming the settings.
    expect(logger.error).toHaveBeenCalledTimes(1)
    expect(logger.error).toHaveBeenCalledWith('UntrustedHost', expect.stringMatching(/AUTH_URL.*trustHost: true.*AUTH_TRUST_HOST/))
  })

  it('passes the refusal to the app’s error handler from the auth middleware', async () => {
    const { app } = appFor({})
    expect((await request(app).get('/dashboard').set('Host', 'evil.example').expect(500)).body).toEqual({ handled: 'UntrustedHostError' })
  })

  it('uses AUTH_URL whatever the Host header says', async () => {
    process.env.AUTH_URL = 'https://app.example.com/api/auth'
    const { app } = appFor({})
    const response = await request(app).get('/dashboard').set('Host', 'evil.example').expect(302)
    expect(response.headers.location).toBe('https://app.example.com/api/auth/signin?callbackUrl=%2Fdashboard')
  })

  it('believes the Host (and X-Forwarded-Host) with trustHost: true or AUTH_TRUST_HOST=true', async () => {
    const { app } = appFor({ trustHost: true })
    const response = await request(app).get('/dashboard').set('Host', 'internal:3000').set('X-Forwarded-Host', 'app.example.com').set('X-Forwarded-Proto', 'https').expect(302)
    expect(new URL(response.headers.location!).origin).toBe('https://app.example.com')
    process.env.AUTH_TRUST_HOST = 'true'
    expect((await request(appFor({}).app).get('/dashboard').set('Host', 'app.example.com').expect(302)).headers.location).toMatch(/^http:\/\/app\.example\.com\//)
  })

  it('still signs in with credentials once AUTH_URL is set', async () => {
    process.env.AUTH_URL = 'http://127.0.0.1/api/auth'
    const { app } = appFor({})
    const agent = request.agent(app)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'lovelace' }).expect(302)
    expect(response.headers.location).toBe('http://127.0.0.1/')
  })
})

describe('in development', () => {
  it('takes the Host header, ignores X-Forwarded-* from an untrusted peer, and warns once', async () => {
    process.env.NODE_ENV = 'development'
    const { app, logger } = appFor({})
    for (let i = 0; i < 3; i++) {
      const response = await request(app).get('/dashboard').set('Host', 'localhost:3000').set('X-Forwarded-Host', 'evil.example').expect(302)
      expect(response.headers.location).toBe('http://localhost:3000/api/auth/signin?callbackUrl=%2Fdashboard')
    }
    expect(logger.warn.mock.calls.filter(([code]) => code === 'UntrustedHost')).toHaveLength(1)
  })
})
