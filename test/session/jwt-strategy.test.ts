/**
 * JWT sessions through HTTP: re-issue only when updateAge has passed (or the token changed), POST
 * /session updates, the jwt / session callbacks and events, and secret rotation.
 */
import express from 'express'
import knex from 'knex'
import request from 'supertest'
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import Portcullis, { type JWT, type PortcullisConfig, type User } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { SECRET, credentialsProvider, fetchCsrfToken, setCookie, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'
import { list } from '../sessions/contract.js'

function appFor(config: Partial<PortcullisConfig> = {}) {
  const { handlers, auth } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider], ...config })
  const app = express()
  app.use('/api/auth', handlers)
  app.get('/me', async (req, res) => void res.json(await auth(req, res)))
  return app
}

const HOUR = 3600_000
let clock: ReturnType<typeof jest.spyOn> | undefined
function setNow(ms: number) {
  clock?.mockRestore()
  clock = jest.spyOn(Date, 'now').mockReturnValue(ms)
}
afterEach(() => {
  clock?.mockRestore()
  clock = undefined
})

describe('re-issuing the session cookie', () => {
  it('does not re-seal on reads before updateAge, and does after it, sliding the expiry', async () => {
    const start = Date.UTC(2026, 10, 20, 12)
    setNow(start)
    const agent = request.agent(appFor({ session: { maxAge: 30 * 24 * 3600, updateAge: 24 * 3600 } }))
    await signInWithPassword(agent)

    setNow(start + 23 * HOUR)
    const early = await agent.get('/me').expect(200)
    expect(early.body.user.id).toBe('user-1')
    expect(setCookie(early, 'authjs.session-token')).toBeUndefined()
    expect(early.body.expires).toBe(new Date(start + 30 * 24 * HOUR).toISOString())

    setNow(start + 25 * HOUR)
    const due = await agent.get('/me').expect(200)
    expect(setCookie(due, 'authjs.session-token')).toMatch(/^authjs\.session-token=eyJ/)
    expect(due.body.expires).toBe(new Date(start + 25 * HOUR + 30 * 24 * HOUR).toISOString())

    setNow(start + 26 * HOUR)
    expect(setCookie(await agent.get('/api/auth/session'), 'authjs.session-token')).toBeUndefined()
  })

  it('re-seals from the very second updateAge has passed, with and without a jwt callback', async () => {
    const start = Date.UTC(2026, 10, 20, 12)
    for (const config of [{}, { callbacks: { jwt: ({ token }: { token: Record<string, unknown> }) => token } }]) {
      setNow(start)
      const agent = request.agent(appFor({ session: { updateAge: 3600 }, ...config }))
      await signInWithPassword(agent)
      setNow(start + HOUR - 1000)
      expect(setCookie(await agent.get('/me'), 'authjs.session-token')).toBeUndefined()
      setNow(start + HOUR)
      expect(setCookie(await agent.get('/me'), 'authjs.session-token')).toBeDefined()
    }
  })

  it('re-seals on every read with updateAge: 0', async () => {
    const agent = request.agent(appFor({ session: { updateAge: 0 } }))
    await signInWithPassword(agent)
    expect(setCookie(await agent.get('/me'), 'authjs.session-token')).toBeDefined()
    expect(setCookie(await agent.get('/me'), 'authjs.session-token')).toBeDefined()
  })

  it('re-seals when the jwt callback changes the token, and not when it returns it unchanged', async () => {
    let visits = 0
    const counting = appFor({ callbacks: { jwt: ({ token }) => ({ ...token, visits: ++visits }) } })
    const agent = request.agent(counting)
    await signInWithPassword(agent)
    expect(setCookie(await agent.get('/me'), 'authjs.session-token')).toBeDefined()

    const stable = request.agent(appFor({ callbacks: { jwt: ({ token }) => token } }))
    await signInWithPassword(stable)
    expect(setCookie(await stable.get('/me'), 'authjs.session-token')).toBeUndefined()
  })

  it('ends the session when the jwt callback returns null', async () => {
    let revoked = false
    const agent = request.agent(appFor({ callbacks: { jwt: ({ token }) => (revoked ? null : token) } }))
    await signInWithPassword(agent)
    revoked = true
    const response = await agent.get('/me').expect(200)
    expect(response.body).toBeNull()
    expect(setCookie(response, 'authjs.session-token')).toMatch(/Max-Age=0/)
  })
})

