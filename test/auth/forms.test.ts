/** Every form of `auth` (DESIGN §2), `callbacks.authorized`, and the server-side signIn / signOut. */
import { AsyncLocalStorage } from 'node:async_hooks'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import request from 'supertest'
import { describe, expect, it, jest } from '@jest/globals'
import Portcullis, { CredentialsSignin, MissingCSRFError, MissingRequestContextError, type PortcullisConfig, type Session } from 'portcullis'
import { SECRET, credentialsProvider, setCookie, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

function setup(config: Partial<PortcullisConfig> = {}) {
  const portcullis = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], ...config })
  const app = express()
  app.use('/api/auth', portcullis.handlers)
  return { app, ...portcullis }
}

async function signedInAgent(app: express.Express) {
  const agent = request.agent(app)
  expect((await signInWithPassword(agent)).status).toBe(302)
  return agent
}

describe('auth(req, res) and auth({ req, res })', () => {
  it('resolves the session and sets req.auth, once per request', async () => {
    const jwt = jest.fn(({ token }: { token: Record<string, unknown> }) => token)
    const { app, auth } = setup({ callbacks: { jwt } })
    app.get('/both', async (req, res) => {
      const first = await auth(req, res)
      const second = await auth({ req, res })
      res.json({ first, second, same: first === second, reqAuth: req.auth === first })
    })
    const agent = await signedInAgent(app)
    jwt.mockClear()
    const { body } = await agent.get('/both').expect(200)
    expect(body.first.user.id).toBe('user-1')
    expect(body.same).toBe(true)
    expect(body.reqAuth).toBe(true)
    expect(jwt).toHaveBeenCalledTimes(1)
  })
})

