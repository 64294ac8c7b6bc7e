/**
 * The adapter conformance suite: what Portcullis relies on from any `Adapter`, written against the
 * interface only, so every adapter (and every database under one) runs the same checks.
 *
 * @example
 * ```ts
 * runAdapterConformance('MyAdapter', async () => {
 *   const db = await openDatabase()
 *   return { adapter: MyAdapter(db), teardown: () => db.close() }
 * })
 * ```
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Adapter, AdapterAccount, AdapterAuthenticator, AdapterSession, AdapterUser, NewAdapterAccount, VerificationToken } from 'portcullis'
import { describeTwoFactorConformance } from './conformance-two-factor.js'

/** What a suite runs against: the adapter, on an empty store that the suite may fill. */
export interface ConformanceSubject {
  adapter: Adapter
  /**
   * The same store through an adapter that keeps the app's own user fields `role` and `plan` (with
   * the `userFields` capability), and the debug lines it has written so far.
   */
  withUserFields?: { adapter: Adapter; debugLines: readonly string[] }
  /** Called once after the suite. */
  teardown(): Promise<void>
}

/** What an adapter offers beyond the methods every one must have; each adds its tests. */
export interface ConformanceCapabilities {
  /** Auth.js's WebAuthn methods: `getAccount` and the four authenticator methods. */
  authenticators?: boolean
  /** The app's own user fields (`withUserFields` in the subject). */
  userFields?: boolean
  /** Beyond Auth.js's set, for passkeys: `deleteAuthenticator`, and the counter's compare-and-set (`updateAuthenticatorCounter`'s `expect`). */
  authenticatorExtras?: boolean
  /** The second factor's seven methods (`getTwoFactor` ... `deleteTwoFactor`), and `deleteUser` deleting what they store. */
  twoFactor?: boolean
}

const AUTHENTICATOR_METHODS = ['getAccount', 'createAuthenticator', 'getAuthenticator', 'listAuthenticatorsByUserId', 'updateAuthenticatorCounter'] as const
const TWO_FACTOR_METHODS = ['getTwoFactor', 'startTwoFactor', 'enableTwoFactor', 'useTwoFactorStep', 'useRecoveryCode', 'setRecoveryCodes', 'deleteTwoFactor'] as const

const METHODS = [
  'createUser',
  'getUser',
  'getUserByEmail',
  'getUserByAccount',
  'updateUser',
  'deleteUser',
  'linkAccount',
  'unlinkAccount',
  'getAccountsByUserId',
  'updateAccount',
  'createSession',
  'getSessionAndUser',
  'updateSession',
  'deleteSession',
  'createVerificationToken',
  'useVerificationToken',
] as const

/** An adapter with every method, as the suite needs it. */
type FullAdapter = Required<Adapter>

/** Dates with milliseconds, one after 2038 (where a 32-bit `timestamp` column ends). */
const DATE_WITH_MS = new Date('2031-05-06T07:08:09.123Z')
const DATE_AFTER_2038 = new Date('2061-12-31T23:59:58.987Z')
/**
 * 01:30 EST on 2031-11-02: the second 01:30 of that night in America/New_York. A store that keeps
 * local wall-clock time without its offset reads it back as 01:30 EDT, an hour early.
 */
const DATE_IN_DST_FOLD = new Date('2031-11-02T06:30:00.456Z')
const DAY = 24 * 3600 * 1000

/** A value no other test uses. */
const unique = (prefix: string) => `${prefix}-${randomUUID()}`
/** `length` characters of base64url, as JWTs and opaque tokens are made of. */
const tokenText = (length: number) => randomBytes(length).toString('base64url').slice(0, length)

/**
 * Declares the conformance suite for one adapter.
 *
 * @param name The suite's title, e.g. `KnexAdapter on PostgreSQL (snake_case names)`.
 * @param setup Runs once before the suite; returns the adapter on an empty store.
 * @param capabilities Optional features the adapter has, whose tests to run too.
 */