describe('POST /session', () => {
  it('passes data to the jwt callback with trigger "update" and returns the new session', async () => {
    const jwt = jest.fn(({ token, trigger, session }: { token: Record<string, unknown>; trigger?: string; session?: unknown }) =>
      trigger === 'update' ? { ...token, name: (session as { name: string }).name } : token,
    )
    const agent = request.agent(appFor({ callbacks: { jwt } }))
    await signInWithPassword(agent)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent.post('/api/auth/session').send({ csrfToken, data: { name: 'Countess of Lovelace' } }).expect(200)
    expect(response.body.user.name).toBe('Countess of Lovelace')
    expect(jwt).toHaveBeenLastCalledWith(expect.objectContaining({ trigger: 'update', session: { name: 'Countess of Lovelace' } }))
    expect(setCookie(response, 'authjs.session-token')).toBeDefined()
    expect((await agent.get('/me')).body.user.name).toBe('Countess of Lovelace')
  })

  it('re-seals the cookie on an update without a jwt callback too (its expiry slides)', async () => {
    const start = Date.UTC(2026, 10, 20, 12)
    setNow(start)
    const agent = request.agent(appFor({ session: { maxAge: 7 * 24 * 3600, updateAge: 24 * 3600 } }))
    await signInWithPassword(agent)
    setNow(start + HOUR)
    const csrfToken = await fetchCsrfToken(agent)
    const response = await agent.post('/api/auth/session').send({ csrfToken, data: { ignored: true } }).expect(200)
    expect(setCookie(response, 'authjs.session-token')).toMatch(/^authjs\.session-token=eyJ/)
    expect(response.body.expires).toBe(new Date(start + HOUR + 7 * 24 * HOUR).toISOString())
  })

  it('returns null without a session', async () => {
    const agent = request.agent(appFor())
    const csrfToken = await fetchCsrfToken(agent)
    expect((await agent.post('/api/auth/session').send({ csrfToken, data: {} }).expect(200)).body).toBeNull()
  })
})

describe('callbacks and events', () => {
  it('shapes the token and the session, and sees the sign-in user and account', async () => {
    const jwt = jest.fn(({ token, user }: { token: Record<string, unknown>; user?: { id?: string } }) => (user ? { ...token, role: 'admin' } : token))
    const agent = request.agent(
      appFor({
        callbacks: {
          jwt,
          session: ({ session, token }) => ({ ...session, user: { ...session.user, role: token.role } }),
        },
      }),
    )
    await signInWithPassword(agent)
    expect(jwt).toHaveBeenCalledWith(
      expect.objectContaining({
        trigger: 'signIn',
        user: expect.objectContaining({ id: 'user-1' }),
        account: { provider: 'credentials', type: 'credentials', providerAccountId: 'user-1' },
      }),
    )
    expect((await agent.get('/me')).body.user).toEqual({ id: 'user-1', name: 'Ada Lovelace', email: 'ada@example.com', role: 'admin' })
  })

  it('lets the signIn callback refuse (AccessDenied, 403 page) or redirect elsewhere', async () => {
    const refusing = request.agent(appFor({ callbacks: { signIn: () => false } }))
    const denied = await signInWithPassword(refusing)
    expect(denied.headers.location).toMatch(/\/api\/auth\/error\?error=AccessDenied$/)
    expect(setCookie(denied, 'authjs.session-token')).toBeUndefined()
    expect((await refusing.get('/api/auth/error?error=AccessDenied')).status).toBe(403)

    const redirecting = await signInWithPassword(request.agent(appFor({ callbacks: { signIn: () => '/complete-profile' } })))
    expect(new URL(redirecting.headers.location!).pathname).toBe('/complete-profile')
    expect(setCookie(redirecting, 'authjs.session-token')).toBeUndefined()
  })

  it('emits signIn, session and signOut events; a throwing handler is logged and breaks nothing', async () => {
    const seen: string[] = []
    const error = jest.fn()
    const agent = request.agent(
      appFor({
        logger: { ...recordingLogger(), error },
        events: {
          signIn: ({ user, account }) => {
            seen.push(`signIn:${user.id}:${account?.provider}`)
            throw new Error('audit log down')
          },
          session: ({ session }) => void seen.push(`session:${session.user.id}`),
          signOut: ({ token }) => void seen.push(`signOut:${token?.sub}`),
        },
      }),
    )
    expect((await signInWithPassword(agent)).status).toBe(302)
    expect(error).toHaveBeenCalledWith('EventError', expect.stringContaining('signIn'), 'Error: audit log down')
    expect((await agent.get('/me')).body.user.id).toBe('user-1')
    const csrfToken = await fetchCsrfToken(agent)
    await agent.post('/api/auth/signout').type('form').send({ csrfToken })
    expect(seen).toEqual(['signIn:user-1:credentials', 'session:user-1', 'signOut:user-1'])
  })
})

