/**
 * The second factor's part of the adapter conformance suite (the `twoFactor` capability): the eight
 * methods behind TOTP enrolment and sign-in (with sealing a key again after a rotation), each refusal included, and the races a second factor
 * must win (a code or a recovery code good once, an enrolment confirmed once and never replaced once
 * confirmed). Written against the `Adapter` interface only; `runAdapterConformance` declares it.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6238#section-5.2
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import type { Adapter, AdapterTwoFactor, AdapterUser } from 'portcullis'

type TwoFactorAdapter = Required<Adapter>

/** A sealed secret as Portcullis stores it: long, base64url, so letter case matters. */
const sealedSecret = () => randomBytes(240).toString('base64url')
/** A recovery code's hash. */
const codeHash = () => randomBytes(32).toString('base64url')
const codeHashes = (count: number) => Array.from({ length: count }, codeHash)
/** The time step of 2031-05-06T07:08:09Z, and the confirmation's instant (with milliseconds). */
const STEP = Math.floor(Date.parse('2031-05-06T07:08:09Z') / 1000 / 30)
const ENABLED_AT = new Date('2031-05-06T07:08:09.123Z')

/**
 * Declares the second factor's tests.
 *
 * @param adapter The adapter under test (read inside each test: the suite sets it up in `beforeAll`).
 * @param createUser A new user of the adapter's store.
 */
