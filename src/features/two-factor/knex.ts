/**
 * The Knex adapter's second factor: TOTP enrolments and the hashes of recovery codes (the seventh
 * migration's two tables), composed into `KnexAdapter` by src/adapters/knex/index.ts.
 */
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableDate, userRowsOf, type Row, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'
import type { AdapterTwoFactor } from './types.js'

type TwoFactorMethod = 'getTwoFactor' | 'startTwoFactor' | 'enableTwoFactor' | 'useTwoFactorStep' | 'useRecoveryCode' | 'setRecoveryCodes' | 'deleteTwoFactor' | 'resealTwoFactor'

/** `KnexAdapter`'s second-factor methods. */
export interface KnexTwoFactorMethods extends Pick<Adapter, TwoFactorMethod> {
  /** The user's TOTP enrolment and how many recovery codes are left, in one query; needs the seventh migration. */
  getTwoFactor(userId: string): Promise<AdapterTwoFactor | null>
  /** Stores a pending enrolment or replaces a pending one's secret; `false`, changing nothing, when it is confirmed. */
  startTwoFactor(userId: string, secret: string): Promise<boolean>
  /** Confirms the pending enrolment holding `secret` and replaces the recovery codes, in one transaction. */
  enableTwoFactor(userId: string, confirmation: { secret: string; step: number; enabledAt: Date; recoveryCodes: readonly string[] }): Promise<boolean>
  /** Records an accepted time step in one conditional UPDATE: `true` only when it is above the last one. */
  useTwoFactorStep(userId: string, step: number): Promise<boolean>
  /** Deletes the recovery code with this hash in one DELETE: `true` for the one call that removed it. */
  useRecoveryCode(userId: string, codeHash: string): Promise<boolean>
  /** Replaces the user's recovery codes by these hashes, in one transaction. */
  setRecoveryCodes(userId: string, codeHashes: readonly string[]): Promise<void>
  /** Deletes the enrolment and its recovery codes, in one transaction; `true` when there was an enrolment. */
  deleteTwoFactor(userId: string): Promise<boolean>
  /** Replaces the sealed secret `from` by `to` in one conditional UPDATE: `true` only while the stored one was `from`. */
  resealTwoFactor(userId: string, sealed: { from: string; to: string }): Promise<boolean>
}

/** getTwoFactor's alias for the count of recovery codes: no column of the two-factor table is selected under it. */
const RECOVERY_CODE_COUNT = 'portcullis_recovery_code_count'

/** The rows of one user in the two tables. */
function userWhere({ twoFactors, recoveryCodes }: Readonly<KnexNaming>) {
  return {
    twoFactor: (userId: string): Row => ({ [twoFactors.userId]: userId }),
    recoveryCodes: (userId: string): Row => ({ [recoveryCodes.userId]: userId }),
  }
}