describe('what the session cookie and app code are given', () => {
  it('sets the session cookie to expire with the token (Expires), not at the end of the browser session', async () => {
    const start = Date.UTC(2026, 10, 20, 12)
    setNow(start)
    const signIn = await signInWithPassword(request.agent(appFor({ session: { maxAge: 7 * 24 * 3600 } })))
    const cookie = setCookie(signIn, 'authjs.session-token')!
    expect(cookie).toContain(`Expires=${new Date(start + 7 * 24 * HOUR).toUTCString()}`)
  })

  it('hands the jwt callback of a credentials sign-in the default claims only, isNewUser false', async () => {
    const calls: Record<string, unknown>[] = []
    await signInWithPassword(request.agent(appFor({ callbacks: { jwt: (params) => (calls.push({ ...params, token: { ...params.token } }), params.token) } })))
    expect(calls).toHaveLength(1)
    expect(calls[0]!.token).toStrictEqual({ name: 'Ada Lovelace', email: 'ada@example.com', picture: undefined, sub: 'user-1' })
    expect(calls[0]).toMatchObject({ trigger: 'signIn', isNewUser: false })
  })

  it('gives the jwt callback, the session callback and the session event a token of their own, never the cached one (frozen)', async () => {
    const frozen: boolean[] = []
    for (const config of [
      { callbacks: { jwt: ({ token }: { token: object }) => (frozen.push(Object.isFrozen(token)), token) } },
      { callbacks: { session: ({ session, token }: { session: object; token: object }) => (frozen.push(Object.isFrozen(token)), session) } },
      { events: { session: ({ token }: { token?: object }) => void frozen.push(Object.isFrozen(token)) } },
    ] as Partial<PortcullisConfig>[]) {
      const agent = request.agent(appFor(config))
      await signInWithPassword(agent)
      frozen.length = 0
      // The second read of a cookie is served from the cache, whose claims are frozen.
      for (let i = 0; i < 3; i++) await agent.get('/me').expect(200)
      expect(frozen).toEqual([false, false, false])
    }
  })

  it('logs, at debug, why a session cookie is cleared', async () => {
    const logger = recordingLogger()
    const agent = request.agent(appFor({ logger }))
    agent.jar.setCookie('authjs.session-token=not-a-token')
    const response = await agent.get('/me').expect(200)
    expect(setCookie(response, 'authjs.session-token')).toMatch(/Max-Age=0/)
    expect(logger.lines).toContainEqual({ level: 'debug', code: 'JWTSessionError', message: ['The session cookie could not be read; it is cleared.'] })
  })

  it('logs, at debug, that a session ended elsewhere is cleared', async () => {
    const logger = recordingLogger()
    const app = appFor({ logger, session: { strategy: 'jwt', store: 'memory', revocationCacheSeconds: 0 } })
    const agent = request.agent(app)
    const cookie = setCookie(await signInWithPassword(agent), 'authjs.session-token')!.split(';')[0]!
    const csrfToken = await fetchCsrfToken(agent)
    await agent.post('/api/auth/signout').type('form').send({ csrfToken }).expect(302)
    const copy = request.agent(app)
    copy.jar.setCookie(cookie)
    const response = await copy.get('/me').expect(200)
    expect(response.body).toBeNull()
    expect(setCookie(response, 'authjs.session-token')).toMatch(/Max-Age=0/)
    expect(logger.lines).toContainEqual({ level: 'debug', code: 'SessionRevoked', message: ['The session was ended (signed out, revoked or signed out everywhere); its cookie is cleared.'] })
  })

  it('with a session store, the jwt callback of a sign-in already sees the new session\'s id', async () => {
    const seen: unknown[] = []
    await signInWithPassword(request.agent(appFor({ session: { strategy: 'jwt', store: 'memory' }, callbacks: { jwt: ({ token }) => (seen.push(token.sid), token) } })))
    expect(seen).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{16,}$/)])
  })

  it('with a session store, a token sealed before the store was configured is re-sealed with a session id whenever it is read, the new one is not', async () => {
    const cookie = setCookie(await signInWithPassword(request.agent(appFor())), 'authjs.session-token')!.split(';')[0]!
    const app = appFor({ session: { strategy: 'jwt', store: 'memory' } })
    const agent = request.agent(app)
    agent.jar.setCookie(cookie)
    const first = await agent.get('/me').expect(200)
    expect(first.body.user.id).toBe('user-1')
    expect(setCookie(first, 'authjs.session-token')).toMatch(/^authjs\.session-token=eyJ/)
    expect(await list(agent)).toHaveLength(1)
    const next = await agent.get('/me').expect(200)
    expect(next.body.user.id).toBe('user-1')
    expect(setCookie(next, 'authjs.session-token')).toBeUndefined()
    // The old cookie again (a request that left before the new one came back): the process knows
    // it stands now, and it is still given an id of its own rather than let in as it is.
    const copy = request.agent(app)
    copy.jar.setCookie(cookie)
    expect(setCookie(await copy.get('/me').expect(200), 'authjs.session-token')).toMatch(/^authjs\.session-token=eyJ/)
  })

  it('with a custom codec whose tokens carry no exp, a session lasts maxAge from the read', async () => {
    const start = Date.UTC(2026, 10, 20, 12)
    setNow(start)
    const jwt = {
      // Issued now (no re-issue on the read), with no expiry of its own.
      encode: ({ token }: { token?: JWT }) => Buffer.from(JSON.stringify({ ...token, iat: Math.floor(Date.now() / 1000), exp: undefined })).toString('base64url'),
      decode: ({ token }: { token?: string }) => (token ? (JSON.parse(Buffer.from(token, 'base64url').toString()) as JWT) : null),
    }
    const agent = request.agent(appFor({ jwt, session: { maxAge: 3600 } }))
    await signInWithPassword(agent)
    setNow(start + 60_000)
    expect((await agent.get('/me').expect(200)).body).toMatchObject({ user: { id: 'user-1' }, expires: new Date(start + 60_000 + HOUR).toISOString() })
  })

  it('with a session store, a re-issue moves the session\'s last-seen time and keeps when it was created', async () => {
    const start = Date.UTC(2026, 10, 20, 12)
    setNow(start)
    const agent = request.agent(appFor({ session: { strategy: 'jwt', store: 'memory', updateAge: 3600 } }))
    await signInWithPassword(agent)
    setNow(start + 2 * HOUR)
    expect(setCookie(await agent.get('/me'), 'authjs.session-token')).toBeDefined()
    const sessions = await list(agent)
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toMatchObject({ createdAt: new Date(start).toISOString(), lastSeenAt: new Date(start + 2 * HOUR).toISOString() })
  })

  it('with a session store, a re-issue that finds the session ended meanwhile answers no session and clears the cookie', async () => {
    // The session is ended (its row deleted) between the read's check of the store and the
    // re-issue's write: the jwt callback runs in between.
    const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    let endMeanwhile = false
    const jwt = async ({ token }: { token: JWT }) => {
      if (endMeanwhile) await db('portcullis_session_store').where({ userId: token.sub }).del()
      return token
    }
    try {
      const agent = request.agent(appFor({ session: { strategy: 'jwt', store: { knex: db }, updateAge: 0 }, callbacks: { jwt } }))
      await signInWithPassword(agent)
      expect((await agent.get('/me').expect(200)).body.user.id).toBe('user-1')
      endMeanwhile = true
      const response = await agent.get('/me').expect(200)
      expect(response.body).toBeNull()
      expect(setCookie(response, 'authjs.session-token')).toMatch(/Max-Age=0/)
    } finally {
      await db.destroy()
    }
  })

  it('with a session store, a new sign-in in the same browser ends the session it replaces', async () => {
    // (Read from the store on every read: by default a process learns of an ended session within 5 s.)
    const app = appFor({ session: { strategy: 'jwt', store: 'memory', revocationCacheSeconds: 0 } })
    const agent = request.agent(app)
    const first = setCookie(await signInWithPassword(agent), 'authjs.session-token')!.split(';')[0]!
    // A copy of the first cookie, kept elsewhere: a session until the browser signs in again.
    const copy = request.agent(app)
    copy.jar.setCookie(first)
    expect((await copy.get('/me').expect(200)).body.user.id).toBe('user-1')
    await signInWithPassword(agent)
    expect((await copy.get('/me').expect(200)).body).toBeNull()
    expect((await agent.get('/me').expect(200)).body.user.id).toBe('user-1')
  })
})

