/**
 * The credentials callback's edges, each of which a careless change could turn into a sign-in:
 * what `authorize()` may return or throw, the `signIn` callback's redirect, the `signIn` event, the
 * route's method, and database sessions (`authorize()` must return a stored user there).
 */
import express from 'express'
import request from 'supertest'
import { describe, expect, it } from '@jest/globals'
import { CredentialsSignin, type PortcullisConfig, type User } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import { authApp } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { SECRET, setCookie, signInWithPassword } from '../support/flow.js'
import { recordingLogger } from '../support/logger.js'

/** An app whose credentials provider's authorize() is `authorize`, with its log and its signIn events. */
function appWith(authorize: (fields: Record<string, unknown>) => unknown, config: Partial<PortcullisConfig> = {}) {
  const logger = recordingLogger()
  const signIns: { user: User; isNewUser: boolean | undefined }[] = []
  const provider = Credentials({ credentials: { username: {}, password: { type: 'password' } }, authorize: async (fields) => authorize(fields) as never })
  const { app } = authApp({ secret: SECRET, providers: [provider], logger, events: { signIn: ({ user, isNewUser }) => void signIns.push({ user, isNewUser }) }, ...config }, express)
  return { agent: request.agent(app), logger, signIns }
}

const locationOf = (response: { headers: Record<string, string> }) => new URL(response.headers.location!, 'http://x')

describe('what authorize() returns', () => {
  it.each([
    ['a string', 'ada'],
    ['true', true],
    ['a number', 1],
  ])('%s is no user: CredentialsSignin, and no session', async (_name, returned) => {
    const { agent } = appWith(() => returned)
    const response = await signInWithPassword(agent)
    expect(Object.fromEntries(locationOf(response).searchParams)).toEqual({ error: 'CredentialsSignin', code: 'credentials' })
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
  })

  it('a user without an id, or with id null, gets a random one; a falsy id such as 0 is kept, as a string', async () => {
    const ids: string[] = []
    for (const user of [{ name: 'No Id' }, { id: null, name: 'Null Id' }, { id: 0, name: 'Zero' }, { id: 'user-7', name: 'Seven' }]) {
      const { agent, signIns } = appWith(() => user)
      expect(setCookie(await signInWithPassword(agent), 'authjs.session-token')).toBeDefined()
      ids.push(signIns[0]!.user.id as string)
    }
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(ids[1]).toMatch(/^[0-9a-f]{8}-/)
    expect(ids[0]).not.toBe(ids[1])
    expect(ids.slice(2)).toEqual(['0', 'user-7'])
  })

  it("is given the form's own fields, without Portcullis's (csrfToken, callbackUrl, redirect, redirectTo)", async () => {
    const received: Record<string, unknown>[] = []
    const { agent } = appWith((fields) => (received.push(fields), { id: 'ada' }))
    // What Auth.js's client posts for signIn('credentials', { redirect: false, redirectTo: '/after', ... }).
    const fields = { username: 'ada', password: 'lovelace', callbackUrl: '/after', redirect: 'false', redirectTo: '/after', remember: 'on' }
    expect(setCookie(await signInWithPassword(agent, fields), 'authjs.session-token')).toBeDefined()
    expect(received).toEqual([{ username: 'ada', password: 'lovelace', remember: 'on' }])
  })
})

