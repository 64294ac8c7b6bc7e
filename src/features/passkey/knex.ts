/**
 * The Knex adapter's WebAuthn credentials (Auth.js's `Authenticator` model, the third migration's
 * table), composed into `KnexAdapter` by src/adapters/knex/index.ts.
 */
import type { Knex } from 'knex'
import type { KnexNaming } from '../../adapters/knex/naming.js'
import { nullableString, userRowsOf, type Row, type RowCodec, type UserRows } from '../../adapters/knex/rows.js'
import type { Adapter } from '../../types.js'
import type { AdapterAuthenticator } from './types.js'

/** `KnexAdapter`'s passkey methods. */
export interface KnexPasskeyMethods extends Pick<Adapter, 'createAuthenticator' | 'getAuthenticator' | 'listAuthenticatorsByUserId' | 'updateAuthenticatorCounter' | 'deleteAuthenticator'> {
  createAuthenticator(authenticator: AdapterAuthenticator): Promise<AdapterAuthenticator>
  getAuthenticator(credentialID: string): Promise<AdapterAuthenticator | null>
  listAuthenticatorsByUserId(userId: string): Promise<AdapterAuthenticator[]>
  /**
   * Stores the credential's new counter and returns the credential; throws when there is none. With
   * `expect`, one UPDATE whose WHERE holds the expected counter: of concurrent calls expecting the
   * same value one changes it, and the others (and a call on an unknown credential) get `null`.
   */
  updateAuthenticatorCounter(credentialID: string, newCounter: number): Promise<AdapterAuthenticator>
  updateAuthenticatorCounter(credentialID: string, newCounter: number, options: { expect?: number | undefined }): Promise<AdapterAuthenticator | null>
  /** Deletes the credential and returns it; `null` when there was none. */
  deleteAuthenticator(credentialID: string): Promise<AdapterAuthenticator | null>
}

/** The passkey methods on `knex`'s authenticators table. */
export function knexPasskeyMethods(knex: Knex, naming: Readonly<KnexNaming>, codec: RowCodec): KnexPasskeyMethods {
  const { tables, authenticators } = naming
  const toAuthenticator = (row: Row): AdapterAuthenticator => ({
    credentialID: String(row[authenticators.credentialID]),
    userId: String(row[authenticators.userId]),
    providerAccountId: String(row[authenticators.providerAccountId]),
    credentialPublicKey: String(row[authenticators.credentialPublicKey]),
    // pg returns bigint as a string; a WebAuthn counter (32 bits) fits a number exactly.
    counter: Number(row[authenticators.counter]),
    credentialDeviceType: String(row[authenticators.credentialDeviceType]),
    // SQLite and MySQL/MariaDB store booleans as 0/1.
    credentialBackedUp: row[authenticators.credentialBackedUp] === true || Number(row[authenticators.credentialBackedUp]) === 1,
    transports: nullableString(row[authenticators.transports]),
  })
  const selectAuthenticator = (credentialID: string) => knex(tables.authenticators).select().where({ [authenticators.credentialID]: credentialID }).first()

  return {
    async createAuthenticator(authenticator) {
      const created: AdapterAuthenticator = {
        credentialID: authenticator.credentialID,
        userId: authenticator.userId,
        providerAccountId: authenticator.providerAccountId,
        credentialPublicKey: authenticator.credentialPublicKey,
        counter: authenticator.counter,
        credentialDeviceType: authenticator.credentialDeviceType,
        credentialBackedUp: authenticator.credentialBackedUp,
        transports: authenticator.transports ?? null,
      }
      await knex(tables.authenticators).insert(codec.values(created, authenticators))
      return created
    },

    async getAuthenticator(credentialID) {
      const row = await selectAuthenticator(credentialID)
      return row ? toAuthenticator(row) : null
    },

    async listAuthenticatorsByUserId(userId) {
      const rows = await knex(tables.authenticators).select().where({ [authenticators.userId]: userId })
      return rows.map(toAuthenticator)
    },

    // Two signatures (Auth.js's, and the compare-and-set's): declared on the interface.
    updateAuthenticatorCounter: (async (credentialID: string, newCounter: number, options?: { expect?: number | undefined }) => {
      const expect = options?.expect
      const query = knex(tables.authenticators).update({ [authenticators.counter]: newCounter }).where({ [authenticators.credentialID]: credentialID })
      // The expected counter in the WHERE: the database makes the compare-and-set atomic, and the
      // count says whether it matched (mysql2 counts matched rows, not changed ones).
      if (expect !== undefined) query.where(authenticators.counter, expect)
      const updated = await query
      if (updated === 0) {
        if (expect !== undefined) return null
        // Auth.js's contract: an unknown credential is an error here, not null.
        throw new Error('updateAuthenticatorCounter: there is no authenticator with this credentialID.')
      }
      const row = await selectAuthenticator(credentialID)
      if (!row) {
        if (expect !== undefined) return null
        throw new Error('updateAuthenticatorCounter: the authenticator was deleted meanwhile.')
      }
      return toAuthenticator(row)
    }) as KnexPasskeyMethods['updateAuthenticatorCounter'],

    async deleteAuthenticator(credentialID) {
      const row = await selectAuthenticator(credentialID)
      if (!row) return null
      const deleted = await knex(tables.authenticators).where({ [authenticators.credentialID]: credentialID }).del()
      return deleted > 0 ? toAuthenticator(row) : null
    },
  }
}

/** A user's credentials, deleted with the user (when the third migration has run). */
export function knexPasskeyUserRows(knex: Knex, { tables, authenticators }: Readonly<KnexNaming>): UserRows {
  return userRowsOf(knex, tables.authenticators, async (trx, userId) => {
    await trx(tables.authenticators).where({ [authenticators.userId]: userId }).del()
  })
}
