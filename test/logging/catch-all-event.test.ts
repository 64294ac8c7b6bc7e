/**
 * The catch-all `'*'` event handler: every event but `session`, after its own handler, with the
 * message and its identifiers; one that throws is logged and the flow goes on.
 */
import { afterAll, describe, expect, it } from '@jest/globals'
import type { AnyEvent, EventsOptions } from 'portcullis'
import { recordingLogger } from '../support/logger.js'
import { closeAll, getCsrf, me, signIn, startApp, USER } from '../support/security-app.js'

afterAll(closeAll)

async function signOut(app: Awaited<ReturnType<typeof startApp>>, sessionCookie: string): Promise<void> {
  const csrf = await getCsrf(app)
  await app.http.post('/api/auth/signout').set('Cookie', `${csrf.cookie}; ${sessionCookie}`).type('form').send({ csrfToken: csrf.token })
}

describe("events: '*'", () => {
  it('gets each event but session, after its own handler, with its identifiers', async () => {
    const calls: string[] = []
    const seen: AnyEvent[] = []
    const events: EventsOptions = {
      signIn: () => void calls.push('signIn'),
      session: () => void calls.push('session'),
      '*': (...event) => {
        calls.push(`* ${event[0]}`)
        seen.push(event)
      },
    }
    const app = await startApp({ config: { events } })
    const { sessionCookie } = await signIn(app)
    await me(app, sessionCookie).expect(200)
    await signOut(app, sessionCookie)
    expect(calls).toEqual(['signIn', '* signIn', 'session', '* signOut'])
    const [signInEvent, signOutEvent] = seen
    expect(signInEvent?.[2]).toEqual({ userId: USER.id, provider: 'credentials', isNewUser: false })
    if (signInEvent?.[0] !== 'signIn') throw new Error('the first event is not signIn')
    // The message is the named handler's, typed by the name.
    expect(signInEvent[1].user.id).toBe(USER.id)
    expect(signOutEvent?.[0]).toBe('signOut')
    expect(signOutEvent?.[2]).toEqual({ userId: USER.id })
  })

  it('is logged as EventError when it throws, and the sign-in goes ahead', async () => {
    const logger = recordingLogger()
    const app = await startApp({
      config: {
        logger,
        events: {
          '*': () => {
            throw new Error('the queue is down')
          },
        },
      },
    })
    const { sessionCookie } = await signIn(app)
    await me(app, sessionCookie).expect(200)
    const line = logger.lines.find((entry) => entry.code === 'EventError')
    expect(line?.message).toEqual(["The '*' event handler (on signIn) threw; the signIn went ahead.", 'Error: the queue is down'])
  })
})
