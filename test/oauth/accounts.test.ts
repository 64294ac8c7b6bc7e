/**
 * Users and accounts of OAuth sign-ins (spec §5.6), with the Knex adapter on real databases: the
 * linking rules, the signIn callback, the events (each exactly once where it applies), the jwt
 * callback's signUp trigger, pages.newUser, and a race-free first sign-in under 20 concurrent
 * callbacks on SQLite and PostgreSQL.
 */
import { describe, expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import type { Adapter, AdapterAccount, EventsOptions, JWTCallbackParams, PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import OIDC from 'portcullis/providers/oidc'
import { Browser, type Navigation } from '../support/browser.js'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { finishSignIn, mountApp, redirectOf, sessionOf, signInWith, startSignIn } from '../support/oauth-app.js'
import { useOAuthRig } from '../support/oauth-rig.js'
import { recordingLogger } from '../support/logger.js'
import { barrier } from '../support/barrier.js'

const rig = useOAuthRig((app) => [{ client_id: 'corp', client_secret: 'corp-secret', redirect_uris: [app.callbackUrl('corp')] }])

const corp = (overrides: Partial<Parameters<typeof OIDC>[0]> = {}) =>
  OIDC({ id: 'corp', name: 'Corp', issuer: rig.idp.issuer, clientId: 'corp', clientSecret: 'corp-secret', dangerouslyAllowInsecureRequests: true, ...overrides })

type EventName = keyof EventsOptions

/** Records every event and jwt callback call. */
function recorder() {
  const events: { name: EventName; message: Record<string, unknown> }[] = []
  const jwtCalls: JWTCallbackParams[] = []
  const on = (name: EventName) => (message: unknown) => void events.push({ name, message: message as Record<string, unknown> })
  const config: Partial<PortcullisConfig> = {
    events: { signIn: on('signIn'), createUser: on('createUser'), linkAccount: on('linkAccount'), updateUser: on('updateUser') },
    callbacks: {
      jwt: (params) => {
        if (params.trigger) jwtCalls.push(params)
        return params.token
      },
    },
  }
  const count = (name: EventName) => events.filter((event) => event.name === name).length
  return { events, jwtCalls, config, count }
}

async function rows(knex: Knex) {
  return {
    users: await knex('User').select('id', 'name', 'email').orderBy('email'),
    accounts: await knex('Account').select('userId', 'provider', 'providerAccountId'),
  }
}

/** A fresh CSRF token for `browser`. */
async function csrfTokenOf(browser: Browser): Promise<string> {
  return ((await (await browser.request(`${rig.app.url}/api/auth/csrf`)).json()) as { csrfToken: string }).csrfToken
}

/** Signs `browser` in with the credentials provider, posting `fields`. */
async function signInWithCredentials(browser: Browser, fields: Record<string, string> = {}): Promise<void> {
  await browser.request(`${rig.app.url}/api/auth/callback/credentials`, { body: new URLSearchParams({ csrfToken: await csrfTokenOf(browser), ...fields }) })
}

/** `count` browsers through the IdP as `login` one after another, then all their callbacks at once. */
async function concurrentFirstSignIns(login: string, count = 20) {
  const browsers = Array.from({ length: count }, () => new Browser())
  const navigations: Navigation[] = []
  for (const browser of browsers) navigations.push(await browser.authorize(await startSignIn(browser, rig.app.url, 'corp'), login))
  const responses = await Promise.all(browsers.map((browser, i) => finishSignIn(browser, navigations[i]!)))
  return { browsers, responses }
}

function accountSuites(kind: DatabaseKind, label: string) {
  return describeWithDatabase(kind, `OAuth users and accounts on ${label}`, (server) => {
    const database = migratedDatabase(server)

    it('survives 20 concurrent first sign-ins of the same new account: one user, one account, all signed in as that user', async () => {
      const { config, count, events } = recorder()
      mountApp(rig.app, { providers: [corp()], adapter: KnexAdapter(database.knex), ...config })
      const { browsers, responses } = await concurrentFirstSignIns('race')

      expect(responses.map((response) => redirectOf(response).url.href)).toEqual(Array(20).fill(`${rig.app.url}/`))
      const { users, accounts } = await rows(database.knex)
      expect(users).toEqual([{ id: expect.any(String), name: 'Race Example', email: 'race@example.com' }])
      expect(accounts).toEqual([{ userId: users[0]!.id, provider: 'corp', providerAccountId: 'race' }])
      const sessions = await Promise.all(browsers.map((browser) => sessionOf(browser, rig.app.url)))
      expect(sessions.map((session) => session?.user?.id)).toEqual(Array(20).fill(users[0]!.id))
      expect(await database.knex('Session').where({ userId: users[0]!.id }).count({ n: '*' })).toEqual([{ n: kind === 'postgres' ? '20' : 20 }])
      expect({ createUser: count('createUser'), linkAccount: count('linkAccount'), signIn: count('signIn') }).toEqual({ createUser: 1, linkAccount: 1, signIn: 20 })
      // Only the winner made the user: every loser's sign-in, however it found the winner's user, is not a new user's.
      expect(events.filter((event) => event.name === 'signIn').map((event) => event.message.isNewUser).sort()).toEqual([...Array(19).fill(false), true])
    })

    it('survives the race without an e-mail address too: the losers delete the users they created', async () => {
      const { config, events } = recorder()
      mountApp(rig.app, { providers: [corp({ profile: (profile) => ({ id: String(profile.sub), name: String(profile.name), email: null }) })], adapter: KnexAdapter(database.knex), ...config })
      const { responses } = await concurrentFirstSignIns('noemail')
      expect(responses.map((response) => redirectOf(response).error)).toEqual(Array(20).fill(null))
      const { users, accounts } = await rows(database.knex)
      expect(users).toEqual([{ id: expect.any(String), name: 'Noemail Example', email: null }])
      expect(accounts).toEqual([{ userId: users[0]!.id, provider: 'corp', providerAccountId: 'noemail' }])
      // The losers created a user and lost at linkAccount: they sign in as the winner's, not as new users.
      expect(events.filter((event) => event.name === 'signIn').map((event) => event.message.isNewUser).sort()).toEqual([...Array(19).fill(false), true])
    })

    // 1 s: a database server so loaded that twenty callbacks queued on its pool took that long (CI).
    it.each([60, 1000])('a second callback that comes while the first is between createUser and linkAccount (for %i ms) waits for it: one user, both signed in as it', async (linkDelay) => {
      const adapter = KnexAdapter(database.knex)
      let created!: () => void
      const firstCreated = new Promise<void>((resolve) => (created = resolve))
      const slowLink = {
        ...adapter,
        createUser: async (user: Parameters<NonNullable<typeof adapter.createUser>>[0]) => {
          const stored = await adapter.createUser!(user)
          created()
          return stored
        },
        // The address is taken from here on, but the account not linked yet for linkDelay ms.
        linkAccount: async (account: Parameters<NonNullable<typeof adapter.linkAccount>>[0]) => {
          await new Promise((resolve) => setTimeout(resolve, linkDelay))
          return adapter.linkAccount!(account)
        },
      }
      mountApp(rig.app, { providers: [corp()], adapter: slowLink })
      const [first, second] = [new Browser(), new Browser()]
      const navigations = [await first.authorize(await startSignIn(first, rig.app.url, 'corp'), 'slowpoke'), await second.authorize(await startSignIn(second, rig.app.url, 'corp'), 'slowpoke')]
      const firstDone = finishSignIn(first, navigations[0]!)
      await firstCreated
      const secondResponse = await finishSignIn(second, navigations[1]!)
      expect([redirectOf(await firstDone).error, redirectOf(secondResponse).error]).toEqual([null, null])
      const { users } = await rows(database.knex)
      expect(users).toEqual([{ id: expect.any(String), name: 'Slowpoke Example', email: 'slowpoke@example.com' }])
      expect((await sessionOf(second, rig.app.url))?.user?.id).toBe(users[0]!.id)
    })
  })
}

await accountSuites('sqlite', 'SQLite')
await accountSuites('postgres', 'PostgreSQL')

await describeWithDatabase('sqlite', 'OAuth account linking rules', (server) => {
  const database = migratedDatabase(server)

  it('a new user: createUser and linkAccount once, signIn with isNewUser, jwt trigger signUp, then pages.newUser', async () => {
    const { config, count, events, jwtCalls } = recorder()
    mountApp(rig.app, { providers: [corp()], adapter: KnexAdapter(database.knex), session: { strategy: 'jwt' }, pages: { newUser: '/welcome' }, ...config })
    const browser = new Browser()
    const callback = await signInWith(browser, rig.app.url, 'corp', 'nina', { callbackUrl: '/dashboard' })
    const redirect = redirectOf(callback).url
    expect(redirect.pathname).toBe('/welcome')
    expect(redirect.searchParams.get('callbackUrl')).toBe(`${rig.app.url}/dashboard`)

    const [user] = (await rows(database.knex)).users
    expect({ createUser: count('createUser'), linkAccount: count('linkAccount'), signIn: count('signIn'), updateUser: count('updateUser') }).toEqual({ createUser: 1, linkAccount: 1, signIn: 1, updateUser: 0 })
    expect(events.find((event) => event.name === 'signIn')!.message).toMatchObject({ isNewUser: true, user: { id: user!.id }, profile: { sub: 'nina' } })
    expect(events.find((event) => event.name === 'linkAccount')!.message).toMatchObject({ user: { id: user!.id }, account: { provider: 'corp', providerAccountId: 'nina', userId: user!.id } })
    expect(jwtCalls).toHaveLength(1)
    expect(jwtCalls[0]).toMatchObject({ trigger: 'signUp', isNewUser: true, user: { id: user!.id }, account: { providerAccountId: 'nina' }, profile: { sub: 'nina' } })
    expect((await sessionOf(browser, rig.app.url))?.user?.id).toBe(user!.id)
  })

  it('a returning user: the same user, no createUser or linkAccount, trigger signIn, no newUser page', async () => {
    mountApp(rig.app, { providers: [corp()], adapter: KnexAdapter(database.knex), session: { strategy: 'jwt' }, pages: { newUser: '/welcome' } })
    await signInWith(new Browser(), rig.app.url, 'corp', 'omar')
    const { config, count, jwtCalls } = recorder()
    const adapter = KnexAdapter(database.knex)
    const lookups: string[] = []
    const getUserByEmail = adapter.getUserByEmail!.bind(adapter)
    mountApp(rig.app, {
      providers: [corp()],
      adapter: { ...adapter, getUserByEmail: (email: string) => (lookups.push(email), getUserByEmail(email)) },
      session: { strategy: 'jwt' },
      pages: { newUser: '/welcome' },
      ...config,
    })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, rig.app.url, 'corp', 'omar')).url.pathname).toBe('/')
    // The linked account decides: no search for another user with its address.
    expect(lookups).toEqual([])
    expect({ createUser: count('createUser'), linkAccount: count('linkAccount'), signIn: count('signIn') }).toEqual({ createUser: 0, linkAccount: 0, signIn: 1 })
    expect(jwtCalls[0]).toMatchObject({ trigger: 'signIn', isNewUser: false })
    expect((await rows(database.knex)).users).toHaveLength(1)
  })

  it('refuses a new account whose e-mail belongs to a user who never linked it (compared lower-cased): OAuthAccountNotLinked', async () => {
    const adapter = KnexAdapter(database.knex)
    await adapter.createUser({ name: 'Existing Paula', email: 'paula@example.com', emailVerified: null })
    const { config, count } = recorder()
    const shouting = corp({ profile: (profile) => ({ id: String(profile.sub), email: String(profile.email).toUpperCase(), emailVerified: profile.email_verified === true }) })
    const logger = recordingLogger()
    mountApp(rig.app, { providers: [shouting], adapter, logger, ...config })
    const browser = new Browser()
    const callback = await signInWith(browser, rig.app.url, 'corp', 'paula')
    expect(redirectOf(callback)).toMatchObject({ error: 'OAuthAccountNotLinked' })
    expect(JSON.stringify(logger.lines)).toContain("A user with the corp account's e-mail address exists but has not linked corp")
    expect(await sessionOf(browser, rig.app.url)).toBeNull()
    expect((await rows(database.knex)).accounts).toEqual([])
    expect({ createUser: count('createUser'), linkAccount: count('linkAccount'), signIn: count('signIn') }).toEqual({ createUser: 0, linkAccount: 0, signIn: 0 })
  })

  it('finds the owner of an address stored in mixed case (by the app, before) with an adapter that compares exactly, and refuses the new account as for any owner', async () => {
    const knexAdapter = KnexAdapter(database.knex)
    await knexAdapter.createUser({ name: 'Existing Vera', email: 'Vera@Example.com', emailVerified: null })
    // A hand-written adapter's lookup, letter case and all (the Knex adapter's ignores case).
    const exact = async (email: string) => {
      const row = await database.knex('User').where({ email }).first()
      return row ? knexAdapter.getUser!(row.id) : null
    }
    const adapter = { ...knexAdapter, getUserByEmail: exact }
    const asStored = corp({ profile: (profile) => ({ id: String(profile.sub), email: 'Vera@Example.com', emailVerified: profile.email_verified === true }) })
    mountApp(rig.app, { providers: [asStored], adapter })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, rig.app.url, 'corp', 'vera'))).toMatchObject({ error: 'OAuthAccountNotLinked' })
    expect(await sessionOf(browser, rig.app.url)).toBeNull()
    expect(await rows(database.knex)).toEqual({ users: [{ id: expect.any(String), name: 'Existing Vera', email: 'Vera@Example.com' }], accounts: [] })
  })

  it('links it to that user when the provider sets allowDangerousEmailAccountLinking', async () => {
    const adapter = KnexAdapter(database.knex)
    const existing = await adapter.createUser({ name: 'Existing Quinn', email: 'quinn@example.com', emailVerified: null })
    const { config, count, events } = recorder()
    mountApp(rig.app, { providers: [corp({ allowDangerousEmailAccountLinking: true })], adapter, ...config })
    const browser = new Browser()
    expect(redirectOf(await signInWith(browser, rig.app.url, 'corp', 'quinn')).error).toBeNull()
    expect((await sessionOf(browser, rig.app.url))?.user).toMatchObject({ id: existing.id, name: 'Existing Quinn' })
    expect((await rows(database.knex)).accounts).toEqual([{ userId: existing.id, provider: 'corp', providerAccountId: 'quinn' }])
    expect({ createUser: count('createUser'), linkAccount: count('linkAccount') }).toEqual({ createUser: 0, linkAccount: 1 })
    expect(events.find((event) => event.name === 'signIn')!.message).toMatchObject({ isNewUser: false, user: { id: existing.id } })
  })

  it.each(['jwt', 'database'] as const)('links a new account to the signed-in user, whatever its e-mail (%s sessions)', async (strategy) => {
    const adapter = KnexAdapter(database.knex)
    const ruth = await adapter.createUser({ name: 'Ruth', email: 'ruth@elsewhere.example', emailVerified: null })
    const password = Credentials({ authorize: async ({ password: given }) => (given === 'pw' ? { id: ruth.id, name: ruth.name } : null) })
    const { config, count, events } = recorder()
    mountApp(rig.app, { providers: [password, corp()], adapter, session: { strategy }, ...config })
    const browser = new Browser()
    await signInWithCredentials(browser, { password: 'pw' })
    expect((await sessionOf(browser, rig.app.url))?.user?.id).toBe(ruth.id)

    expect(redirectOf(await signInWith(browser, rig.app.url, 'corp', 'sam')).error).toBeNull()
    expect((await sessionOf(browser, rig.app.url))?.user?.id).toBe(ruth.id)
    expect((await rows(database.knex)).accounts).toEqual([{ userId: ruth.id, provider: 'corp', providerAccountId: 'sam' }])
    expect({ createUser: count('createUser'), linkAccount: count('linkAccount') }).toEqual({ createUser: 0, linkAccount: 1 })
    expect(events.filter((event) => event.name === 'signIn').at(-1)!.message).toMatchObject({ isNewUser: false, user: { id: ruth.id }, account: { provider: 'corp' } })
  })

  /** An attacker with a copy of an ended session's cookie signs in with corp as sam: sam's account goes to a user of its own, not to ruth. */
  async function signInWithCopiedCookie(copied: string, ruthId: string) {
    const attacker = new Browser()
    attacker.setCookie(rig.app.url, 'authjs.session-token', copied)
    expect(await sessionOf(attacker, rig.app.url)).toBeNull()
    attacker.setCookie(rig.app.url, 'authjs.session-token', copied)
    expect(redirectOf(await signInWith(attacker, rig.app.url, 'corp', 'sam')).error).toBeNull()
    const { accounts } = await rows(database.knex)
    expect(accounts).toEqual([{ userId: expect.not.stringMatching(ruthId), provider: 'corp', providerAccountId: 'sam' }])
  }

  it('links nothing to a JWT session that has ended (session.store): a copied cookie cannot attach an account', async () => {
    const adapter = KnexAdapter(database.knex)
    const ruth = await adapter.createUser({ name: 'Ruth', email: 'ruth@elsewhere.example', emailVerified: null })
    const password = Credentials({ authorize: async ({ password: given }) => (given === 'pw' ? { id: ruth.id, name: ruth.name } : null) })
    mountApp(rig.app, { providers: [password, corp()], adapter, session: { strategy: 'jwt', store: 'memory' } })
    const victim = new Browser()
    await signInWithCredentials(victim, { password: 'pw' })
    const copied = victim.cookie(rig.app.url, 'authjs.session-token')!
    await victim.request(`${rig.app.url}/api/auth/signout`, { body: new URLSearchParams({ csrfToken: await csrfTokenOf(victim) }) })

    await signInWithCopiedCookie(copied, ruth.id)
  })

  it("links nothing to a JWT session that the app's jwt callback ended: a copied cookie cannot attach an account", async () => {
    const adapter = KnexAdapter(database.knex)
    const ruth = await adapter.createUser({ name: 'Ruth', email: 'ruth@elsewhere.example', emailVerified: null })
    const password = Credentials({ authorize: async ({ password: given }) => (given === 'pw' ? { id: ruth.id, name: ruth.name } : null) })
    // The app's own revocation: every session of a user it has ended is refused by its jwt callback.
    const ended = new Set<string>()
    const jwt = ({ token, user }: JWTCallbackParams) => (user || !ended.has(String(token.sub)) ? token : null)
    mountApp(rig.app, { providers: [password, corp()], adapter, session: { strategy: 'jwt' }, callbacks: { jwt } })
    const victim = new Browser()
    await signInWithCredentials(victim, { password: 'pw' })
    const copied = victim.cookie(rig.app.url, 'authjs.session-token')!
    ended.add(ruth.id)

    await signInWithCopiedCookie(copied, ruth.id)
  })

  it('refuses an account linked to another user than the signed-in one', async () => {
    const adapter = KnexAdapter(database.knex)
    mountApp(rig.app, { providers: [corp()], adapter, session: { strategy: 'jwt' } })
    await signInWith(new Browser(), rig.app.url, 'corp', 'tara')
    const uma = await adapter.createUser({ name: 'Uma', email: 'uma@example.com', emailVerified: null })
    const password = Credentials({ authorize: async () => ({ id: uma.id, name: uma.name }) })
    const logger = recordingLogger()
    mountApp(rig.app, { providers: [password, corp()], adapter, session: { strategy: 'jwt' }, logger })
    const browser = new Browser()
    await signInWithCredentials(browser)

    expect(redirectOf(await signInWith(browser, rig.app.url, 'corp', 'tara')).error).toBe('OAuthAccountNotLinked')
    // Refused by the rule itself, not by the unique key when linking it again.
    expect(JSON.stringify(logger.lines)).toContain('The corp account is linked to another user than the one signed in; it was not linked again.')
    expect((await sessionOf(browser, rig.app.url))?.user?.id).toBe(uma.id)
    const accounts = (await rows(database.knex)).accounts
    expect(accounts).toHaveLength(1)
    expect(accounts[0]!.userId).not.toBe(uma.id)
  })

  /** `adapter` with its linkAccount calls let go in pairs: both callbacks of a race past their lookups first. */
  function linkingAtOnce<A extends Adapter>(adapter: A): A {
    const arrived = barrier(2)
    return {
      ...adapter,
      linkAccount: async (account: AdapterAccount) => {
        await arrived()
        return adapter.linkAccount!(account)
      },
    }
  }

  /**
   * Two signed-in browsers link the same new account at once: both callbacks find it unlinked, and
   * the adapter lets both `linkAccount` calls go only when both have arrived, so one of them loses
   * on the unique key.
   */
  async function linkAtOnce(adapter: ReturnType<typeof KnexAdapter>, signedIn: [string, string], login: string) {
    const gated = linkingAtOnce(adapter)
    const password = Credentials({ credentials: { id: {} }, authorize: async ({ id }) => ({ id: String(id) }) })
    const { config, count } = recorder()
    const logger = recordingLogger()
    mountApp(rig.app, { providers: [password, corp()], adapter: gated, session: { strategy: 'jwt' }, logger, ...config })
    const browsers = [new Browser(), new Browser()]
    const navigations: Navigation[] = []
    for (const [i, browser] of browsers.entries()) {
      await signInWithCredentials(browser, { id: signedIn[i]! })
      navigations.push(await browser.authorize(await startSignIn(browser, rig.app.url, 'corp'), login))
    }
    const responses = await Promise.all(browsers.map((browser, i) => finishSignIn(browser, navigations[i]!)))
    const sessions = await Promise.all(browsers.map(async (browser) => (await sessionOf(browser, rig.app.url))?.user?.id))
    return { errors: responses.map((response) => redirectOf(response).error), sessions, linkEvents: count('linkAccount'), logger }
  }

  it('two browsers of one user linking the same account at once: both signed in as that user, one account, one linkAccount event', async () => {
    const adapter = KnexAdapter(database.knex)
    const xena = await adapter.createUser({ name: 'Xena', email: 'xena@elsewhere.example', emailVerified: null })
    const { errors, sessions, linkEvents } = await linkAtOnce(adapter, [xena.id, xena.id], 'yuri')
    expect(errors).toEqual([null, null])
    expect(sessions).toEqual([xena.id, xena.id])
    expect((await rows(database.knex)).accounts).toEqual([{ userId: xena.id, provider: 'corp', providerAccountId: 'yuri' }])
    expect(linkEvents).toBe(1)
  })

  it('two users linking the same account at once: the second is refused (linked to another user meanwhile), and keeps its own session', async () => {
    const adapter = KnexAdapter(database.knex)
    const xena = await adapter.createUser({ name: 'Xena', email: 'xena@elsewhere.example', emailVerified: null })
    const zoe = await adapter.createUser({ name: 'Zoe', email: 'zoe@elsewhere.example', emailVerified: null })
    const { errors, sessions, linkEvents, logger } = await linkAtOnce(adapter, [xena.id, zoe.id], 'yuri')
    const { accounts } = await rows(database.knex)
    expect(accounts).toEqual([{ userId: expect.any(String), provider: 'corp', providerAccountId: 'yuri' }])
    const winner = accounts[0]!.userId
    expect([xena.id, zoe.id]).toContain(winner)
    const loser = winner === xena.id ? 1 : 0
    expect(errors[loser]).toBe('OAuthAccountNotLinked')
    expect(errors[1 - loser]).toBeNull()
    expect(JSON.stringify(logger.lines)).toContain('The corp account was linked to another user meanwhile.')
    expect(sessions).toEqual([xena.id, zoe.id])
    expect(linkEvents).toBe(1)
  })

  it("linking to the signed-in user when linkAccount fails for another reason than a race: the adapter's error, not OAuthAccountNotLinked", async () => {
    const adapter = KnexAdapter(database.knex)
    const wren = await adapter.createUser({ name: 'Wren', email: 'wren@elsewhere.example', emailVerified: null })
    const failing = {
      ...adapter,
      linkAccount: async () => {
        throw new Error('Connection terminated unexpectedly')
      },
    }
    const password = Credentials({ authorize: async () => ({ id: wren.id, name: wren.name }) })
    mountApp(rig.app, { providers: [password, corp()], adapter: failing, session: { strategy: 'jwt' }, logger: recordingLogger() })
    const browser = new Browser()
    await signInWithCredentials(browser)
    expect(redirectOf(await signInWith(browser, rig.app.url, 'corp', 'wren')).error).toBe('AdapterError')
    expect((await rows(database.knex)).accounts).toEqual([])
  })

  it('the loser of a first sign-in race keeps the user it created when the adapter has no deleteUser, and says so in the log', async () => {
    const { deleteUser: _none, ...adapter } = KnexAdapter(database.knex)
    const gated = linkingAtOnce(adapter)
    const logger = recordingLogger()
    mountApp(rig.app, { providers: [corp({ profile: (profile) => ({ id: String(profile.sub), name: String(profile.name), email: null }) })], adapter: gated, logger })
    const { responses } = await concurrentFirstSignIns('orphan', 2)
    expect(responses.map((response) => redirectOf(response).error)).toEqual([null, null])
    const { users, accounts } = await rows(database.knex)
    expect(users).toHaveLength(2)
    const loser = users.find((user) => user.id !== accounts[0]!.userId)!
    const warnings = logger.lines.filter((line) => line.level === 'warn' && line.code === 'OrphanUser')
    expect(JSON.stringify(warnings)).toContain(`User ${loser.id} was created by a sign-in that lost a race to link its account; the adapter has no deleteUser, so the row stays.`)
  })

  it('signIn callback: false → AccessDenied, a path → redirect there; no session and no rows either way', async () => {
    const seen: unknown[] = []
    mountApp(rig.app, {
      providers: [corp()],
      adapter: KnexAdapter(database.knex),
      callbacks: {
        signIn: ({ user, account, profile }) => {
          seen.push({ user, account, profile })
          return profile?.sub === 'vera' ? false : '/not-allowed'
        },
      },
    })
    const vera = new Browser()
    const denied = await signInWith(vera, rig.app.url, 'corp', 'vera')
    expect(redirectOf(denied).url.pathname).toBe('/api/auth/error')
    expect(redirectOf(denied).error).toBe('AccessDenied')
    expect(seen[0]).toMatchObject({ user: { id: 'vera', email: 'vera@example.com' }, account: { provider: 'corp', providerAccountId: 'vera' }, profile: { sub: 'vera' } })
    const walt = new Browser()
    expect(redirectOf(await signInWith(walt, rig.app.url, 'corp', 'walt')).url.href).toBe(`${rig.app.url}/not-allowed`)
    expect(await sessionOf(vera, rig.app.url)).toBeNull()
    expect(await sessionOf(walt, rig.app.url)).toBeNull()
    expect(await rows(database.knex)).toEqual({ users: [], accounts: [] })
  })
})