export function runAdapterConformance(name: string, setup: () => Promise<ConformanceSubject>, capabilities: ConformanceCapabilities = {}): void {
  describe(name, () => {
    let subject: ConformanceSubject | undefined
    let adapter: FullAdapter

    beforeAll(async () => {
      subject = await setup()
      adapter = subject.adapter as FullAdapter
    })
    afterAll(async () => {
      await subject?.teardown()
    })

    /** A user with an e-mail address of its own. */
    const createUser = (fields: Partial<AdapterUser> = {}) =>
      adapter.createUser({ name: 'Ada Lovelace', email: `${unique('ada')}@example.com`, image: 'https://example.com/ada.png', ...fields })
    const accountOf = (userId: string, fields: Partial<NewAdapterAccount> = {}): NewAdapterAccount => ({
      userId,
      type: 'oidc',
      provider: 'example',
      providerAccountId: unique('sub'),
      ...fields,
    })
    const sessionOf = (userId: string, fields: Partial<AdapterSession> = {}): AdapterSession => ({
      sessionToken: tokenText(64),
      userId,
      expires: new Date(Date.now() + 30 * DAY),
      ...fields,
    })
    const tokenOf = (expires = new Date(Date.now() + DAY)): VerificationToken => ({
      identifier: `${unique('ada')}@example.com`,
      token: tokenText(64),
      expires,
    })

    it('implements every Adapter method', () => {
      const methods = [...METHODS, ...(capabilities.authenticators ? AUTHENTICATOR_METHODS : []), ...(capabilities.twoFactor ? TWO_FACTOR_METHODS : [])]
      for (const method of methods) expect([method, typeof subject?.adapter[method]]).toEqual([method, 'function'])
    })

    if (capabilities.authenticators) {
      /** A credential of `userId`, linked as Auth.js links one: a `webauthn` account whose id is the credential's. */
      const authenticatorOf = async (userId: string, fields: Partial<AdapterAuthenticator> = {}): Promise<AdapterAuthenticator> => {
        const credentialID = fields.credentialID ?? tokenText(43)
        await adapter.linkAccount({ userId, type: 'webauthn' as never, provider: 'webauthn', providerAccountId: credentialID })
        return {
          credentialID,
          userId,
          providerAccountId: credentialID,
          credentialPublicKey: tokenText(120),
          counter: 0,
          credentialDeviceType: 'multiDevice',
          credentialBackedUp: true,
          transports: 'internal,hybrid',
          ...fields,
        }
      }

      describe('WebAuthn (Auth.js’s authenticator methods)', () => {
        it('getAccount(providerAccountId, provider) returns the account, null when either differs', async () => {
          const user = await createUser()
          const account = accountOf(user.id, { access_token: 'a1' })
          const linked = await adapter.linkAccount(account)
          expect(await adapter.getAccount(account.providerAccountId, account.provider)).toEqual(linked)
          expect(await adapter.getAccount(account.providerAccountId, 'other')).toBeNull()
          expect(await adapter.getAccount(unique('sub'), account.provider)).toBeNull()
          // Auth.js's order is (providerAccountId, provider): the swapped call finds nothing.
          expect(await adapter.getAccount(account.provider, account.providerAccountId)).toBeNull()
        })

        it('createAuthenticator returns the credential; getAuthenticator reads it back with a number counter and a boolean backed-up flag', async () => {
          const user = await createUser()
          const authenticator = await authenticatorOf(user.id, { counter: 7, credentialBackedUp: false, credentialDeviceType: 'singleDevice' })
          expect(await adapter.createAuthenticator(authenticator)).toEqual(authenticator)
          const read = await adapter.getAuthenticator(authenticator.credentialID)
          expect(read).toEqual(authenticator)
          expect(typeof read?.counter).toBe('number')
          expect(read?.credentialBackedUp).toBe(false)
          const backedUp = await authenticatorOf(user.id, { credentialBackedUp: true })
          await adapter.createAuthenticator(backedUp)
          expect((await adapter.getAuthenticator(backedUp.credentialID))?.credentialBackedUp).toBe(true)
        })

        it('createAuthenticator stores absent transports as null', async () => {
          const user = await createUser()
          const { transports: _transports, ...authenticator } = await authenticatorOf(user.id)
          expect(await adapter.createAuthenticator(authenticator)).toEqual({ ...authenticator, transports: null })
          expect(await adapter.getAuthenticator(authenticator.credentialID)).toEqual({ ...authenticator, transports: null })
        })

        it('getAuthenticator returns null for an unknown credential, and for one that differs only in letter case', async () => {
          const user = await createUser()
          const authenticator = await authenticatorOf(user.id, { credentialID: `${tokenText(40)}aBc` })
          await adapter.createAuthenticator(authenticator)
          expect(await adapter.getAuthenticator(tokenText(43))).toBeNull()
          expect(await adapter.getAuthenticator(authenticator.credentialID.toUpperCase())).toBeNull()
          expect(await adapter.getAuthenticator(authenticator.credentialID.toLowerCase())).toBeNull()
        })

        it('rejects a second credential with the same credentialID, even for another user', async () => {
          const user = await createUser()
          const other = await createUser()
          const authenticator = await authenticatorOf(user.id)
          await adapter.createAuthenticator(authenticator)
          await expectUniqueViolation(adapter.createAuthenticator({ ...authenticator, userId: other.id }))
          expect((await adapter.getAuthenticator(authenticator.credentialID))?.userId).toBe(user.id)
        })

        it('listAuthenticatorsByUserId lists the user’s credentials and no one else’s; [] for an unknown user', async () => {
          const user = await createUser()
          const other = await createUser()
          const mine = [await authenticatorOf(user.id), await authenticatorOf(user.id, { transports: 'usb' })]
          for (const authenticator of mine) await adapter.createAuthenticator(authenticator)
          await adapter.createAuthenticator(await authenticatorOf(other.id))

          const byId = (a: AdapterAuthenticator, b: AdapterAuthenticator) => a.credentialID.localeCompare(b.credentialID)
          expect((await adapter.listAuthenticatorsByUserId(user.id)).sort(byId)).toEqual([...mine].sort(byId))
          expect(await adapter.listAuthenticatorsByUserId(unique('unknown'))).toEqual([])
        })

        it('updateAuthenticatorCounter stores the new counter (up to 2^32 - 1) and returns the credential', async () => {
          const user = await createUser()
          const authenticator = await authenticatorOf(user.id, { counter: 5 })
          await adapter.createAuthenticator(authenticator)
          expect(await adapter.updateAuthenticatorCounter(authenticator.credentialID, 6)).toEqual({ ...authenticator, counter: 6 })
          expect(await adapter.updateAuthenticatorCounter(authenticator.credentialID, 4_294_967_295)).toEqual({ ...authenticator, counter: 4_294_967_295 })
          expect((await adapter.getAuthenticator(authenticator.credentialID))?.counter).toBe(4_294_967_295)
        })

        it('updateAuthenticatorCounter rejects an unknown credential (Auth.js’s contract), and changes no other', async () => {
          const user = await createUser()
          const authenticator = await authenticatorOf(user.id, { counter: 3 })
          await adapter.createAuthenticator(authenticator)
          let rejected = false
          try {
            await adapter.updateAuthenticatorCounter(tokenText(43), 9)
          } catch {
            rejected = true
          }
          expect(rejected).toBe(true)
          expect((await adapter.getAuthenticator(authenticator.credentialID))?.counter).toBe(3)
        })

        if (capabilities.authenticatorExtras) {
          it('updateAuthenticatorCounter with expect changes the counter only if it still holds that value; null otherwise', async () => {
            const user = await createUser()
            const authenticator = await authenticatorOf(user.id, { counter: 5 })
            await adapter.createAuthenticator(authenticator)
            expect(await adapter.updateAuthenticatorCounter(authenticator.credentialID, 7, { expect: 4 })).toBeNull()
            expect((await adapter.getAuthenticator(authenticator.credentialID))?.counter).toBe(5)
            expect(await adapter.updateAuthenticatorCounter(authenticator.credentialID, 7, { expect: 5 })).toEqual({ ...authenticator, counter: 7 })
            // An unknown credential is null here too (no throw: the caller asked a question).
            expect(await adapter.updateAuthenticatorCounter(tokenText(43), 1, { expect: 0 })).toBeNull()
          })

          it('of 20 parallel counter compare-and-sets expecting the same value (a cloned authenticator), exactly one wins', async () => {
            const user = await createUser()
            const authenticator = await authenticatorOf(user.id, { counter: 10 })
            await adapter.createAuthenticator(authenticator)
            const results = await Promise.all(Array.from({ length: 20 }, (_, i) => adapter.updateAuthenticatorCounter(authenticator.credentialID, 11 + i, { expect: 10 })))
            const winners = results.filter((result) => result !== null)
            expect(winners).toHaveLength(1)
            expect((await adapter.getAuthenticator(authenticator.credentialID))?.counter).toBe(winners[0]!.counter)
          })

          it('deleteAuthenticator deletes the credential and returns it; null for an unknown one; others stay', async () => {
            const user = await createUser()
            const gone = await authenticatorOf(user.id)
            const kept = await authenticatorOf(user.id)
            await adapter.createAuthenticator(gone)
            await adapter.createAuthenticator(kept)
            expect(await adapter.deleteAuthenticator(gone.credentialID)).toEqual(gone)
            expect(await adapter.getAuthenticator(gone.credentialID)).toBeNull()
            expect(await adapter.deleteAuthenticator(gone.credentialID)).toBeNull()
            expect(await adapter.listAuthenticatorsByUserId(user.id)).toEqual([kept])
          })
        }

        it('deleteUser deletes the user’s credentials and no one else’s', async () => {
          const user = await createUser()
          const bystander = await createUser()
          const authenticator = await authenticatorOf(user.id)
          const kept = await authenticatorOf(bystander.id)
          await adapter.createAuthenticator(authenticator)
          await adapter.createAuthenticator(kept)
          await adapter.deleteUser(user.id)
          expect(await adapter.getAuthenticator(authenticator.credentialID)).toBeNull()
          expect(await adapter.listAuthenticatorsByUserId(user.id)).toEqual([])
          expect(await adapter.getAuthenticator(kept.credentialID)).toEqual(kept)
        })
      })
    }

    if (capabilities.twoFactor) describeTwoFactorConformance(() => adapter, () => createUser())

    if (capabilities.userFields) {
      describe('the app’s own user fields (role, plan)', () => {
        const withFields = () => subject!.withUserFields!.adapter as FullAdapter
        const createWithFields = (fields: Partial<AdapterUser> = {}) => withFields().createUser({ email: `${unique('ada')}@example.com`, name: 'Ada', ...fields })

        it('createUser stores them and every read returns them: getUser, getUserByEmail, getUserByAccount, getSessionAndUser', async () => {
          const created = await createWithFields({ role: 'admin', plan: 'pro' })
          expect(created).toMatchObject({ role: 'admin', plan: 'pro' })
          const account = accountOf(created.id)
          await withFields().linkAccount(account)
          const session = await withFields().createSession(sessionOf(created.id))

          expect(await withFields().getUser(created.id)).toEqual(created)
          expect(await withFields().getUserByEmail(created.email!)).toEqual(created)
          expect(await withFields().getUserByAccount(account)).toEqual(created)
          expect((await withFields().getSessionAndUser(session.sessionToken))?.user).toEqual(created)
          expect(await withFields().deleteUser(created.id)).toEqual(created)
        })

        it('createUser returns a declared field it was not given as null', async () => {
          const created = await createWithFields({ role: 'member' })
          expect(created).toMatchObject({ role: 'member', plan: null })
          expect(await withFields().getUser(created.id)).toEqual(created)
        })

        it('updateUser changes a declared field and keeps the others', async () => {
          const created = await createWithFields({ role: 'member', plan: 'free' })
          const updated = await withFields().updateUser({ id: created.id, plan: 'pro' })
          expect(updated).toEqual({ ...created, plan: 'pro' })
          expect(await withFields().getUser(created.id)).toEqual(updated)
        })

        it('drops an undeclared field from createUser and updateUser, with a debug line naming it (never its value)', async () => {
          const before = subject!.withUserFields!.debugLines.length
          const created = await createWithFields({ role: 'member', favouriteColour: 'secret-teal' })
          expect(created).not.toHaveProperty('favouriteColour')
          expect(await withFields().getUser(created.id)).not.toHaveProperty('favouriteColour')
          const updated = await withFields().updateUser({ id: created.id, shoeSize: 'secret-44', role: 'admin' })
          expect(updated).toEqual({ ...created, role: 'admin' })

          const lines = subject!.withUserFields!.debugLines.slice(before)
          expect(lines).toHaveLength(2)
          expect(lines[0]).toMatch(/createUser.*"favouriteColour"/)
          expect(lines[1]).toMatch(/updateUser.*"shoeSize"/)
          expect(lines.join('\n')).not.toMatch(/secret-/)
        })

        it('an adapter without userFields drops them (the columns stay null)', async () => {
          const plain = await adapter.createUser({ email: `${unique('ada')}@example.com`, role: 'admin' })
          expect(plain).not.toHaveProperty('role')
          expect(await withFields().getUser(plain.id)).toMatchObject({ role: null, plan: null })
        })
      })
    }

    describe('users', () => {
      it('createUser generates a non-empty string id, different for each user', async () => {
        const ids = await Promise.all([createUser(), createUser(), createUser()]).then((users) => users.map((user) => user.id))
        for (const id of ids) {
          expect(typeof id).toBe('string')
          expect(id.length).toBeGreaterThan(0)
        }
        expect(new Set(ids).size).toBe(3)
      })

      it('createUser keeps an id it is given', async () => {
        const id = unique('given-id')
        expect((await createUser({ id })).id).toBe(id)
        expect((await adapter.getUser(id))?.id).toBe(id)
      })

      it('createUser stores fields it was not given as null, and returns them as null', async () => {
        const email = `${unique('bare')}@example.com`
        const created = await adapter.createUser({ email })
        const expected = { id: created.id, name: null, email, emailVerified: null, image: null }
        expect(created).toEqual(expected)
        expect(await adapter.getUser(created.id)).toEqual(expected)
      })

      it('getUser returns the user, and null for an unknown id', async () => {
        const created = await createUser({ emailVerified: DATE_WITH_MS })
        expect(await adapter.getUser(created.id)).toEqual(created)
        expect(await adapter.getUser(unique('unknown'))).toBeNull()
      })

      it('getUserByEmail returns the user, and null for an unknown address', async () => {
        const created = await createUser()
        expect(await adapter.getUserByEmail(created.email!)).toEqual(created)
        expect(await adapter.getUserByEmail(`${unique('nobody')}@example.com`)).toBeNull()
      })

      // MySQL/MariaDB's default collations ignore accents too: `exàmple.com`, a domain anyone can
      // register, must not find the user of `example.com` (an e-mail link to it would sign in as them).
      it('getUserByEmail does not answer an address that differs by more than letter case (accents, full-width letters)', async () => {
        const local = unique('ada')
        await createUser({ email: `${local}@example.com` })
        expect(await adapter.getUserByEmail(`${local}@exàmple.com`)).toBeNull()
        expect(await adapter.getUserByEmail(`${local}@éxample.com`)).toBeNull()
        expect(await adapter.getUserByEmail(`${local}@ｅxample.com`)).toBeNull()
      })

      it('getUserByEmail finds an address stored in another letter case (Portcullis looks up lower case)', async () => {
        const local = unique('Mixed.Case')
        const created = await createUser({ email: `${local}@Example.COM` })
        expect(await adapter.getUserByEmail(`${local.toLowerCase()}@example.com`)).toEqual(created)
        expect(await adapter.getUserByEmail(`${local}@Example.COM`)).toEqual(created)
        expect(await adapter.getUserByEmail(`${local.toLowerCase()}x@example.com`)).toBeNull()
      })

      it('getUserByAccount returns the linked user, and null for an unknown account', async () => {
        const user = await createUser()
        const other = await createUser()
        const account = accountOf(user.id)
        await adapter.linkAccount(account)
        await adapter.linkAccount(accountOf(other.id, { provider: 'other', providerAccountId: account.providerAccountId }))

        expect(await adapter.getUserByAccount({ provider: 'example', providerAccountId: account.providerAccountId })).toEqual(user)
        expect(await adapter.getUserByAccount({ provider: 'other', providerAccountId: account.providerAccountId })).toEqual(other)
        expect(await adapter.getUserByAccount({ provider: 'example', providerAccountId: unique('sub') })).toBeNull()
        expect(await adapter.getUserByAccount({ provider: 'unknown', providerAccountId: account.providerAccountId })).toBeNull()
      })

      it('updateUser changes the given fields and keeps the others', async () => {
        const created = await createUser({ emailVerified: DATE_WITH_MS })
        const updated = await adapter.updateUser({ id: created.id, name: 'Augusta Ada King' })
        expect(updated).toEqual({ ...created, name: 'Augusta Ada King' })
        expect(await adapter.getUser(created.id)).toEqual(updated)
      })

      it('updateUser sets and clears emailVerified as a Date with its milliseconds', async () => {
        const created = await createUser()
        const verified = await adapter.updateUser({ id: created.id, emailVerified: DATE_WITH_MS })
        expect(verified.emailVerified).toBeInstanceOf(Date)
        expect(verified.emailVerified?.getTime()).toBe(DATE_WITH_MS.getTime())
        const read = await adapter.getUser(created.id)
        expect(read?.emailVerified).toBeInstanceOf(Date)
        expect(read?.emailVerified?.getTime()).toBe(DATE_WITH_MS.getTime())

        await adapter.updateUser({ id: created.id, emailVerified: null })
        expect((await adapter.getUser(created.id))?.emailVerified).toBeNull()
      })

      it('deleteUser returns the user and deletes its accounts and sessions, and no one else’s', async () => {
        const user = await createUser()
        const bystander = await createUser()
        const account = accountOf(user.id)
        const session = sessionOf(user.id)
        const bystanderAccount = accountOf(bystander.id)
        const bystanderSession = sessionOf(bystander.id)
        await adapter.linkAccount(account)
        await adapter.createSession(session)
        await adapter.linkAccount(bystanderAccount)
        await adapter.createSession(bystanderSession)

        expect(await adapter.deleteUser(user.id)).toEqual(user)

        expect(await adapter.getUser(user.id)).toBeNull()
        expect(await adapter.getUserByAccount(account)).toBeNull()
        expect(await adapter.unlinkAccount(account)).toBeNull()
        expect(await adapter.getSessionAndUser(session.sessionToken)).toBeNull()
        expect(await adapter.getUserByAccount(bystanderAccount)).toEqual(bystander)
        expect((await adapter.getSessionAndUser(bystanderSession.sessionToken))?.user).toEqual(bystander)
      })

      it('deleteUser returns null for an unknown id', async () => {
        expect(await adapter.deleteUser(unique('unknown'))).toBeNull()
      })

      it('rejects a second user with the same email', async () => {
        const first = await createUser()
        await expectUniqueViolation(adapter.createUser({ email: first.email }))
        expect(await adapter.getUserByEmail(first.email!)).toEqual(first)
      })
    })

    describe('accounts', () => {
      it('linkAccount stores every token field: unlinkAccount returns them unchanged, expires_at a number', async () => {
        const user = await createUser()
        const account: AdapterAccount = {
          userId: user.id,
          type: 'oidc',
          provider: 'example',
          providerAccountId: unique('sub'),
          refresh_token: tokenText(40),
          access_token: tokenText(40),
          expires_at: 1_900_000_000,
          token_type: 'bearer',
          scope: 'openid email profile',
          id_token: tokenText(800),
          session_state: unique('state'),
        }
        expect(await adapter.linkAccount(account)).toEqual(account)
        const stored = await adapter.unlinkAccount({ provider: account.provider, providerAccountId: account.providerAccountId })
        expect(stored).toEqual(account)
        expect(typeof (stored as AdapterAccount).expires_at).toBe('number')
      })

      it('linkAccount stores token fields the provider did not return as null', async () => {
        const user = await createUser()
        const account = accountOf(user.id, { type: 'oauth' })
        const expected: AdapterAccount = {
          userId: user.id,
          type: 'oauth',
          provider: account.provider,
          providerAccountId: account.providerAccountId,
          refresh_token: null,
          access_token: null,
          expires_at: null,
          token_type: null,
          scope: null,
          id_token: null,
          session_state: null,
        }
        expect(await adapter.linkAccount(account)).toEqual(expected)
        expect(await adapter.unlinkAccount(account)).toEqual(expected)
      })

      it('keeps a 4 KB id_token and ~4 KB access and refresh tokens unchanged, and an expires_at after 2038', async () => {
        const user = await createUser()
        const account = accountOf(user.id, {
          id_token: tokenText(4096),
          access_token: tokenText(4000),
          refresh_token: tokenText(3900),
          expires_at: 4_102_444_800, // 2100-01-01: past 32-bit seconds
        })
        await adapter.linkAccount(account)
        const stored = (await adapter.unlinkAccount(account)) as AdapterAccount
        expect(stored.id_token).toHaveLength(4096)
        expect(stored.id_token).toBe(account.id_token)
        expect(stored.access_token).toBe(account.access_token)
        expect(stored.refresh_token).toBe(account.refresh_token)
        expect(stored.expires_at).toBe(4_102_444_800)
      })

      it('unlinkAccount removes the link and returns the account; null for an unknown account', async () => {
        const user = await createUser()
        const account = accountOf(user.id, { access_token: 'access' })
        await adapter.linkAccount(account)

        expect(await adapter.unlinkAccount({ provider: account.provider, providerAccountId: account.providerAccountId })).toMatchObject({
          userId: user.id,
          providerAccountId: account.providerAccountId,
          access_token: 'access',
        })
        expect(await adapter.getUserByAccount(account)).toBeNull()
        expect(await adapter.unlinkAccount(account)).toBeNull()
        expect(await adapter.getUser(user.id)).toEqual(user)
      })

      it('unlinkAccount with unlessLastOf removes an account only while the user keeps another', async () => {
        const user = await createUser()
        const first = accountOf(user.id)
        const second = accountOf(user.id, { provider: 'other' })
        await adapter.linkAccount(first)
        await adapter.linkAccount(second)

        expect(await adapter.unlinkAccount(second, { unlessLastOf: user.id })).toMatchObject({ provider: 'other', userId: user.id })
        expect(await adapter.unlinkAccount(first, { unlessLastOf: user.id })).toBeNull()
        expect(await adapter.getUserByAccount(first)).toEqual(user)
        // Another user's account is not this user's to remove.
        const stranger = await createUser()
        expect(await adapter.unlinkAccount(first, { unlessLastOf: stranger.id })).toBeNull()
        expect(await adapter.getUserByAccount(first)).toEqual(user)
      })

      it('getAccountsByUserId lists the user\'s accounts with their tokens, and no one else\'s', async () => {
        const user = await createUser()
        const other = await createUser()
        const mine = [accountOf(user.id, { access_token: 'a1' }), accountOf(user.id, { provider: 'other', access_token: 'a2' })]
        for (const account of mine) await adapter.linkAccount(account)
        await adapter.linkAccount(accountOf(other.id))

        const listed = await adapter.getAccountsByUserId(user.id)
        expect(listed.map((account) => account.providerAccountId).sort()).toEqual(mine.map((account) => account.providerAccountId).sort())
        expect(listed.map((account) => account.access_token).sort()).toEqual(['a1', 'a2'])
        expect(await adapter.getAccountsByUserId(randomUUID())).toEqual([])
      })

      // OIDC `sub` is case-sensitive: matching it case-insensitively would sign one user in as another.
      it('getUserByAccount tells apart providerAccountIds that differ only in letter case', async () => {
        const user = await createUser()
        const other = await createUser()
        const account = accountOf(user.id, { providerAccountId: `${unique('sub')}-aBc` })
        await adapter.linkAccount(account)
        await adapter.linkAccount({ ...account, userId: other.id, providerAccountId: account.providerAccountId.toUpperCase() })

        expect(await adapter.getUserByAccount(account)).toEqual(user)
        expect(await adapter.getUserByAccount({ ...account, providerAccountId: account.providerAccountId.toUpperCase() })).toEqual(other)
        expect(await adapter.getUserByAccount({ ...account, providerAccountId: account.providerAccountId.toLowerCase() })).toBeNull()
      })

      it('rejects a second account with the same provider and providerAccountId, even for another user', async () => {
        const user = await createUser()
        const other = await createUser()
        const account = accountOf(user.id)
        await adapter.linkAccount(account)
        await expectUniqueViolation(adapter.linkAccount({ ...account, userId: other.id }))
        expect(await adapter.getUserByAccount(account)).toEqual(user)
      })
    })

    describe('updateAccount', () => {
      it('changes the token fields given, keeps the others, and returns the account as stored', async () => {
        const user = await createUser()
        const account = accountOf(user.id, { access_token: 'a1', refresh_token: 'r1', expires_at: 1_900_000_000, scope: 'openid', id_token: 'id1' })
        await adapter.linkAccount(account)
        const ref = { provider: account.provider, providerAccountId: account.providerAccountId }
        const updated = await adapter.updateAccount({ ...ref, access_token: 'a2', expires_at: 1_900_003_600, token_type: 'bearer' })
        const expected: AdapterAccount = {
          userId: user.id,
          type: 'oidc',
          ...ref,
          access_token: 'a2',
          refresh_token: 'r1',
          expires_at: 1_900_003_600,
          token_type: 'bearer',
          scope: 'openid',
          id_token: 'id1',
          session_state: null,
        }
        expect(updated).toEqual(expected)
        expect((await adapter.getAccountsByUserId(user.id))[0]).toEqual(expected)
        // null clears a field; a change to nothing (the same values) still finds the account.
        expect(await adapter.updateAccount({ ...ref, id_token: null })).toMatchObject({ id_token: null, access_token: 'a2' })
        expect(await adapter.updateAccount({ ...ref, access_token: 'a2' })).toMatchObject({ access_token: 'a2' })
      })

      it('returns null for an unknown account', async () => {
        expect(await adapter.updateAccount({ provider: 'example', providerAccountId: unique('nobody'), access_token: 'a' })).toBeNull()
      })

      it('with expect, changes the account only while the expected values hold (null: is null)', async () => {
        const user = await createUser()
        const account = accountOf(user.id, { refresh_token: 'r1', expires_at: 1_900_000_000 })
        await adapter.linkAccount(account)
        const ref = { provider: account.provider, providerAccountId: account.providerAccountId }

        expect(await adapter.updateAccount({ ...ref, expires_at: -1_900_000_030 }, { expect: { refresh_token: 'r0', expires_at: 1_900_000_000 } })).toBeNull()
        expect(await adapter.updateAccount({ ...ref, expires_at: -1_900_000_030 }, { expect: { refresh_token: 'r1', expires_at: 1 } })).toBeNull()
        expect(await adapter.updateAccount({ ...ref, access_token: 'x' }, { expect: { access_token: 'something' } })).toBeNull()
        expect((await adapter.getAccountsByUserId(user.id))[0]).toMatchObject({ refresh_token: 'r1', expires_at: 1_900_000_000, access_token: null })

        // A negative expires_at (a refresh's lease) is stored and compared like any other.
        expect(await adapter.updateAccount({ ...ref, expires_at: -1_900_000_030 }, { expect: { refresh_token: 'r1', expires_at: 1_900_000_000, access_token: null } })).toMatchObject({ expires_at: -1_900_000_030 })
        expect(await adapter.updateAccount({ ...ref, access_token: 'a2', refresh_token: 'r2', expires_at: 1_900_003_600 }, { expect: { refresh_token: 'r1', expires_at: -1_900_000_030 } })).toMatchObject({
          access_token: 'a2',
          refresh_token: 'r2',
          expires_at: 1_900_003_600,
        })
      })

      it('of 50 parallel compare-and-sets expecting the same refresh token, exactly one wins', async () => {
        const user = await createUser()
        const account = accountOf(user.id, { refresh_token: 'r1', expires_at: 1_900_000_000 })
        await adapter.linkAccount(account)
        const ref = { provider: account.provider, providerAccountId: account.providerAccountId }
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) => adapter.updateAccount({ ...ref, refresh_token: `r2-${i}`, access_token: `a2-${i}` }, { expect: { refresh_token: 'r1' } })),
        )
        const winners = results.filter((result) => result !== null)
        expect(winners).toHaveLength(1)
        const stored = (await adapter.getAccountsByUserId(user.id))[0]!
        expect(stored.refresh_token).toBe(winners[0]!.refresh_token)
        expect(stored.access_token).toBe(`a2-${stored.refresh_token!.slice(3)}`)
      })
    })

    describe('sessions', () => {
      it('createSession returns the session; getSessionAndUser returns it with its user, expires a Date to the millisecond', async () => {
        const user = await createUser()
        const session = sessionOf(user.id, { expires: DATE_WITH_MS })
        const created = await adapter.createSession(session)
        expect(created).toEqual({ ...session, id: created.id })

        const found = await adapter.getSessionAndUser(session.sessionToken)
        expect(found).toEqual({ session: created, user })
        expect(found?.session.expires).toBeInstanceOf(Date)
        expect(found?.session.expires.getTime()).toBe(DATE_WITH_MS.getTime())
      })

      // Auth.js's pg and Prisma adapters return the row's id too; a `session` callback moved from them reads it.
      it('every session method returns the row’s id: a non-empty string, different for each session, the same from each', async () => {
        const user = await createUser()
        const session = sessionOf(user.id)
        const created = await adapter.createSession(session)
        const other = await adapter.createSession(sessionOf(user.id))
        expect(typeof created.id).toBe('string')
        expect(created.id!.length).toBeGreaterThan(0)
        expect(other.id).not.toBe(created.id)

        expect((await adapter.getSessionAndUser(session.sessionToken))?.session.id).toBe(created.id)
        expect((await adapter.updateSession({ sessionToken: session.sessionToken, expires: DATE_AFTER_2038 }))?.id).toBe(created.id)
        expect((await adapter.deleteSession(session.sessionToken))?.id).toBe(created.id)
      })

      it('createSession keeps an id it is given', async () => {
        const user = await createUser()
        const id = unique('session-id')
        const session = sessionOf(user.id, { id })
        expect(await adapter.createSession(session)).toEqual(session)
        expect((await adapter.getSessionAndUser(session.sessionToken))?.session).toEqual(session)
      })

      it('getSessionAndUser returns null for an unknown token', async () => {
        expect(await adapter.getSessionAndUser(tokenText(64))).toBeNull()
      })

      it('getSessionAndUser returns an expired session too (Portcullis core deletes it)', async () => {
        const user = await createUser()
        const session = await adapter.createSession(sessionOf(user.id, { expires: new Date(Date.now() - DAY) }))
        expect(await adapter.getSessionAndUser(session.sessionToken)).toEqual({ session, user })
      })

      // Regression: MySQL/MariaDB's default collations compare case-insensitively.
      it('getSessionAndUser does not match a token that differs only in letter case', async () => {
        const user = await createUser()
        const session = await adapter.createSession(sessionOf(user.id, { sessionToken: `${tokenText(40)}aBc` }))
        expect(await adapter.getSessionAndUser(session.sessionToken.toUpperCase())).toBeNull()
        expect(await adapter.getSessionAndUser(session.sessionToken.toLowerCase())).toBeNull()
        expect((await adapter.getSessionAndUser(session.sessionToken))?.session).toEqual(session)
      })

      it('updateSession extends expires and returns the updated session', async () => {
        const user = await createUser()
        const session = await adapter.createSession(sessionOf(user.id, { expires: DATE_WITH_MS }))

        const updated = await adapter.updateSession({ sessionToken: session.sessionToken, expires: DATE_AFTER_2038 })
        expect(updated).toEqual({ ...session, expires: DATE_AFTER_2038 })
        expect((await adapter.getSessionAndUser(session.sessionToken))?.session.expires.getTime()).toBe(DATE_AFTER_2038.getTime())
      })

      it('updateSession returns the session when expires is unchanged', async () => {
        const user = await createUser()
        const session = await adapter.createSession(sessionOf(user.id))
        expect(await adapter.updateSession({ sessionToken: session.sessionToken, expires: session.expires })).toEqual(session)
      })

      it('updateSession returns null for an unknown token', async () => {
        expect(await adapter.updateSession({ sessionToken: tokenText(64), expires: DATE_AFTER_2038 })).toBeNull()
      })

      it('deleteSession returns the session, after which it is gone; null for an unknown token', async () => {
        const user = await createUser()
        const session = await adapter.createSession(sessionOf(user.id))

        expect(await adapter.deleteSession(session.sessionToken)).toEqual(session)
        expect(await adapter.getSessionAndUser(session.sessionToken)).toBeNull()
        expect(await adapter.deleteSession(session.sessionToken)).toBeNull()
        expect(await adapter.getUser(user.id)).toEqual(user)
      })

      it('rejects a second session with the same token', async () => {
        const user = await createUser()
        const other = await createUser()
        const session = sessionOf(user.id)
        await adapter.createSession(session)
        await expectUniqueViolation(adapter.createSession({ ...session, userId: other.id }))
        expect((await adapter.getSessionAndUser(session.sessionToken))?.user).toEqual(user)
      })
    })

    describe('verification tokens', () => {
      it('useVerificationToken gives a token to exactly one of 20 concurrent callers', async () => {
        const token = tokenOf()
        await adapter.createVerificationToken(token)
        const results = await Promise.all(Array.from({ length: 20 }, () => adapter.useVerificationToken({ identifier: token.identifier, token: token.token })))
        expect(results.filter((result) => result !== null)).toEqual([token])
      })

      it('useVerificationToken returns the token once, then null', async () => {
        const token = tokenOf(DATE_WITH_MS)
        expect(await adapter.createVerificationToken(token)).toEqual(token)

        const used = await adapter.useVerificationToken({ identifier: token.identifier, token: token.token })
        expect(used).toEqual(token)
        expect(used?.expires).toBeInstanceOf(Date)
        expect(await adapter.useVerificationToken({ identifier: token.identifier, token: token.token })).toBeNull()
      })

      it('useVerificationToken returns null for another identifier, and leaves the token usable', async () => {
        const token = tokenOf()
        await adapter.createVerificationToken(token)
        expect(await adapter.useVerificationToken({ identifier: `${unique('eve')}@example.com`, token: token.token })).toBeNull()
        expect(await adapter.useVerificationToken({ identifier: token.identifier, token: `${token.token.slice(0, -1)}.` })).toBeNull()
        expect(await adapter.useVerificationToken({ identifier: token.identifier, token: token.token })).toEqual(token)
      })

      it('useVerificationToken does not match a token that differs only in letter case', async () => {
        const token = { ...tokenOf(), token: `${tokenText(40)}aBc` }
        await adapter.createVerificationToken(token)
        expect(await adapter.useVerificationToken({ identifier: token.identifier, token: token.token.toUpperCase() })).toBeNull()
        expect(await adapter.useVerificationToken({ identifier: token.identifier, token: token.token.toLowerCase() })).toBeNull()
        expect(await adapter.useVerificationToken({ identifier: token.identifier, token: token.token })).toEqual(token)
      })

      it('rejects a duplicate verification token', async () => {
        const token = tokenOf()
        await adapter.createVerificationToken(token)
        await expectUniqueViolation(adapter.createVerificationToken(token))
      })
    })

    describe('dates', () => {
      it.each([
        ['with milliseconds', DATE_WITH_MS],
        ['after 2038', DATE_AFTER_2038],
        ['in a daylight-saving fold (an hour that repeats in local time)', DATE_IN_DST_FOLD],
      ])('round-trip exactly as Dates: %s', async (_, date) => {
        const user = await createUser({ emailVerified: date })
        const session = sessionOf(user.id, { expires: date })
        await adapter.createSession(session)
        const token = { identifier: user.email!, token: tokenText(64), expires: date }
        await adapter.createVerificationToken(token)

        const found = await adapter.getSessionAndUser(session.sessionToken)
        const used = await adapter.useVerificationToken(token)
        const read = [(await adapter.getUser(user.id))?.emailVerified, found?.user.emailVerified, found?.session.expires, used?.expires]
        for (const value of read) expect(value).toBeInstanceOf(Date)
        expect(read.map((value) => value?.toISOString())).toEqual(Array(4).fill(date.toISOString()))
      })
    })

    describe('concurrency', () => {
      it('of 50 parallel useVerificationToken calls on one token, exactly one gets it', async () => {
        const token = tokenOf()
        await adapter.createVerificationToken(token)
        const results = await Promise.all(Array.from({ length: 50 }, () => adapter.useVerificationToken(token)))
        expect(results.filter((result) => result !== null)).toEqual([token])
      })

      it('50 parallel getSessionAndUser and updateSession calls on one session all succeed and leave one session', async () => {
        const user = await createUser()
        const session = sessionOf(user.id)
        await adapter.createSession(session)
        const expiries = Array.from({ length: 50 }, (_, i) => new Date(session.expires.getTime() + (i + 1) * 1000))

        const [reads, updates] = await Promise.all([
          Promise.all(expiries.map(() => adapter.getSessionAndUser(session.sessionToken))),
          Promise.all(expiries.map((expires) => adapter.updateSession({ sessionToken: session.sessionToken, expires }))),
        ])
        for (const read of reads) expect(read?.user).toEqual(user)
        for (const updated of updates) expect(updated?.sessionToken).toBe(session.sessionToken)

        const final = await adapter.getSessionAndUser(session.sessionToken)
        expect(expiries.map((date) => date.getTime())).toContain(final?.session.expires.getTime())
        expect(await adapter.deleteSession(session.sessionToken)).toEqual(final?.session)
        expect(await adapter.getSessionAndUser(session.sessionToken)).toBeNull()
      })
    })
  })
}

/**
 * Asserts that `promise` rejects with a unique violation. Not `rejects.toThrow()`: a native
 * driver's error class (better-sqlite3's SqliteError) can come from another Jest module realm, and
 * then is not recognised as an Error, so that matcher reports "did not throw" at random.
 */
export async function expectUniqueViolation(promise: Promise<unknown>): Promise<void> {
  let rejected = false
  let reason: unknown
  try {
    await promise
  } catch (error) {
    rejected = true
    reason = error
  }
  expect(rejected).toBe(true)
  expect(String((reason as { message?: unknown })?.message ?? reason)).toMatch(/unique|duplicate/i)
}
