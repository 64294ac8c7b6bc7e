/**
 * `req.auth` wherever an app reads it. On Express requests it is an accessor on the Express
 * module's request prototype on Node 20 and 22, an own property on Node 24 (src/api/request-auth.ts:
 * `ownRequestProperties`; CI runs these tests on all three), so these tests follow a request through
 * what Express does to its prototype: sub-apps, a second app, a library that sets `req.auth`
 * itself; on node:http it is an own property everywhere, and Node's prototype is never touched.
 */
import { IncomingMessage, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import express4 from 'express4'
import request from 'supertest'
import { describe, expect, it, jest } from '@jest/globals'
import Portcullis, { type Session } from 'portcullis'
import { ownRequestProperties } from '../../src/api/request-auth.js'
import { SECRET, createTestApp, credentialsProvider, setCookie, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

type AuthRequest = { auth?: Session | null }

describe.each([
  ['Express 5', express],
  ['Express 4', express4 as unknown as typeof express],
])('req.auth on %s', (_name, createApp) => {
  const setup = () => createTestApp({}, createApp)

  async function signedInAgent(app: express.Express) {
    const agent = request.agent(app)
    expect((await signInWithPassword(agent)).status).toBe(302)
    return agent
  }

  /** What a route sees: the session's user, and whether req.auth is a property of the request itself. */
  const seen = (req: express.Request) => ({ who: (req as AuthRequest).auth?.user.id ?? null, own: Object.hasOwn(req, 'auth') })

  it('is set by the middleware in the app and read in a mounted sub-app, and the other way round', async () => {
    const { app, auth } = setup()
    // The request enters a sub-app (Express gives it the sub-app's prototype) after the middleware ran.
    const admin = createApp()
    admin.get('/who', (req, res) => void res.json(seen(req)))
    // And leaves one, back to the app's prototype, after auth() ran inside it.
    const reader = createApp()
    reader.use(async (req, res, next) => {
      await auth(req, res)
      next()
    })
    app.use('/admin', auth, admin)
    app.use('/later', reader, (req: express.Request, res: express.Response) => void res.json(seen(req)))
    const agent = await signedInAgent(app)
    // The sub-app's request prototype is the first Portcullis sees here: on Node 20 and 22 it inherits the accessor.
    const own = ownRequestProperties
    expect((await agent.get('/later').expect(200)).body).toEqual({ who: 'user-1', own })
    expect((await agent.get('/admin/who').expect(200)).body).toEqual({ who: 'user-1', own })
    expect((await request(app).get('/admin/who').expect(200)).body).toEqual({ who: null, own })
  })

  it('is undefined on a request no form of auth has read, in this app and in another', async () => {
    const { app } = setup()
    app.get('/unread', (req, res) => void res.json({ unread: (req as AuthRequest).auth === undefined }))
    const other = createApp()
    other.get('/unread', (req, res) => void res.json({ unread: (req as AuthRequest).auth === undefined }))
    const agent = await signedInAgent(app)
    expect((await agent.get('/me').expect(200)).body.user.id).toBe('user-1')
    expect((await agent.get('/unread').expect(200)).body).toEqual({ unread: true })
    expect((await request(other).get('/unread').expect(200)).body).toEqual({ unread: true })
  })

  it('can still be assigned by the app or another library, before auth() runs and after', async () => {
    const { app, auth } = setup()
    app.get('/before', async (req, res) => {
      // A JWT-bearer library sets req.auth to its own payload first; auth() then sets the session.
      ;(req as AuthRequest).auth = { user: { id: 'bearer' }, expires: '' } as Session
      const session = await auth(req, res)
      res.json({ same: (req as AuthRequest).auth === session, who: (req as AuthRequest).auth?.user.id })
    })
    app.get('/after', async (req, res) => {
      await auth(req, res)
      ;(req as AuthRequest).auth = null
      res.json({ auth: (req as AuthRequest).auth, enumerable: Object.keys(req).includes('auth') })
    })
    const agent = await signedInAgent(app)
    expect((await agent.get('/before').expect(200)).body).toEqual({ same: true, who: 'user-1' })
    expect((await agent.get('/after').expect(200)).body).toEqual({ auth: null, enumerable: true })
  })

  it('adds nothing to the request that its keys or JSON show, but the own req.auth of Node 24', async () => {
    const { app, auth } = setup()
    app.get('/keys', async (req, res) => {
      const [keys, symbols] = [Object.keys(req), Object.getOwnPropertySymbols(req)]
      await auth(req, res)
      await auth(req, res)
      res.json({
        added: Object.keys(req).filter((key) => !keys.includes(key)),
        symbols: Object.getOwnPropertySymbols(req).filter((symbol) => !symbols.includes(symbol)).length,
      })
    })
    const { body } = await (await signedInAgent(app)).get('/keys').expect(200)
    // The read itself is kept under a symbol on Node 24 (one, however often auth() is called), in a WeakMap before.
    expect(body).toEqual(ownRequestProperties ? { added: ['auth'], symbols: 1 } : { added: [], symbols: 0 })
  })

  it('is answered by one accessor for two copies of Portcullis in the process (two versions installed)', async () => {
    const { app, auth } = setup()
    // A second copy of the module, as another version of the package in node_modules would load.
    let copy!: typeof import('../../src/api/request-auth.js')
    await jest.isolateModulesAsync(async () => void (copy = await import('../../src/api/request-auth.js')))
    const second = { user: { id: 'second-copy' }, expires: '2030-01-01T00:00:00.000Z' } as Session
    app.get('/copies', async (req, res) => {
      const first = (await auth(req, res))?.user.id
      copy.setRequestAuth(req, second)
      res.json({ first, ...seen(req) })
    })
    const { body } = await (await signedInAgent(app)).get('/copies').expect(200)
    // Before 24 the first copy's accessor answers the second copy's session: no own property for either.
    expect(body).toEqual({ first: 'user-1', who: 'second-copy', own: ownRequestProperties })
  })

  it('leaves Node’s request prototype alone', async () => {
    const { app } = setup()
    await (await signedInAgent(app)).get('/me').expect(200)
    expect(Object.hasOwn(IncomingMessage.prototype, 'auth')).toBe(false)
  })
})

describe('req.auth on node:http', () => {
  it('is an own property of the request, as set', async () => {
    const { handlers, auth } = Portcullis({ logger: recordingLogger(), secret: SECRET, providers: [credentialsProvider] })
    const app = express().use('/api/auth', handlers)
    const cookie = setCookie(await signInWithPassword(request.agent(app)), 'authjs.session-token')!.split(';')[0]!
    const server = createServer(async (req, res) => {
      const session = await auth(req, res)
      res.end(JSON.stringify({ who: session?.user.id ?? null, own: Object.hasOwn(req, 'auth'), same: (req as AuthRequest).auth === session }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers: { cookie } })
      expect(await answer.json()).toEqual({ who: 'user-1', own: true, same: true })
      expect(Object.hasOwn(IncomingMessage.prototype, 'auth')).toBe(false)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
