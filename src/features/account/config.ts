/**
 * The `account` option at init: its settings, and what it needs, each with an error saying what to
 * change. Deleting an account removes the user through the adapter and ends their sessions on
 * every process: database sessions' rows, or a JWT session store's records.
 */
import type { PortcullisConfig, ResolvedConfig } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { AccountMail, AccountOptions } from './types.js'

/** The default of `account.recentSignInMaxAge`: ten minutes. */
export const DEFAULT_RECENT_SIGN_IN_MAX_AGE = 600

/** The `account` option, resolved. */
export interface ResolvedAccount {
  readonly recentSignInMaxAge: number
  readonly server: string | Record<string, unknown> | undefined
  readonly from: string | undefined
  readonly sendMail: ((mail: AccountMail) => unknown) | undefined
  readonly keepOtherSessions: boolean
}

/** The adapter methods the account wing calls. */
export const ACCOUNT_ADAPTER_METHODS = ['getUser', 'getUserByEmail', 'updateUser', 'deleteUser', 'getAccountsByUserId', 'createVerificationToken', 'useVerificationToken'] as const

/** The resolved `account` option of `config`. @throws InvalidConfigurationError when it is off (a config made by hand). */
export function accountOf(config: ResolvedConfig): ResolvedAccount {
  const account = config.features.account as ResolvedAccount | undefined
  if (!account) throw new InvalidConfigurationError('The account page is off: set account: true (or an object) in the Portcullis config. See docs/account.md.')
  return account
}

/** Whether the config turns the wing on. */
export function accountEnabled(config: PortcullisConfig): boolean {
  return config.account !== undefined && config.account !== false
}

/** Resolves `account`. @throws InvalidConfigurationError */
export function resolveAccount(input: PortcullisConfig['account']): ResolvedAccount {
  if (input !== true && (input === null || typeof input !== 'object')) {
    throw new InvalidConfigurationError('account must be true or an object { recentSignInMaxAge?, server?, from?, sendMail? }.')
  }
  const options: AccountOptions = input === true ? {} : input
  const maxAge = options.recentSignInMaxAge ?? DEFAULT_RECENT_SIGN_IN_MAX_AGE
  if (!Number.isInteger(maxAge) || maxAge < 1) {
    throw new InvalidConfigurationError(`account.recentSignInMaxAge must be a whole number of seconds above 0 (default ${DEFAULT_RECENT_SIGN_IN_MAX_AGE}); got ${JSON.stringify(maxAge)}.`)
  }
  if (options.sendMail !== undefined && typeof options.sendMail !== 'function') throw new InvalidConfigurationError('account.sendMail must be a function.')
  if (options.from !== undefined && typeof options.from !== 'string') throw new InvalidConfigurationError('account.from must be an address, e.g. "Example <no-reply@example.com>".')
  const keep = options.keepOtherSessionsOnEmailChange ?? false
  if (typeof keep !== 'boolean') throw new InvalidConfigurationError('account.keepOtherSessionsOnEmailChange must be true or false.')
  return Object.freeze({ recentSignInMaxAge: maxAge, server: options.server, from: options.from, sendMail: options.sendMail, keepOtherSessions: keep })
}

/**
 * What the wing needs of the rest: an adapter that deletes users, and a way to end a user's
 * sessions everywhere (database sessions, or JWT sessions with `session.store`).
 * @throws InvalidConfigurationError
 */
export function assertAccount(config: ResolvedConfig): void {
  if (!config.features.account) return
  const { adapter, session } = config
  const missing = adapter ? ACCOUNT_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function') : [...ACCOUNT_ADAPTER_METHODS]
  if (!adapter || missing.length > 0) {
    throw new InvalidConfigurationError(`account needs an adapter with ${missing.join(', ')}: it deletes users, changes their addresses (with links in the verification-token table) and lists their ways in. Pass adapter: KnexAdapter(knex) from "portcullis/adapters/knex".`)
  }
  if (session.strategy === 'jwt' && !session.store) {
    throw new InvalidConfigurationError(
      "account ends a deleted user's sessions on every process, which JWT sessions can only do with session.store ('memory', { redis }, { knex }): set it, or use database sessions (the default with an adapter).",
    )
  }
  if (session.strategy === 'database' && typeof adapter.deleteSessionsByUserId !== 'function') {
    throw new InvalidConfigurationError("account ends a deleted user's sessions: the adapter needs deleteSessionsByUserId (KnexAdapter has it).")
  }
}
