/**
 * The device list's own rules (src/session/devices.ts) as units: which rows a user sees and in what
 * order, what an adapter without the listing methods is told, what each way of ending sessions does
 * to the tokens from before the store, and who counts as signed in to the list. The routes and
 * server-side functions over every store: test/sessions/contract.ts and revocation.test.ts.
 */
import { describe, expect, it } from '@jest/globals'
import request from 'supertest'
import { InvalidConfigurationError, type AdapterSession, type PortcullisConfig } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import { assertSessionsListable, listOwnSessions, revokeOwnSessions, type RevokedBy } from '../../src/session/devices.js'
import type { SessionRequest } from '../../src/session/types.js'
import { authApp } from '../support/app-rig.js'
import { fetchCsrfToken, SECRET, setCookie } from '../support/flow.js'
import { silentLogger } from '../support/oauth-app.js'

const NOW = 1_800_000_000
const HOUR = 3_600_000
const at = (ms: number) => new Date(NOW * 1000 + ms)

function requestFor(options: Partial<PortcullisConfig>): SessionRequest {
  const config = resolveConfig({ secret: SECRET, logger: silentLogger, providers: [], ...options }, FEATURES)
  return { config, cookieSet: config.cookieSets.insecure, requestCookies: {}, now: NOW }
}

/** A database-session adapter (as an app may write its own) whose user has `rows`. */
function adapterWith(rows: AdapterSession[], listing = true) {
  const adapter = {
    createSession: async (session: AdapterSession) => session,
    getSessionAndUser: async () => null,
    updateSession: async () => null,
    deleteSession: async () => null,
  }
  return listing ? { ...adapter, listSessionsByUserId: async () => rows, deleteSessionsByUserId: async () => [] } : adapter
}

const row = (id: string | undefined, fields: Partial<AdapterSession> = {}): AdapterSession => ({ ...(id === undefined ? {} : { id }), sessionToken: `token-${id}`, userId: 'alice', expires: at(HOUR), ...fields })

describe('listOwnSessions with database sessions', () => {
  it('lists the unexpired rows that have an id: this one first, then the most recently seen, those never seen last', async () => {
    const rows = [
      row('never-seen', { lastSeenAt: null }),
      row('current', { lastSeenAt: at(-5 * HOUR) }),
      row('expiring-now', { expires: at(0), lastSeenAt: at(-1000) }),
      row(undefined, { lastSeenAt: at(-1000) }),
      row('seen-earlier', { lastSeenAt: at(-2 * HOUR) }),
      row('seen-lately', { lastSeenAt: at(-HOUR) }),
    ]
    // In both orders: however the sort pairs the rows, a row never seen goes last.
    for (const given of [rows, [...rows].reverse()]) {
      const listed = await listOwnSessions(requestFor({ adapter: adapterWith(given) }), { userId: 'alice', sessionId: 'current' })
      expect(listed.map((session) => [session.id, session.current])).toEqual([
        ['current', true],
        ['seen-lately', false],
        ['seen-earlier', false],
        ['never-seen', false],
      ])
    }
  })

  it('tells an app whose adapter cannot list or end a user’s sessions which method it lacks', async () => {
    const request = requestFor({ adapter: adapterWith([], false) })
    const owner = { userId: 'alice', sessionId: 'current' }
    const refusal = (method: string) => new InvalidConfigurationError(`Listing and ending sessions needs an adapter with ${method}(); KnexAdapter has it.`)
    await expect(listOwnSessions(request, owner)).rejects.toThrow(refusal('listSessionsByUserId'))
    await expect(revokeOwnSessions(request, owner, {}, 'revokeOtherSessions')).rejects.toThrow(refusal('deleteSessionsByUserId'))
  })
})

describe('revokeOwnSessions with JWT sessions', () => {
  /** The "valid after" time (ms) the store holds for alice after she ends her sessions `which` way. */
  async function validAfterOnceEnded(which: { only: string } | { except?: string }, by: RevokedBy, everyToken?: boolean): Promise<number> {
    const request = requestFor({ session: { strategy: 'jwt', store: 'memory' }, jwt: { maxAge: 2 } })
    const store = request.config.session.store!
    await revokeOwnSessions(request, { userId: 'alice', sessionId: 'current' }, which, by, everyToken === undefined ? undefined : { everyToken })
    // Remembered for jwt.maxAge (2 s here): the tokens it refuses cannot outlive it.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const [state] = await store.sessionStates([{ id: undefined, userId: 'alice' }])
    return state!.validAfter
  }

  it('refuses the user’s tokens from before the store when asked to end every token (everywhere, a password reset, or every one but this: a password change)', async () => {
    expect(await validAfterOnceEnded({}, 'signOutEverywhere', true)).toBe(NOW * 1000 + 1000)
    expect(await validAfterOnceEnded({}, 'resetPassword', true)).toBe(NOW * 1000 + 1000)
    expect(await validAfterOnceEnded({ except: 'current' }, 'changePassword', true)).toBe(NOW * 1000 + 1000)
    // Ending one session, or the others, leaves them (by default).
    expect(await validAfterOnceEnded({ only: 'other' }, 'revokeSession')).toBe(0)
    expect(await validAfterOnceEnded({ except: 'current' }, 'revokeOtherSessions', false)).toBe(0)
  })
})

describe('assertSessionsListable', () => {
  it('refuses JWT sessions without a store, whoever asks', () => {
    expect(() => assertSessionsListable(requestFor({ session: { strategy: 'jwt' } }).config)).toThrow(/needs session\.store/)
    assertSessionsListable(requestFor({ session: { strategy: 'jwt', store: 'memory' } }).config)
    assertSessionsListable(requestFor({ adapter: adapterWith([]) }).config)
  })
})

describe('who may list sessions', () => {
  it('nobody whose session token names no user (one from before the store, whose jwt callback dropped sub)', async () => {
    const anyone = Credentials({ authorize: async ({ username }) => ({ id: String(username) }) })
    const config = { secret: SECRET, providers: [anyone], logger: silentLogger }
    const before = authApp({ ...config, callbacks: { jwt: ({ token }) => ({ ...token, sub: undefined }) } })
    const agent = request.agent(before.app)
    const csrfToken = await fetchCsrfToken(agent)
    const signIn = await agent.post('/api/auth/callback/credentials').type('form').send({ csrfToken, username: 'ada', password: 'x' }).expect(302)
    const cookie = setCookie(signIn, 'authjs.session-token')!.split(';')[0]!
    const withStore = authApp({ ...config, session: { strategy: 'jwt', store: 'memory' } })
    await request(withStore.app).get('/api/auth/sessions/list').set('Cookie', cookie).expect(401)
  })
})