describe('server-side signIn and signOut, then auth(), in one handler', () => {
  // A session due for re-issue (updateAge 0, as any session is once a day old by default): a read of
  // the request's own cookie after the call would seal it again, after the cookie the call set.
  function handlerApp() {
    const users: Record<string, User> = { ada: { id: 'user-1', name: 'Ada Lovelace' }, grace: { id: 'user-2', name: 'Grace Hopper' } }
    const provider = Credentials({ authorize: async ({ username }) => users[String(username)] ?? null })
    const { handlers, auth, signIn, signOut } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [provider], session: { updateAge: 0 } })
    const app = express()
    app.use('/api/auth', handlers)
    app.use(express.urlencoded({ extended: false }))
    app.use(auth)
    app.post('/login', async (req, res) => {
      await signIn('credentials', { ...req.body, redirect: false })
      res.json({ after: (await auth(req, res))?.user.id ?? null })
    })
    app.post('/logout', async (req, res) => {
      await signOut({ redirect: false })
      res.json({ after: (await auth(req, res))?.user.id ?? null, reqAuth: req.auth ?? null })
    })
    app.get('/me', async (req, res) => void res.json((await auth(req, res))?.user.id ?? null))
    return app
  }

  /** POSTs `fields` with a fresh CSRF token, as the app's own form would. */
  async function post(agent: request.Agent, path: string, fields: Record<string, string> = {}) {
    const csrfToken = await fetchCsrfToken(agent)
    return agent.post(path).type('form').send({ ...fields, csrfToken }).expect(200)
  }

  it('a handler that signs out reads no session after it, and sends no session cookie after the one that clears it', async () => {
    const agent = request.agent(handlerApp())
    await post(agent, '/login', { username: 'ada' })
    const logout = await post(agent, '/logout')
    expect(logout.body).toEqual({ after: null, reqAuth: null })
    const sessionCookies = ((logout.headers['set-cookie'] as unknown as string[] | undefined) ?? []).filter((cookie) => cookie.startsWith('authjs.session-token='))
    expect(sessionCookies.at(-1)).toMatch(/^authjs\.session-token=;/)
    expect((await agent.get('/me')).body).toBeNull()
  })

  it('a handler that signs another user in over a session reads the new user, and the browser keeps them', async () => {
    const agent = request.agent(handlerApp())
    expect((await post(agent, '/login', { username: 'ada' })).body).toEqual({ after: 'user-1' })
    expect((await post(agent, '/login', { username: 'grace' })).body).toEqual({ after: 'user-2' })
    expect((await agent.get('/me')).body).toBe('user-2')
  })
})

describe('secret rotation', () => {
  it('reads a cookie sealed with the old secret after secret: [new, old], and re-seals with the new one', async () => {
    const oldAgent = request.agent(appFor({ secret: 'the-old-secret-0123456789abcdef0123' }))
    const signIn = await signInWithPassword(oldAgent)
    const cookie = setCookie(signIn, 'authjs.session-token')!.split(';')[0]!

    const rotated = appFor({ secret: ['the-new-secret-0123456789abcdef0123', 'the-old-secret-0123456789abcdef0123'], session: { updateAge: 0 } })
    const response = await request(rotated).get('/me').set('Cookie', cookie).expect(200)
    expect(response.body.user.id).toBe('user-1')
    const resealed = setCookie(response, 'authjs.session-token')!.split(';')[0]!

    const newOnly = appFor({ secret: 'the-new-secret-0123456789abcdef0123' })
    expect((await request(newOnly).get('/me').set('Cookie', resealed)).body.user.id).toBe('user-1')
    expect((await request(newOnly).get('/me').set('Cookie', cookie)).body).toBeNull()
  })
})
