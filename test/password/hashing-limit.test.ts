/**
 * The cap on concurrent password hashes (the Password provider's `hashingLimit`,
 * src/features/password/limit.ts): at most `concurrency` hashes at once, `queue` more waiting, and
 * past that a refusal at once: a 503 with `Retry-After` from the sign-in, sign-up and reset routes,
 * the same for an address with an account and one without (the dummy hash of an unknown address
 * takes its place under the same cap), and the places given back when the hashes end.
 *
 * Over HTTP, the hashing is held on a gate (FAST_HASHING behind it) so that the cap is full for as
 * long as the test needs, without a clock.
 */
import { describe, expect, it } from '@jest/globals'
import Portcullis from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Password, { PasswordBusyError, type PasswordHashing } from 'portcullis/providers/password'
import { createHashingLimit } from '../../src/features/password/limit.js'
import { describeWithDatabase, migratedDatabase } from '../support/databases.js'
import { useEmailRig } from '../email/email-app.js'
import { SECRET } from '../support/flow.js'
import { Browser, FAST_HASHING, GOOD_PASSWORD, mountPasswordApp, nextLink, post, signIn, signUp, verifiedUser } from './password-app.js'

/** A promise and its resolve. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

/** Waits until `condition` holds, a turn of the event loop at a time (no clock). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('createHashingLimit', () => {
  it('runs `concurrency` tasks at once, queues `queue` more in order, and refuses the next at once', async () => {
    const limit = createHashingLimit({ concurrency: 2, queue: 1 })
    const gates = [deferred(), deferred(), deferred()]
    const started: number[] = []
    const tasks = gates.map((gate, i) => limit.run(async () => (started.push(i), await gate.promise, i)))
    await until(() => started.length === 2)
    expect(started).toEqual([0, 1])
    expect([limit.active, limit.waiting]).toEqual([2, 1])
    const refused = await limit.run(async () => 'never').catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(PasswordBusyError)
    expect((refused as PasswordBusyError).status).toBe(503)
    expect((refused as PasswordBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1)
    expect((refused as PasswordBusyError).headers['Retry-After']).toBe(String((refused as PasswordBusyError).retryAfterSeconds))
    gates[0]!.resolve()
    await until(() => started.length === 3)
    expect(started).toEqual([0, 1, 2])
    gates[1]!.resolve()
    gates[2]!.resolve()
    expect(await Promise.all(tasks)).toEqual([0, 1, 2])
    expect([limit.active, limit.waiting]).toEqual([0, 0])
  })

  it('gives the place back when a task fails', async () => {
    const limit = createHashingLimit({ concurrency: 1, queue: 0 })
    await expect(limit.run(async () => Promise.reject(new Error('out of memory')))).rejects.toThrow('out of memory')
    expect(await limit.run(async () => 'next')).toBe('next')
    expect(limit.active).toBe(0)
  })
})

// The suite's SMTP server and app listener.
const rig = useEmailRig()

await describeWithDatabase('sqlite', 'the cap on concurrent hashes, over HTTP', (server) => {
  const db = migratedDatabase(server)
  const url = () => rig.app.url

  describe('hashingLimit at init', () => {
    const init = (hashingLimit: unknown) => () =>
      Portcullis({ secret: SECRET, adapter: KnexAdapter(db.knex), logger: { error: () => {}, warn: () => {}, debug: () => {} }, providers: [Password({ sendMail: async () => {}, hashingLimit: hashingLimit as never })] })

    it.each([
      [{ concurrency: 0 }, /hashingLimit\.concurrency must be a whole number from 1 to 1024; got 0/],
      [{ concurrency: 1.5 }, /hashingLimit\.concurrency/],
      [{ queue: -1 }, /hashingLimit\.queue must be a whole number from 0 to 100000; got -1/],
      ['4', /hashingLimit must be an object/],
    ])('refuses %j, naming the option', (value, message) => {
      expect(init(value)).toThrow(message)
    })
  })

  /** FAST_HASHING, whose hash and verify wait on `gate` while it is set, counting the ones waiting. */
  function gatedHashing() {
    const state = { gate: undefined as ReturnType<typeof deferred> | undefined, held: 0 }
    const hold = async () => {
      const gate = state.gate
      if (!gate) return
      state.held++
      await gate.promise
      state.held--
    }
    const hashing: PasswordHashing = {
      hash: async (password) => (await hold(), FAST_HASHING.hash(password)),
      verify: async (password, stored) => (await hold(), FAST_HASHING.verify(password, stored)),
      needsRehash: (stored) => FAST_HASHING.needsRehash(stored),
    }
    return { hashing, state }
  }

  /** What an observer sees of an answer: status, Retry-After, the body, the header names. */
  async function observable(response: Response) {
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.text()).replace(/name="csrfToken" value="[^"]*"/g, ''),
      headers: [...response.headers.keys()].filter((name) => name !== 'date' && name !== 'set-cookie').sort(),
    }
  }

  it('answers 503 with Retry-After at once while the cap is full, alike for a user and an unknown address, and signs in again once the place is free', async () => {
    const { hashing, state } = gatedHashing()
    mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { hashing, hashingLimit: { concurrency: 1, queue: 0 } })
    await verifiedUser(new Browser(), url(), rig.smtp, 'member@example.com')

    // One sign-in holds the only place, its verification waiting on the gate.
    state.gate = deferred()
    const holder = signIn(new Browser(), url(), 'member@example.com')
    await until(() => state.held === 1)

    // Answered while the gate is still shut: refused at once, not queued behind it.
    const known = await observable(await signIn(new Browser(), url(), 'member@example.com', 'a wrong password'))
    const unknown = await observable(await signIn(new Browser(), url(), 'nobody@example.com', 'a wrong password'))
    expect(known.status).toBe(503)
    expect(Number(known.retryAfter)).toBeGreaterThanOrEqual(1)
    expect(known.body).toContain('Too many people are signing in right now')
    expect(unknown).toEqual(known)
    expect(state.held).toBe(1)

    // Sign-up and reset show their form again with the 503; a reset link stays usable.
    const signUpAnswer = await signUp(new Browser(), url(), 'newcomer@example.com')
    expect(signUpAnswer.status).toBe(503)
    expect(signUpAnswer.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await signUpAnswer.text()).toContain('Too many people are signing in right now')

    state.gate.resolve()
    state.gate = undefined
    expect((await holder).status).toBe(302)
    expect(state.held).toBe(0)
    const after = await signIn(new Browser(), url(), 'member@example.com')
    expect(after.status).toBe(302)
    expect(after.headers.get('location')).not.toContain('error=')
  })

  it('refuses a reset with 503 before its token is used: the link works once a place is free', async () => {
    const { hashing, state } = gatedHashing()
    mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { hashing, hashingLimit: { concurrency: 1, queue: 0 } })
    await verifiedUser(new Browser(), url(), rig.smtp, 'resetter@example.com')
    await post(new Browser(), url(), 'forgot-password', { email: 'resetter@example.com' })
    const { link } = await nextLink(rig.smtp, 'resetter@example.com')
    const query = new URL(link).searchParams
    const reset = (browser: Browser) => post(browser, url(), 'reset-password', { token: query.get('token')!, email: query.get('email')!, password: 'a brand new passphrase' })

    state.gate = deferred()
    const holder = signIn(new Browser(), url(), 'resetter@example.com')
    await until(() => state.held === 1)
    const refused = await reset(new Browser())
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)

    state.gate.resolve()
    state.gate = undefined
    await holder
    const done = await reset(new Browser())
    expect(done.status).toBe(302)
    expect(done.headers.get('location')).not.toContain('error=')
    expect((await signIn(new Browser(), url(), 'resetter@example.com', 'a brand new passphrase')).status).toBe(302)
    expect((await signIn(new Browser(), url(), 'resetter@example.com', GOOD_PASSWORD)).headers.get('location')).toContain('error=CredentialsSignin')
  })

  it('queues up to `queue` sign-ins behind the running ones, then refuses', async () => {
    const { hashing, state } = gatedHashing()
    mountPasswordApp(rig.app, db.knex, rig.smtp, {}, { hashing, hashingLimit: { concurrency: 1, queue: 1 } })
    await verifiedUser(new Browser(), url(), rig.smtp, 'queued@example.com')
    state.gate = deferred()
    const first = signIn(new Browser(), url(), 'queued@example.com')
    await until(() => state.held === 1)
    const second = signIn(new Browser(), url(), 'nobody@example.com', 'a wrong password')
    // The second waits for the place (its hash not started); a third finds the queue full.
    let third: Response | undefined
    while (third === undefined || third.status !== 503) {
      third = await signIn(new Browser(), url(), 'queued@example.com', 'a wrong password')
      expect(state.held).toBe(1)
    }
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/)
    state.gate.resolve()
    state.gate = undefined
    expect((await first).status).toBe(302)
    expect((await second).headers.get('location')).toContain('error=CredentialsSignin')
  })
})