describe('what authorize() throws', () => {
  it("an AuthError goes through as it is: the app's CredentialsSignin with its own code", async () => {
    class AccountLocked extends CredentialsSignin {
      override code = 'locked'
    }
    const { agent } = appWith(() => {
      throw new AccountLocked()
    })
    const response = await signInWithPassword(agent)
    expect(Object.fromEntries(locationOf(response).searchParams)).toEqual({ error: 'CredentialsSignin', code: 'locked' })
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
  })

  it.each([
    // A database driver's error: the statement's values in its message and in `bindings`.
    ['a database error', (fields: Record<string, unknown>) => Object.assign(new Error(`insert into audit values ('${String(fields.username)}', '${String(fields.password)}') failed`), { sql: 'insert into audit values (?, ?)', bindings: [fields.username, fields.password] })],
    // The app's own: only the message holds them.
    ['an error of the app', (fields: Record<string, unknown>) => new Error(`no account ${String(fields.username)} with password ${String(fields.password)}`)],
  ])("any other error (%s) is the server's: the error page, and a log line naming the provider without the submitted fields", async (_name, failure) => {
    const { agent, logger } = appWith((fields) => {
      throw failure(fields)
    })
    const response = await signInWithPassword(agent, { username: 'ada@example.com', password: 'hunter2-secret' })
    const location = locationOf(response)
    expect(location.pathname).toBe('/api/auth/error')
    expect(location.searchParams.get('error')).toBe('Configuration')
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
    const logged = JSON.stringify(logger.lines)
    expect(logged).toContain('authorize() of the \\"credentials\\" provider threw')
    expect(logged).not.toContain('hunter2-secret')
    expect(logged).not.toContain('ada@example.com')
  })
})

describe('the signIn callback and event', () => {
  it('a path from the signIn callback is where the browser goes, without a session', async () => {
    const { agent } = appWith(() => ({ id: 'user-1' }), { callbacks: { signIn: () => '/onboarding' } })
    const response = await signInWithPassword(agent)
    expect(response.status).toBe(302)
    expect(locationOf(response).pathname).toBe('/onboarding')
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
  })

  it('the signIn event says the user is not new (a credentials sign-in never creates one)', async () => {
    const { agent, signIns } = appWith(() => ({ id: 'user-1' }))
    await signInWithPassword(agent)
    expect(signIns).toEqual([{ user: expect.objectContaining({ id: 'user-1' }), isNewUser: false }])
  })
})

describe('the route', () => {
  it('takes only a POST: a GET of /callback/credentials is an unknown action, and signs nobody in', async () => {
    const { agent } = appWith(() => ({ id: 'user-1' }))
    const response = await agent.get('/api/auth/callback/credentials?username=ada&password=lovelace').set('Accept', 'application/json')
    expect(response.status).toBe(400)
    expect(response.body).toEqual({ error: 'UnknownAction', message: 'The credentials callback takes a POST of the sign-in form.' })
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
  })
})

await describeWithDatabase('sqlite', 'credentials with database sessions', (server) => {
  const db = migratedDatabase(server)

  it('starts a session row for the stored user authorize() returns', async () => {
    const adapter = KnexAdapter(db.knex)
    const stored = await adapter.createUser({ email: 'ada@example.com', emailVerified: null, name: 'Ada' })
    const { agent } = appWith(() => ({ id: stored.id, name: 'Ada' }), { adapter, session: { strategy: 'database' } })
    expect(setCookie(await signInWithPassword(agent), 'authjs.session-token')).toBeDefined()
    expect(await db.knex('Session').where({ userId: stored.id }).count({ n: '*' })).toEqual([{ n: 1 }])
  })

  it('refuses a user authorize() made up (not in the database): no session, no row, and a log line saying what to return', async () => {
    const adapter = KnexAdapter(db.knex)
    const { agent, logger } = appWith(() => ({ id: 'not-stored', name: 'Ghost' }), { adapter, session: { strategy: 'database' } })
    const response = await signInWithPassword(agent)
    expect(locationOf(response).searchParams.get('error')).toBe('Configuration')
    expect(setCookie(response, 'authjs.session-token')).toBeUndefined()
    expect(await db.knex('Session').count({ n: '*' })).toEqual([{ n: 0 }])
    expect(JSON.stringify(logger.lines)).toContain('returned a user (id \\"not-stored\\") that is not in the database')
    expect(JSON.stringify(logger.lines)).toContain('With database sessions, return the stored user')
  })
})