export function describeTwoFactorConformance(adapter: () => TwoFactorAdapter, createUser: () => Promise<AdapterUser>): void {
  /** A user with a pending enrolment, and its secret. */
  const pendingUser = async () => {
    const user = await createUser()
    const secret = sealedSecret()
    expect(await adapter().startTwoFactor(user.id, secret)).toBe(true)
    return { user, secret }
  }
  /** A user with a confirmed enrolment at `STEP` and `codes` recovery codes. */
  const enabledUser = async (codes = codeHashes(10)) => {
    const { user, secret } = await pendingUser()
    expect(await adapter().enableTwoFactor(user.id, { secret, step: STEP, enabledAt: ENABLED_AT, recoveryCodes: codes })).toBe(true)
    return { user, secret, codes }
  }
  const confirmed = (userId: string, secret: string, fields: Partial<AdapterTwoFactor> = {}): AdapterTwoFactor => ({
    userId,
    secret,
    enabledAt: ENABLED_AT,
    lastUsedStep: STEP,
    recoveryCodes: 10,
    ...fields,
  })

  describe('second factor (TOTP enrolment and recovery codes)', () => {
    describe('enrolment', () => {
      it('getTwoFactor returns null for a user who never enrolled, and for an unknown user', async () => {
        const user = await createUser()
        expect(await adapter().getTwoFactor(user.id)).toBeNull()
        expect(await adapter().getTwoFactor(`${user.id}-unknown`)).toBeNull()
      })

      it('startTwoFactor stores a pending enrolment: the secret unchanged, enabledAt and lastUsedStep null, no recovery codes', async () => {
        const { user, secret } = await pendingUser()
        expect(await adapter().getTwoFactor(user.id)).toEqual({ userId: user.id, secret, enabledAt: null, lastUsedStep: null, recoveryCodes: 0 })
      })

      it('startTwoFactor replaces the secret of a pending enrolment', async () => {
        const { user } = await pendingUser()
        const newer = sealedSecret()
        expect(await adapter().startTwoFactor(user.id, newer)).toBe(true)
        expect((await adapter().getTwoFactor(user.id))?.secret).toBe(newer)
      })

      it('startTwoFactor does not replace a confirmed enrolment: false, and nothing changes', async () => {
        const { user, secret } = await enabledUser()
        const before = await adapter().getTwoFactor(user.id)
        expect(before).toEqual(confirmed(user.id, secret))
        expect(await adapter().startTwoFactor(user.id, sealedSecret())).toBe(false)
        expect(await adapter().getTwoFactor(user.id)).toEqual(before)
      })

      it('enableTwoFactor confirms the pending enrolment: enabledAt to the millisecond, lastUsedStep the first code’s step, the recovery codes stored', async () => {
        const { user, secret } = await enabledUser()
        const twoFactor = await adapter().getTwoFactor(user.id)
        expect(twoFactor).toEqual(confirmed(user.id, secret))
        expect(twoFactor?.enabledAt).toBeInstanceOf(Date)
        expect(typeof twoFactor?.lastUsedStep).toBe('number')
        expect(typeof twoFactor?.recoveryCodes).toBe('number')
      })

      it('enableTwoFactor with a stale secret (replaced by a newer enrolment) returns false and changes nothing', async () => {
        const { user, secret: stale } = await pendingUser()
        const newer = sealedSecret()
        await adapter().startTwoFactor(user.id, newer)
        await adapter().setRecoveryCodes(user.id, codeHashes(2))
        const before = await adapter().getTwoFactor(user.id)
        expect(await adapter().enableTwoFactor(user.id, { secret: stale, step: STEP, enabledAt: ENABLED_AT, recoveryCodes: codeHashes(10) })).toBe(false)
        expect(await adapter().getTwoFactor(user.id)).toEqual(before)
        expect(before).toEqual({ userId: user.id, secret: newer, enabledAt: null, lastUsedStep: null, recoveryCodes: 2 })
      })

      it('enableTwoFactor refuses a secret that differs only in letter case', async () => {
        const { user, secret } = await pendingUser()
        const flipped = secret.replace(/[a-z]/, (letter) => letter.toUpperCase())
        expect(flipped).not.toBe(secret)
        expect(await adapter().enableTwoFactor(user.id, { secret: flipped, step: STEP, enabledAt: ENABLED_AT, recoveryCodes: [] })).toBe(false)
        expect((await adapter().getTwoFactor(user.id))?.enabledAt).toBeNull()
      })

      it('enableTwoFactor returns false, changing nothing, for a confirmed enrolment (even with its own secret) and for none', async () => {
        const { user, secret, codes } = await enabledUser()
        const later = new Date(ENABLED_AT.getTime() + 60_000)
        expect(await adapter().enableTwoFactor(user.id, { secret, step: STEP + 2, enabledAt: later, recoveryCodes: codeHashes(10) })).toBe(false)
        expect(await adapter().getTwoFactor(user.id)).toEqual(confirmed(user.id, secret))
        expect(await adapter().useRecoveryCode(user.id, codes[0]!)).toBe(true)

        const nobody = await createUser()
        expect(await adapter().enableTwoFactor(nobody.id, { secret, step: STEP, enabledAt: ENABLED_AT, recoveryCodes: codeHashes(10) })).toBe(false)
        expect(await adapter().getTwoFactor(nobody.id)).toBeNull()
        expect(await adapter().useRecoveryCode(nobody.id, codes[1]!)).toBe(false)
      })

      it('of two concurrent enableTwoFactor calls with the same secret, exactly one confirms, and its codes are the ones kept', async () => {
        const { user, secret } = await pendingUser()
        const first = codeHashes(10)
        const second = codeHashes(10)
        const results = await Promise.all(
          [first, second].map((codes, i) => adapter().enableTwoFactor(user.id, { secret, step: STEP + i, enabledAt: ENABLED_AT, recoveryCodes: codes })),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        const [kept, dropped] = results[0] ? [first, second] : [second, first]
        expect(await adapter().useRecoveryCode(user.id, dropped[0]!)).toBe(false)
        expect(await adapter().useRecoveryCode(user.id, kept[0]!)).toBe(true)
      })

      it('startTwoFactor racing enableTwoFactor: exactly one of them succeeds, and a confirmed enrolment keeps the secret it was confirmed with', async () => {
        for (let round = 0; round < 5; round++) {
          const { user, secret } = await pendingUser()
          const newer = sealedSecret()
          const [started, enabled] = await Promise.all([
            adapter().startTwoFactor(user.id, newer),
            adapter().enableTwoFactor(user.id, { secret, step: STEP, enabledAt: ENABLED_AT, recoveryCodes: codeHashes(10) }),
          ])
          expect([started, enabled].filter(Boolean)).toHaveLength(1)
          const twoFactor = await adapter().getTwoFactor(user.id)
          if (enabled) expect(twoFactor).toEqual(confirmed(user.id, secret))
          else expect(twoFactor).toEqual({ userId: user.id, secret: newer, enabledAt: null, lastUsedStep: null, recoveryCodes: 0 })
        }
      })

      it('deleteTwoFactor deletes the enrolment and its recovery codes: true, then false; another user’s stay', async () => {
        const { user, codes } = await enabledUser()
        const bystander = await enabledUser()
        expect(await adapter().deleteTwoFactor(user.id)).toBe(true)
        expect(await adapter().getTwoFactor(user.id)).toBeNull()
        expect(await adapter().useRecoveryCode(user.id, codes[0]!)).toBe(false)
        expect(await adapter().deleteTwoFactor(user.id)).toBe(false)
        expect(await adapter().getTwoFactor(bystander.user.id)).toEqual(confirmed(bystander.user.id, bystander.secret))

        // And a new enrolment starts afresh.
        expect(await adapter().startTwoFactor(user.id, sealedSecret())).toBe(true)
        expect((await adapter().getTwoFactor(user.id))?.recoveryCodes).toBe(0)
      })

      it('deleteUser deletes the user’s enrolment and recovery codes, and no one else’s', async () => {
        const { user, codes } = await enabledUser()
        const bystander = await enabledUser()
        await adapter().deleteUser(user.id)
        expect(await adapter().getTwoFactor(user.id)).toBeNull()
        expect(await adapter().useRecoveryCode(user.id, codes[0]!)).toBe(false)
        expect(await adapter().getTwoFactor(bystander.user.id)).toEqual(confirmed(bystander.user.id, bystander.secret))
      })
    })

    describe('time steps', () => {
      it('useTwoFactorStep accepts a step above the last one and records it; refuses the same step and a lower one', async () => {
        const { user, secret } = await enabledUser()
        expect(await adapter().useTwoFactorStep(user.id, STEP)).toBe(false)
        expect(await adapter().useTwoFactorStep(user.id, STEP - 1)).toBe(false)
        expect(await adapter().useTwoFactorStep(user.id, STEP + 1)).toBe(true)
        expect(await adapter().getTwoFactor(user.id)).toEqual(confirmed(user.id, secret, { lastUsedStep: STEP + 1 }))
        expect(await adapter().useTwoFactorStep(user.id, STEP + 1)).toBe(false)
        expect(await adapter().useTwoFactorStep(user.id, STEP)).toBe(false)
        expect(await adapter().useTwoFactorStep(user.id, STEP + 3)).toBe(true)
        expect((await adapter().getTwoFactor(user.id))?.lastUsedStep).toBe(STEP + 3)
      })

      it('useTwoFactorStep refuses a pending enrolment and a user without one, and records nothing', async () => {
        const { user, secret } = await pendingUser()
        expect(await adapter().useTwoFactorStep(user.id, STEP)).toBe(false)
        expect(await adapter().getTwoFactor(user.id)).toEqual({ userId: user.id, secret, enabledAt: null, lastUsedStep: null, recoveryCodes: 0 })
        expect(await adapter().useTwoFactorStep((await createUser()).id, STEP)).toBe(false)
      })

      it('keeps a time step far past 2^32 as an exact number', async () => {
        const { user } = await enabledUser()
        const far = 2 ** 40 + 7
        expect(await adapter().useTwoFactorStep(user.id, far)).toBe(true)
        expect((await adapter().getTwoFactor(user.id))?.lastUsedStep).toBe(far)
        expect(await adapter().useTwoFactorStep(user.id, far)).toBe(false)
      })

      it('of 20 concurrent useTwoFactorStep calls with the same step (one code replayed), exactly one wins', async () => {
        const { user } = await enabledUser()
        const results = await Promise.all(Array.from({ length: 20 }, () => adapter().useTwoFactorStep(user.id, STEP + 1)))
        expect(results.filter(Boolean)).toHaveLength(1)
        expect((await adapter().getTwoFactor(user.id))?.lastUsedStep).toBe(STEP + 1)
      })

      it('of two concurrent useTwoFactorStep calls, exactly one wins (Promise.all of a pair, repeated)', async () => {
        const { user } = await enabledUser()
        for (let step = STEP + 1; step <= STEP + 10; step++) {
          const pair = await Promise.all([adapter().useTwoFactorStep(user.id, step), adapter().useTwoFactorStep(user.id, step)])
          expect(pair.filter(Boolean)).toHaveLength(1)
        }
      })
    })

    describe('recovery codes', () => {
      it('useRecoveryCode is single use: true once, then false; getTwoFactor counts the codes left', async () => {
        const { user, codes } = await enabledUser()
        expect(await adapter().useRecoveryCode(user.id, codes[3]!)).toBe(true)
        expect(await adapter().useRecoveryCode(user.id, codes[3]!)).toBe(false)
        expect((await adapter().getTwoFactor(user.id))?.recoveryCodes).toBe(9)
        expect(await adapter().useRecoveryCode(user.id, codes[4]!)).toBe(true)
        expect((await adapter().getTwoFactor(user.id))?.recoveryCodes).toBe(8)
      })

      it('useRecoveryCode matches only the user’s own code, exactly (not another letter case, not another user’s)', async () => {
        const shared = codeHash()
        const { user, codes } = await enabledUser([shared, ...codeHashes(9)])
        const other = await enabledUser([shared, ...codeHashes(9)])
        const flipped = codes[1]!.replace(/[a-z]/, (letter) => letter.toUpperCase())
        expect(flipped).not.toBe(codes[1])
        expect(await adapter().useRecoveryCode(user.id, flipped)).toBe(false)
        expect(await adapter().useRecoveryCode(user.id, other.codes[1]!)).toBe(false)
        expect(await adapter().useRecoveryCode(user.id, shared)).toBe(true)
        expect((await adapter().getTwoFactor(other.user.id))?.recoveryCodes).toBe(10)
        expect(await adapter().useRecoveryCode(other.user.id, shared)).toBe(true)
      })

      it('of 20 concurrent useRecoveryCode calls with one code, exactly one wins', async () => {
        const { user, codes } = await enabledUser()
        const results = await Promise.all(Array.from({ length: 20 }, () => adapter().useRecoveryCode(user.id, codes[0]!)))
        expect(results.filter(Boolean)).toHaveLength(1)
        expect((await adapter().getTwoFactor(user.id))?.recoveryCodes).toBe(9)
      })

      it('setRecoveryCodes replaces all the user’s codes: the old ones are gone, the new ones usable, no one else’s touched', async () => {
        const { user, codes } = await enabledUser()
        const bystander = await enabledUser()
        const fresh = codeHashes(10)
        await adapter().setRecoveryCodes(user.id, fresh)
        expect((await adapter().getTwoFactor(user.id))?.recoveryCodes).toBe(10)
        for (const old of codes.slice(0, 3)) expect(await adapter().useRecoveryCode(user.id, old)).toBe(false)
        expect(await adapter().useRecoveryCode(user.id, fresh[0]!)).toBe(true)
        expect((await adapter().getTwoFactor(bystander.user.id))?.recoveryCodes).toBe(10)

        await adapter().setRecoveryCodes(user.id, [])
        expect((await adapter().getTwoFactor(user.id))?.recoveryCodes).toBe(0)
      })
    })

    describe('sealing again after a rotation', () => {
      it('resealTwoFactor replaces the sealed secret while it is `from`, and changes nothing else', async () => {
        const { user, secret, codes } = await enabledUser()
        const bystander = await enabledUser()
        const resealed = sealedSecret()
        expect(await adapter().resealTwoFactor(user.id, { from: secret, to: resealed })).toBe(true)
        expect(await adapter().getTwoFactor(user.id)).toEqual(confirmed(user.id, resealed))
        expect(await adapter().useRecoveryCode(user.id, codes[0]!)).toBe(true)
        expect(await adapter().useTwoFactorStep(user.id, STEP + 1)).toBe(true)
        expect(await adapter().getTwoFactor(bystander.user.id)).toEqual(confirmed(bystander.user.id, bystander.secret))
        // A pending enrolment is sealed again too, and can then be confirmed under its new value only.
        const pending = await pendingUser()
        const pendingResealed = sealedSecret()
        expect(await adapter().resealTwoFactor(pending.user.id, { from: pending.secret, to: pendingResealed })).toBe(true)
        expect(await adapter().enableTwoFactor(pending.user.id, { secret: pending.secret, step: STEP, enabledAt: ENABLED_AT, recoveryCodes: codeHashes(10) })).toBe(false)
        expect(await adapter().enableTwoFactor(pending.user.id, { secret: pendingResealed, step: STEP, enabledAt: ENABLED_AT, recoveryCodes: codeHashes(10) })).toBe(true)
      })

      it('resealTwoFactor changes nothing when the stored secret is no longer `from` (enrolled again, reset), or the user has none', async () => {
        const { user, secret } = await enabledUser()
        const current = sealedSecret()
        expect(await adapter().resealTwoFactor(user.id, { from: secret, to: current })).toBe(true)
        // The value it replaced, a second time (a concurrent request that read the row before).
        expect(await adapter().resealTwoFactor(user.id, { from: secret, to: sealedSecret() })).toBe(false)
        // Letter case matters: a sealed value is base64url.
        expect(await adapter().resealTwoFactor(user.id, { from: current.toLowerCase() === current ? current.toUpperCase() : current.toLowerCase(), to: sealedSecret() })).toBe(false)
        expect((await adapter().getTwoFactor(user.id))?.secret).toBe(current)
        expect(await adapter().deleteTwoFactor(user.id)).toBe(true)
        expect(await adapter().resealTwoFactor(user.id, { from: current, to: sealedSecret() })).toBe(false)
        expect(await adapter().getTwoFactor(user.id)).toBeNull()
        const stranger = await createUser()
        expect(await adapter().resealTwoFactor(stranger.id, { from: current, to: sealedSecret() })).toBe(false)
        expect(await adapter().getTwoFactor(stranger.id)).toBeNull()
      })

      it('of concurrent resealTwoFactor calls from one value, exactly one wins', async () => {
        const { user, secret } = await enabledUser()
        const candidates = Array.from({ length: 10 }, sealedSecret)
        const results = await Promise.all(candidates.map((to) => adapter().resealTwoFactor(user.id, { from: secret, to })))
        expect(results.filter(Boolean)).toHaveLength(1)
        expect((await adapter().getTwoFactor(user.id))?.secret).toBe(candidates[results.indexOf(true)])
      })
    })
  })
}
