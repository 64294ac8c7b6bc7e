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
  /** Seconds a deleted account waits, marked, before the prune deletes it; 0: deleted at once. */
  readonly deletionGracePeriod: number
  /** What the change of address's mail carries: a link, a six-digit code, or both. */
  readonly emailChangeBy: 'link' | 'code' | 'both'
}

/** The adapter methods of the deletion grace period (`deletionGracePeriod` above 0). */
export const GRACE_ADAPTER_METHODS = ['markUserDeleted', 'restoreDeletedUser', 'listUsersMarkedDeleted'] as const

/** The longest grace period: a year, well inside what a Date and a DATETIME hold. */
const MAX_GRACE_PERIOD = 366 * 24 * 3600

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
    throw new InvalidConfigurationError('account must be true or an object { recentSignInMaxAge?, deletionGracePeriod?, emailChangeBy?, server?, from?, sendMail? }.')
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
  const grace = options.deletionGracePeriod ?? 0
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_PERIOD) {
    throw new InvalidConfigurationError(`account.deletionGracePeriod must be a whole number of seconds from 0 (delete at once, the default) to ${MAX_GRACE_PERIOD} (a year), e.g. 30 * 24 * 3600; got ${JSON.stringify(grace)}.`)
  }
  const by = options.emailChangeBy ?? 'link'
  if (by !== 'link' && by !== 'code' && by !== 'both') throw new InvalidConfigurationError(`account.emailChangeBy must be 'link' (the default), 'code' or 'both'; got ${JSON.stringify(by)}.`)
  return Object.freeze({ recentSignInMaxAge: maxAge, server: options.server, from: options.from, sendMail: options.sendMail, keepOtherSessions: keep, deletionGracePeriod: grace, emailChangeBy: by })
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
  if ((config.features.account as ResolvedAccount).deletionGracePeriod > 0) assertGracePeriod(config)
  if (session.strategy === 'database' && typeof adapter.deleteSessionsByUserId !== 'function') {
    throw new InvalidConfigurationError("account ends a deleted user's sessions: the adapter needs deleteSessionsByUserId (KnexAdapter has it).")
  }
}

/**
 * What a grace period needs: the adapter's marks, and the background prune, which deletes the
 * accounts whose period has run out (without it they would stay marked for ever).
 * @throws InvalidConfigurationError
 */
function assertGracePeriod(config: ResolvedConfig): void {
  const missing = GRACE_ADAPTER_METHODS.filter((method) => typeof config.adapter?.[method] !== 'function')
  if (missing.length > 0) {
    throw new InvalidConfigurationError(`account.deletionGracePeriod needs an adapter with ${missing.join(', ')} (KnexAdapter has them, with the eleventh migration): it marks deleted accounts until their period runs out.`)
  }
  if (!config.features.prune) {
    throw new InvalidConfigurationError('account.deletionGracePeriod needs the background prune, which deletes the accounts whose grace period has run out: set prune: { everyMinutes: 60 } (or fewer minutes).')
  }
}