// Long: eight short methods closing over one connection and one naming, each read on its own.
/** The second-factor methods on `knex`'s two-factor and recovery-code tables. */
export function knexTwoFactorMethods(knex: Knex, naming: Readonly<KnexNaming>, { read, values }: RowCodec): KnexTwoFactorMethods {
  const { tables, twoFactors, recoveryCodes } = naming
  const where = userWhere(naming)
  const replaceRecoveryCodes = async (trx: Knex.Transaction, userId: string, codeHashes: readonly string[]): Promise<void> => {
    await trx(tables.recoveryCodes).where(where.recoveryCodes(userId)).del()
    // Duplicates dropped: the key (userId, codeHash) would refuse them and roll the transaction back.
    const rows = [...new Set(codeHashes)].map((codeHash) => ({ [recoveryCodes.userId]: userId, [recoveryCodes.codeHash]: codeHash }))
    if (rows.length > 0) await trx(tables.recoveryCodes).insert(rows)
  }

  return {
    async getTwoFactor(userId) {
      // One query, the count a subquery: it runs at every second-factor sign-in.
      const codes = knex(tables.recoveryCodes).count('*').where(where.recoveryCodes(userId)).as(RECOVERY_CODE_COUNT)
      const columns = [twoFactors.userId, twoFactors.secret, twoFactors.enabledAt, twoFactors.lastUsedStep]
      const row = await read(knex(tables.twoFactors).select(...columns, codes).where(where.twoFactor(userId))).first()
      if (!row) return null
      const lastUsedStep = row[twoFactors.lastUsedStep]
      return {
        userId: String(row[twoFactors.userId]),
        secret: String(row[twoFactors.secret]),
        enabledAt: nullableDate(row[twoFactors.enabledAt]),
        // pg returns bigint (and count) as a string; a time step fits a number exactly.
        lastUsedStep: lastUsedStep === null ? null : Number(lastUsedStep),
        recoveryCodes: Number(row[RECOVERY_CODE_COUNT]),
      }
    },

    async startTwoFactor(userId, secret) {
      const replacement = values({ secret, updatedAt: new Date(Date.now()) }, twoFactors)
      // Insert a row if there is none, then replace the secret only while the row is pending: that
      // UPDATE's WHERE never matches a confirmed row (even one confirmed a moment ago), and its count
      // is the answer (mysql2 counts matched rows, so a row inserted just now counts).
      return knex.transaction(async (trx) => {
        const insert = trx(tables.twoFactors).insert({ ...where.twoFactor(userId), ...replacement }).onConflict(twoFactors.userId)
        // Not Knex's ignore() on MySQL/MariaDB: INSERT IGNORE would also let a bad user id or an over-long value pass.
        await (knex.client.dialect === 'mysql' ? insert.merge([twoFactors.userId]) : insert.ignore())
        const updated = await trx(tables.twoFactors).update(replacement).where(where.twoFactor(userId)).whereNull(twoFactors.enabledAt)
        return updated === 1
      })
    },

    async enableTwoFactor(userId, { secret, step, enabledAt, recoveryCodes: codeHashes }) {
      checkTimeStep('enableTwoFactor', step)
      return knex.transaction(async (trx) => {
        // The secret in the WHERE: an enrolment replaced meanwhile by a newer one, or confirmed by a
        // concurrent request, matches nothing, and nothing changes.
        const updated = await trx(tables.twoFactors)
          .update(values({ enabledAt, lastUsedStep: step, updatedAt: enabledAt }, twoFactors))
          .where({ ...where.twoFactor(userId), [twoFactors.secret]: secret })
          .whereNull(twoFactors.enabledAt)
        if (updated !== 1) return false
        await replaceRecoveryCodes(trx, userId, codeHashes)
        return true
      })
    },

    async useTwoFactorStep(userId, step) {
      checkTimeStep('useTwoFactorStep', step)
      // One conditional UPDATE: of concurrent calls with the same step the database lets one match;
      // the others then find lastUsedStep = step and change nothing. A pending enrolment never matches.
      const updated = await knex(tables.twoFactors)
        .update({ [twoFactors.lastUsedStep]: step })
        .where(where.twoFactor(userId))
        .whereNotNull(twoFactors.enabledAt)
        .andWhere((query) => query.whereNull(twoFactors.lastUsedStep).orWhere(twoFactors.lastUsedStep, '<', step))
      return updated === 1
    },

    async useRecoveryCode(userId, codeHash) {
      // Single use without a lock: of concurrent callers, only the one whose DELETE removed the row gets true.
      const deleted = await knex(tables.recoveryCodes).where({ ...where.recoveryCodes(userId), [recoveryCodes.codeHash]: codeHash }).del()
      return deleted === 1
    },

    async setRecoveryCodes(userId, codeHashes) {
      await knex.transaction((trx) => replaceRecoveryCodes(trx, userId, codeHashes))
    },

    async deleteTwoFactor(userId) {
      return knex.transaction(async (trx) => {
        await trx(tables.recoveryCodes).where(where.recoveryCodes(userId)).del()
        return (await trx(tables.twoFactors).where(where.twoFactor(userId)).del()) === 1
      })
    },

    async resealTwoFactor(userId, { from, to }) {
      // `from` in the WHERE: a key reset or replaced meanwhile matches nothing, and is not overwritten.
      const updated = await knex(tables.twoFactors)
        .update(values({ secret: to, updatedAt: new Date(Date.now()) }, twoFactors))
        .where({ ...where.twoFactor(userId), [twoFactors.secret]: from })
      return updated === 1
    },
  }
}

/** A user's enrolment and recovery codes, deleted with the user (when the seventh migration has run). */
export function knexTwoFactorUserRows(knex: Knex, naming: Readonly<KnexNaming>): UserRows {
  const where = userWhere(naming)
  // The seventh migration creates both tables: one of them answers for the two.
  return userRowsOf(knex, naming.tables.twoFactors, async (trx, userId) => {
    await trx(naming.tables.recoveryCodes).where(where.recoveryCodes(userId)).del()
    await trx(naming.tables.twoFactors).where(where.twoFactor(userId)).del()
  })
}

/**
 * Checks a TOTP time step (a whole number of 30-second periods since the epoch) before it reaches SQL.
 *
 * @throws TypeError for anything but a non-negative safe integer.
 */
function checkTimeStep(method: string, step: unknown): void {
  if (!Number.isSafeInteger(step) || (step as number) < 0) throw new TypeError(`${method}: step must be a non-negative integer (an RFC 6238 time step).`)
}