describe('auth(req, res) with requests in flight together', () => {
  /** Settles once `count` callers have arrived: the route's requests wait there for each other. */
  function barrier(count: number): () => Promise<void> {
    let arrived = 0
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    return () => {
      if (++arrived === count) open()
      return opened
    }
  }

  it('reads each request’s session once, however the requests interleave (Express, with a response)', async () => {
    const jwt = jest.fn(({ token }: { token: Record<string, unknown> }) => token)
    const { app, auth } = setup({ callbacks: { jwt } })
    const bothRead = barrier(2)
    app.get('/twice', async (req, res) => {
      const first = await auth(req, res)
      // The other request reads its session here, before this one asks again.
      await bothRead()
      const second = await auth(req, res)
      res.json({ user: second?.user.id, same: first === second && req.auth === first })
    })
    const agent = await signedInAgent(app)
    jwt.mockClear()
    const answers = await Promise.all([agent.get('/twice'), agent.get('/twice')])
    expect(answers.map((answer) => answer.body)).toEqual([
      { user: 'user-1', same: true },
      { user: 'user-1', same: true },
    ])
    expect(jwt).toHaveBeenCalledTimes(2)
  })

  it('reads each request’s session once, however the requests interleave (node:http, auth(req) without a response)', async () => {
    const jwt = jest.fn(({ token }: { token: Record<string, unknown> }) => token)
    const { app, auth } = setup({ callbacks: { jwt } })
    const cookie = setCookie(await signInWithPassword(request.agent(app)), 'authjs.session-token')!.split(';')[0]!
    jwt.mockClear()
    const bothRead = barrier(2)
    const server = createServer(async (req, res) => {
      const first = await auth(req)
      await bothRead()
      const second = await auth(req)
      res.end(JSON.stringify({ user: second?.user.id, same: first === second }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
      const answers = await Promise.all([1, 2].map(async () => (await fetch(url, { headers: { cookie } })).json()))
      expect(answers).toEqual([
        { user: 'user-1', same: true },
        { user: 'user-1', same: true },
      ])
      expect(jwt).toHaveBeenCalledTimes(2)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe('auth(handler)', () => {
  it('resolves the session before the handler runs', async () => {
    const { app, auth } = setup()
    app.get('/admin', auth((req, res) => void res.json({ who: req.auth?.user.id ?? null })))
    expect((await request(app).get('/admin').expect(200)).body).toEqual({ who: null })
    const agent = await signedInAgent(app)
    expect((await agent.get('/admin').expect(200)).body).toEqual({ who: 'user-1' })
  })

  it('passes a handler error to next', async () => {
    const { app, auth } = setup()
    app.get('/boom', auth(() => Promise.reject(new Error('handler failed'))))
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(418).json({ message: error.message }))
    expect((await request(app).get('/boom').expect(418)).body).toEqual({ message: 'handler failed' })
  })
})

describe('auth middleware and callbacks.authorized', () => {
  function protectedApp(authorized: NonNullable<PortcullisConfig['callbacks']>['authorized']) {
    const portcullis = setup({ callbacks: { authorized } })
    portcullis.app.use('/dashboard', portcullis.auth)
    portcullis.app.get('/dashboard/*splat', (req, res) => void res.json({ page: req.path, user: req.auth?.user.id ?? null }))
    return portcullis
  }

  it('redirects a browser to the sign-in page with a callbackUrl back when authorized returns false', async () => {
    const { app } = protectedApp(({ auth }) => !!auth)
    const response = await request(app).get('/dashboard/reports?year=2026').set('Accept', 'text/html').expect(302)
    const location = new URL(response.headers.location!)
    expect(location.pathname).toBe('/api/auth/signin')
    expect(location.searchParams.get('callbackUrl')).toBe('/dashboard/reports?year=2026')
  })

  it('answers 401 JSON to a JSON client when authorized returns false', async () => {
    const { app } = protectedApp(({ auth }) => !!auth)
    const response = await request(app).get('/dashboard/data').set('Accept', 'application/json').expect(401)
    expect(response.body).toMatchObject({ error: 'SessionRequired', signInUrl: expect.stringContaining('/api/auth/signin?callbackUrl=') })
  })

  it('lets the request through when authorized returns true, with req.auth set', async () => {
    const { app } = protectedApp(({ auth }) => !!auth)
    const agent = await signedInAgent(app)
    expect((await agent.get('/dashboard/home').expect(200)).body).toEqual({ page: '/dashboard/home', user: 'user-1' })
  })

  it('sends a Response returned by authorized as it is', async () => {
    const { app } = protectedApp(() => {
      const headers = new Headers({ 'content-type': 'application/json', 'x-reason': 'maintenance' })
      headers.append('set-cookie', 'a=1; Path=/')
      headers.append('set-cookie', 'b=2; Path=/')
      return new Response(JSON.stringify({ message: 'Down for maintenance' }), { status: 503, headers })
    })
    const response = await request(app).get('/dashboard/home').expect(503)
    expect(response.body).toEqual({ message: 'Down for maintenance' })
    expect(response.headers['x-reason']).toBe('maintenance')
    expect(response.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/'])
  })

  it('refuses when authorized answers null, 0 or an empty string (a JavaScript `auth && …` without a session), as Auth.js does', async () => {
    for (const answer of [null, 0, '']) {
      const { app } = protectedApp(() => answer as unknown as boolean)
      const response = await request(app).get('/dashboard/x').set('Accept', 'text/html').expect(302)
      expect(new URL(response.headers.location!).pathname).toBe('/api/auth/signin')
    }
  })

  it('goes on without a callback, keeping the session available (undefined means allow)', async () => {
    const { app } = protectedApp(() => undefined)
    expect((await request(app).get('/dashboard/x').expect(200)).body).toEqual({ page: '/dashboard/x', user: null })
  })

  it('passes an error thrown by authorized to next', async () => {
    const { app } = protectedApp(() => {
      throw new Error('policy store down')
    })
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).json({ message: error.message }))
    expect((await request(app).get('/dashboard/x').expect(500)).body).toEqual({ message: 'policy store down' })
  })
})

/** Runs `body` with every AsyncLocalStorage that enters a store recorded; those storages. */
async function withEnteredStorages(body: (entered: Set<AsyncLocalStorage<unknown>>) => Promise<void>): Promise<Set<AsyncLocalStorage<unknown>>> {
  const entered = new Set<AsyncLocalStorage<unknown>>()
  const { run } = AsyncLocalStorage.prototype
  AsyncLocalStorage.prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
    entered.add(this)
    return run.apply(this, args)
  } as typeof run
  try {
    await body(entered)
  } finally {
    AsyncLocalStorage.prototype.run = run
  }
  return entered
}

/** 'found' when the call resolves, else the name of its error. */
const outcome = (call: () => Promise<unknown>) => call().then(() => 'found', (error: Error) => error.name)

describe('auth() without arguments', () => {
  it('returns the current request session after the middleware', async () => {
    const { app, auth } = setup()
    app.use(auth)
    app.get('/deep', async (_req, res) => {
      await new Promise((resolve) => setTimeout(resolve, 1))
      const session: Session | null = await auth()
      res.json({ id: session?.user.id ?? null })
    })
    const agent = await signedInAgent(app)
    expect((await agent.get('/deep').expect(200)).body).toEqual({ id: 'user-1' })
    expect((await request(app).get('/deep').expect(200)).body).toEqual({ id: null })
  })

  it('rejects with MissingRequestContextError outside a request', async () => {
    const { auth } = setup()
    await expect(auth()).rejects.toBeInstanceOf(MissingRequestContextError)
    await expect(auth()).rejects.toThrow(/auth\(req, res\)/)
  })

  it('with two instances, auth() finds the request only inside its own instance’s middleware', async () => {
    const outer = setup()
    const inner = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider] })
    const { app } = outer
    app.use(outer.auth)
    app.get('/outer-only', async (_req, res) => {
      res.json({ outer: await outcome(() => outer.auth()), inner: await outcome(() => inner.auth()) })
    })
    app.get('/both', inner.auth, async (_req, res) => {
      res.json({ outer: await outcome(() => outer.auth()), inner: await outcome(() => inner.auth()) })
    })
    expect((await request(app).get('/outer-only').expect(200)).body).toEqual({ outer: 'found', inner: 'MissingRequestContextError' })
    expect((await request(app).get('/both').expect(200)).body).toEqual({ outer: 'found', inner: 'found' })
  })

  it('finds the request in the auth routes’ callbacks, and not in work still running after the route has answered', async () => {
    let inside: string | undefined
    let later!: Promise<string>
    const { app, auth } = setup({
      events: {
        signIn: async () => {
          inside = await outcome(() => auth())
          later = new Promise((resolve) => setTimeout(() => void outcome(() => auth()).then(resolve), 20))
        },
      },
    })
    expect((await signInWithPassword(request.agent(app))).status).toBe(302)
    expect(inside).toBe('found')
    expect(await later).toBe('MissingRequestContextError')
  })

  it('behind the middleware, finds the request until its response has closed', async () => {
    const { app, auth } = setup()
    let afterClose!: Promise<string>
    app.use(auth)
    app.get('/answered', async (_req, res) => {
      const beforeAnswer = await outcome(() => auth())
      afterClose = new Promise((resolve) => res.once('close', () => setTimeout(() => void outcome(() => auth()).then(resolve), 5)))
      res.json({ beforeAnswer })
    })
    expect((await request(app).get('/answered').expect(200)).body).toEqual({ beforeAnswer: 'found' })
    expect(await afterClose).toBe('MissingRequestContextError')
  })

  // Node 20 and 22 build AsyncLocalStorage on async_hooks: enabled, it is visited by every promise the app creates.
  const hooked = typeof (AsyncLocalStorage.prototype as { _propagate?: unknown })._propagate === 'function'
  ;(hooked ? it : it.skip)('on Node 20 and 22, leaves its AsyncLocalStorage disabled whenever no request is inside a scope', async () => {
    await withEnteredStorages(async (entered) => {
      const enabled = () => [...entered].some((storage) => (storage as unknown as { enabled: boolean }).enabled)
      const { app, auth } = setup()
      let reached!: () => void
      const inRoute = new Promise<void>((resolve) => (reached = resolve))
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      app.get('/held', auth, async (_req, res) => {
        reached()
        await held
        res.json({ session: await auth() })
      })
      const server = createServer(app).listen(0, '127.0.0.1')
      await new Promise((resolve) => server.once('listening', resolve))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      try {
        expect((await fetch(`${url}/api/auth/session`)).status).toBe(200)
        expect(entered.size).toBe(1)
        expect(enabled()).toBe(false)
        const heldResponse = fetch(`${url}/held`)
        await inRoute
        expect((await fetch(`${url}/api/auth/session`)).status).toBe(200)
        expect(enabled()).toBe(true)
        release()
        expect(await (await heldResponse).json()).toEqual({ session: null })
        await new Promise((resolve) => setTimeout(resolve, 20))
        expect(enabled()).toBe(false)
      } finally {
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      }
    })
  })

  it('enters one AsyncLocalStorage whatever the number of instances (each one enabled slows every promise of the process on Node 20 and 22)', async () => {
    const entered = await withEnteredStorages(async () => {
      for (let i = 0; i < 3; i++) {
        const { app, auth } = setup()
        app.get('/me', auth, async (_req, res) => {
          res.json(await auth())
        })
        await request(app).get('/api/auth/session').expect(200)
        await request(app).get('/me').expect(200)
      }
    })
    expect(entered.size).toBe(1)
  })
})

describe('server-side signIn and signOut', () => {
  function loginApp() {
    const portcullis = setup()
    const { app, auth, signIn, signOut, getCsrfToken } = portcullis
    app.use(express.urlencoded({ extended: false }))
    app.use(auth)
    // The app's own form: its CSRF token comes from getCsrfToken, and signIn/signOut check it.
    app.get('/login', (req, res) => void res.json({ csrfToken: getCsrfToken(req, res) }))
    app.post('/login', async (req, res, next) => {
      try {
        if (req.body.mode === 'json') {
          const url = await signIn('credentials', { redirectTo: '/welcome', ...req.body, redirect: false })
          res.json({ url })
        } else if (req.body.mode === 'skip') {
          res.json({ url: await signIn('credentials', { ...req.body, redirect: false, skipCsrfCheck: true }) })
        } else {
          await signIn('credentials', { ...req.body, redirectTo: '/welcome' })
        }
      } catch (error) {
        if (error instanceof CredentialsSignin || error instanceof MissingCSRFError) return void res.status(401).json({ error: error.type, code: (error as CredentialsSignin).code })
        next(error)
      }
    })
    app.post('/logout', async (req, res) => {
      if (req.body.mode === 'json') return void res.json({ url: await signOut({ redirect: false, redirectTo: '/goodbye' }).catch((error: Error) => error.name) })
      await signOut({ redirectTo: '/goodbye' })
    })
    app.get('/me', async (req, res) => void res.json(await auth(req, res)))
    return app
  }

  /** The login page's CSRF token (the agent keeps the cookie). */
  async function formToken(agent: ReturnType<typeof request.agent>): Promise<string> {
    return (await agent.get('/login').expect(200)).body.csrfToken as string
  }

  async function login(agent: ReturnType<typeof request.agent>, fields: Record<string, string> = {}) {
    // The token first: the agent attaches its cookies when a request is created.
    const csrfToken = await formToken(agent)
    return agent.post('/login').type('form').send({ username: 'ada', password: 'lovelace', csrfToken, ...fields })
  }

  it('signs in with redirect (default) and ends the response with the redirect', async () => {
    const agent = request.agent(loginApp())
    const response = await login(agent)
    expect(response.status).toBe(302)
    expect(new URL(response.headers.location!).pathname).toBe('/welcome')
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  it('signs in with redirect: false, sets the cookie and resolves with the URL', async () => {
    const agent = request.agent(loginApp())
    const response = await login(agent, { mode: 'json' })
    expect(response.status).toBe(200)
    expect(new URL(response.body.url).pathname).toBe('/welcome')
    expect(setCookie(response, 'authjs.session-token')).toBeDefined()
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  it('rejects with CredentialsSignin (redirect: false) or redirects to the sign-in page', async () => {
    const agent = request.agent(loginApp())
    const json = await login(agent, { password: 'x', mode: 'json' })
    expect(json.status).toBe(401)
    expect(json.body).toEqual({ error: 'CredentialsSignin', code: 'credentials' })
    const page = await login(agent, { password: 'x' })
    expect(page.status).toBe(302)
    expect(page.headers.location).toMatch(/\/api\/auth\/signin\?error=CredentialsSignin&code=credentials$/)
  })

  it('refuses a sign-in without the form’s CSRF token (login CSRF): no session', async () => {
    const agent = request.agent(loginApp())
    const page = await agent.post('/login').type('form').send({ username: 'ada', password: 'lovelace' }).expect(302)
    expect(page.headers.location).toMatch(/\/api\/auth\/signin\?error=MissingCSRF$/)
    const json = await agent.post('/login').type('form').send({ username: 'ada', password: 'lovelace', mode: 'json' }).expect(401)
    expect(json.body.error).toBe('MissingCSRF')
    expect((await agent.get('/me')).body).toBeNull()
  })

  it('refuses a cross-site form even with a genuine token, and accepts skipCsrfCheck when the app says so', async () => {
    const agent = request.agent(loginApp())
    const csrfToken = await formToken(agent)
    const crossSite = await agent.post('/login').set('Sec-Fetch-Site', 'cross-site').type('form').send({ username: 'ada', password: 'lovelace', csrfToken, mode: 'json' })
    expect(crossSite.body.error).toBe('MissingCSRF')
    expect((await agent.get('/me')).body).toBeNull()
    const skipped = await agent.post('/login').type('form').send({ username: 'ada', password: 'lovelace', mode: 'skip' }).expect(200)
    expect(new URL(skipped.body.url).pathname).toBe('/')
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })

  it('signs out, clearing the session, with and without redirect; not without the token', async () => {
    const app = loginApp()
    const agent = request.agent(app)
    await login(agent)
    expect((await agent.post('/logout').type('form').send({ mode: 'json' }).expect(200)).body.url).toBe('MissingCSRFError')
    expect((await agent.get('/me')).body.user.id).toBe('user-1')

    const outToken = await formToken(agent)
    const out = await agent.post('/logout').type('form').send({ csrfToken: outToken }).expect(302)
    expect(new URL(out.headers.location!).pathname).toBe('/goodbye')
    expect(setCookie(out, 'authjs.session-token')).toMatch(/Max-Age=0/)
    expect((await agent.get('/me')).body).toBeNull()

    await login(agent)
    const jsonToken = await formToken(agent)
    const json = await agent.post('/logout').type('form').send({ mode: 'json', csrfToken: jsonToken }).expect(200)
    expect(new URL(json.body.url).pathname).toBe('/goodbye')
    expect((await agent.get('/me')).body).toBeNull()
  })

  it('getCsrfToken gives one token per request, and needs a request', async () => {
    const { app, getCsrfToken } = setup()
    app.get('/twice', (req, res) => void res.json([getCsrfToken(req, res), getCsrfToken(req, res)]))
    const response = await request(app).get('/twice').expect(200)
    expect(response.body[0]).toBe(response.body[1])
    expect((response.headers['set-cookie'] as unknown as string[]).filter((cookie) => cookie.startsWith('authjs.csrf-token='))).toHaveLength(1)
    expect(() => getCsrfToken()).toThrow(MissingRequestContextError)
  })

  it('refuses a redirectTo on another origin', async () => {
    const agent = request.agent(loginApp())
    const response = await login(agent, { mode: 'json', redirectTo: 'https://evil.example/' })
    const url = new URL(response.body.url)
    expect(url.hostname).toBe('127.0.0.1')
    expect(url.pathname).toBe('/')
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
  })
})
