/**
 * Runs examples/express the way a visitor would, so the example cannot rot (STYLE.md, Tests).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Express } from 'express'
import type { Knex } from 'knex'
import request from 'supertest'
import { createApp } from '../../examples/express/app.js'

let app: Express
let db: Knex
let adaId: string

beforeAll(async () => {
  process.env.AUTH_SECRET = 'test-secret-for-the-express-example-0123456789'
  ;({ app, db } = await createApp({ databaseFile: ':memory:' }))
  adaId = (await db('User').where({ email: 'ada@example.com' }).first()).id
})

afterAll(async () => {
  await db.destroy()
})

/** The path and query of an absolute `Location` header. */
function target(location: string | undefined): string {
  expect(location).toBeDefined()
  const url = new URL(location!)
  return url.pathname + url.search
}

function setCookies(response: request.Response): string[] {
  const header = response.headers['set-cookie'] as string[] | string | undefined
  return header === undefined ? [] : Array.isArray(header) ? header : [header]
}

/** An agent signed in as the demo user (or refused), following the form's real route. */
async function signIn(password: string, callbackUrl = '/dashboard') {
  const agent = request.agent(app)
  const csrf = await agent.get('/api/auth/csrf').expect(200)
  const response = await agent
    .post('/api/auth/callback/credentials')
    .type('form')
    .send({ csrfToken: csrf.body.csrfToken, username: 'ada', password, callbackUrl })
  return { agent, response, csrfToken: csrf.body.csrfToken as string }
}

describe('examples/express', () => {
  it('shows the home page signed out, with the demo credentials', async () => {
    const response = await request(app).get('/').expect(200)
    expect(response.text).toContain('You are not signed in.')
    expect(response.text).toContain('<code>ada</code>')
    expect(response.text).toContain('<code>lovelace</code>')
    expect(response.text).toContain('href="/api/auth/signin?callbackUrl=%2Fdashboard"')
  })

  it('redirects a signed-out visitor from /dashboard to the sign-in page with a callbackUrl', async () => {
    const response = await request(app).get('/dashboard').set('Accept', 'text/html').expect(302)
    expect(target(response.headers.location)).toBe('/api/auth/signin?callbackUrl=%2Fdashboard')
  })

  it('answers 401 JSON on /dashboard to a client that asks for JSON', async () => {
    const response = await request(app).get('/dashboard').set('Accept', 'application/json').expect(401)
    expect(response.body).toMatchObject({ error: 'SessionRequired', signInUrl: expect.stringContaining('/api/auth/signin?callbackUrl=%2Fdashboard') })
  })

  it('answers 401 JSON on /api/me when signed out', async () => {
    const response = await request(app).get('/api/me').expect(401)
    expect(response.body).toEqual({ message: 'Not authenticated' })
  })

  it('lists the username and password fields on the sign-in page, in the theme colour', async () => {
    const response = await request(app).get('/api/auth/signin?callbackUrl=%2Fdashboard').expect(200)
    expect(response.text).toMatch(/<input[^>]*type="text"[^>]*name="username"/)
    expect(response.text).toMatch(/<input[^>]*type="password"[^>]*name="password"/)
    expect(response.text).toContain('action="/api/auth/callback/credentials"')
    expect(response.text).toContain('#0f766e')
  })

  it('signs the demo user in and lands on the callbackUrl', async () => {
    const { agent, response } = await signIn('lovelace')
    expect(response.status).toBe(302)
    expect(target(response.headers.location)).toBe('/dashboard')
    // A database session: the cookie holds only the token of the new row.
    const token = /^authjs\.session-token=([0-9a-f]{64});/m.exec(setCookies(response).join('\n'))?.[1]
    expect(token).toBeDefined()
    expect(await db('Session').where({ sessionToken: token }).first()).toMatchObject({ userId: adaId })

    const dashboard = await agent.get('/dashboard').expect(200)
    expect(dashboard.text).toContain('Welcome, Ada Lovelace.')
    expect(dashboard.text).toContain(`<code>${adaId}</code>`)

    const me = await agent.get('/api/me').expect(200)
    expect(me.body).toMatchObject({ id: adaId, name: 'Ada Lovelace', email: 'ada@example.com' })

    const home = await agent.get('/').expect(200)
    expect(home.text).toContain('Signed in as <strong>Ada Lovelace</strong>')
  })

  it('sends a wrong password back to the sign-in page with the CredentialsSignin code', async () => {
    const { agent, response } = await signIn('babbage')
    expect(response.status).toBe(302)
    expect(target(response.headers.location)).toBe('/api/auth/signin?error=CredentialsSignin&code=credentials')
    expect(setCookies(response).some((cookie) => cookie.startsWith('authjs.session-token='))).toBe(false)
    await agent.get('/api/me').expect(401)
  })

  it('refuses an unknown username the same way', async () => {
    const agent = request.agent(app)
    const csrf = await agent.get('/api/auth/csrf').expect(200)
    const response = await agent
      .post('/api/auth/callback/credentials')
      .type('form')
      .send({ csrfToken: csrf.body.csrfToken, username: 'charles', password: 'lovelace' })
      .expect(302)
    expect(target(response.headers.location)).toBe('/api/auth/signin?error=CredentialsSignin&code=credentials')
  })

  it('signs out, deletes the session row and clears the cookie', async () => {
    const { agent, csrfToken, response: signedIn } = await signIn('lovelace')
    await agent.get('/api/me').expect(200)
    const token = /^authjs\.session-token=([^;]+);/m.exec(setCookies(signedIn).join('\n'))![1]

    const response = await agent.post('/api/auth/signout').type('form').send({ csrfToken, callbackUrl: '/' }).expect(302)
    expect(target(response.headers.location)).toBe('/')
    const cleared = setCookies(response).find((cookie) => cookie.startsWith('authjs.session-token='))
    expect(cleared).toMatch(/^authjs\.session-token=;.*Max-Age=0/)

    expect(await db('Session').where({ sessionToken: token }).first()).toBeUndefined()
    await agent.get('/api/me').expect(401)
    const home = await agent.get('/').expect(200)
    expect(home.text).toContain('You are not signed in.')
    await agent.get('/dashboard').set('Accept', 'text/html').expect(302)
  })
})

describe('npm start (examples/express/server.ts)', () => {
  it('creates and migrates its SQLite file, then serves the home page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-example-'))
    const port = 30000 + Math.floor(Math.random() * 20000)
    const server = spawn(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'examples/express/server.ts'], {
      env: { ...process.env, NODE_OPTIONS: '', PORT: String(port), DATABASE_FILE: join(dir, 'example.sqlite'), AUTH_SECRET: 'test-secret-for-the-express-example-0123456789' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      let output = ''
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 15000)
        const collect = (chunk: Buffer) => {
          output += chunk.toString()
          if (output.includes('running at')) {
            clearTimeout(timer)
            resolve()
          }
        }
        server.stdout.on('data', collect)
        server.stderr.on('data', collect)
        server.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)))
      })
      const home = await fetch(`http://127.0.0.1:${port}/`)
      expect(home.status).toBe(200)
      expect(await home.text()).toContain('You are not signed in.')
    } finally {
      server.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
