/**
 * The password provider at init: its policy, link lifetimes and mail settings checked with errors
 * that name the option to fix, the adapter's methods asserted, the result frozen. Nothing here loads
 * the hashing, the common-password list or the mail code: the password routes import them on first
 * use (src/password/), so reading sessions never does.
 */
import { availableParallelism } from 'node:os'
import { availableArgon2 } from './argon2.js'
import type { LoggerInstance } from '../../logger.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { PasswordConfig, PasswordHashing, PasswordMail } from '../../providers/password.js'
import type { Adapter } from '../../types.js'
import { resolveUsernameSettings, type UsernameSettings } from './username-settings.js'

const ONE_DAY = 24 * 60 * 60
const ONE_HOUR = 60 * 60

/** A configured password provider. */
export interface PasswordProvider extends Omit<PasswordConfig, 'password'> {
  readonly password: PasswordSettings
}

/** The password provider's settings, resolved. */
export interface PasswordSettings {
  readonly requireEmailVerification: boolean
  readonly minLength: number
  readonly maxLength: number
  readonly isBreached: ((password: string) => boolean | Promise<boolean>) | undefined
  /** The app's own hashing; undefined: scrypt at the defaults (src/features/password/hash.ts). */
  readonly hashing: PasswordHashing | undefined
  /** The cap on concurrent hashes (limit.ts): at most `concurrency` at once, `queue` waiting. */
  readonly hashingLimit: { readonly concurrency: number; readonly queue: number }
  /** What the verification mail carries: a link, a code, or both. */
  readonly verifyBy: 'link' | 'code' | 'both'
  /** Seconds. */
  readonly verificationMaxAge: number
  readonly resetMaxAge: number
  /** The `usernames` option resolved; undefined when it is off. */
  readonly usernames: UsernameSettings | undefined
  /** Where the mails go: the app's function, or an SMTP server (or the console) and a sender. */
  readonly mail: { readonly sendMail: (mail: PasswordMail) => Promise<void> } | { readonly server: unknown; readonly from: string }
}

/** The adapter methods the password provider calls. */
export const PASSWORD_ADAPTER_METHODS = [
  'getUser',
  'getUserByEmail',
  'createUser',
  'updateUser',
  'getUserPassword',
  'setUserPassword',
  'deleteUserPassword',
  'createVerificationToken',
  'useVerificationToken',
] as const

/** The adapter methods usernames add (the `usernames` option). */
export const USERNAME_ADAPTER_METHODS = ['getUserByUsername', 'getUsername', 'setUsername', 'deleteUsername'] as const

/** An adapter with the methods passwords need (checked at init). */
export type PasswordAdapter = Adapter & Required<Pick<Adapter, (typeof PASSWORD_ADAPTER_METHODS)[number]>>

/** Whether a credentials provider of the config is the password provider. */
export function isPasswordProvider(provider: { type: string }): provider is PasswordProvider {
  return provider.type === 'credentials' && typeof (provider as { password?: unknown }).password === 'object' && (provider as { password?: unknown }).password !== null
}

/**
 * Resolves the password provider.
 *
 * @param env For `AUTH_EMAIL_SERVER` and `AUTH_EMAIL_FROM`.
 * @param nodemailer The first configured Nodemailer provider's server and sender, if any.
 * @throws InvalidConfigurationError naming the option (or variable) to set.
 */
export function resolvePasswordProvider(
  input: PasswordConfig,
  env: Readonly<Record<string, string | undefined>>,
  production: boolean,
  nodemailer: { server?: unknown; from?: unknown } | undefined,
): PasswordProvider {
  const where = `Password provider "${input.id}"`
  const fail = (message: string): never => {
    throw new InvalidConfigurationError(`${where}: ${message}`)
  }
  const options = input.password
  const minLength = options.minLength ?? 8
  const maxLength = options.maxLength ?? 256
  // The common-password list holds passwords of 8 characters and more: shorter ones would pass it.
  if (!Number.isSafeInteger(minLength) || minLength < 8) fail(`minLength must be a whole number of at least 8 (NIST SP 800-63B's floor); got ${String(minLength)}.`)
  if (!Number.isSafeInteger(maxLength) || maxLength < Math.max(minLength, 64) || maxLength > 4096) {
    fail(`maxLength must be a whole number from max(minLength, 64) to 4096 (NIST: allow at least 64); got ${String(maxLength)}.`)
  }
  for (const name of ['verificationMaxAge', 'resetMaxAge'] as const) {
    const value = options[name]
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)) fail(`${name} must be a number of seconds above 0; got ${String(value)}.`)
  }
  if (options.isBreached !== undefined && typeof options.isBreached !== 'function') fail('isBreached must be a function.')
  const verifyBy = options.verifyBy ?? 'link'
  if (verifyBy !== 'link' && verifyBy !== 'code' && verifyBy !== 'both') fail(`verifyBy must be 'link' (the default), 'code' or 'both'; got ${JSON.stringify(verifyBy)}.`)
  const hashing = options.hashing
  if (hashing !== undefined && (typeof hashing?.hash !== 'function' || typeof hashing.verify !== 'function' || (hashing.needsRehash !== undefined && typeof hashing.needsRehash !== 'function'))) {
    fail('hashing must be { hash(password), verify(password, stored), needsRehash?(stored) }.')
  }
  return Object.freeze({
    id: input.id,
    name: typeof input.name === 'string' && input.name ? input.name : 'Password',
    type: 'credentials',
    credentials: input.credentials,
    authorize: undefined,
    password: Object.freeze({
      requireEmailVerification: options.requireEmailVerification === true,
      minLength,
      maxLength,
      isBreached: options.isBreached,
      hashing,
      hashingLimit: resolveHashingLimit(options.hashingLimit, fail),
      verifyBy,
      verificationMaxAge: options.verificationMaxAge ?? ONE_DAY,
      resetMaxAge: options.resetMaxAge ?? ONE_HOUR,
      usernames: resolveUsernameSettings(options.usernames, fail),
      mail: mailSettings(options, env, production, nodemailer, fail),
    }),
  })
}

/** Whether the scrypt fallback was said already in this process (`announceHashing`). */
const announced = { scrypt: false }

/**
 * Says once per process, at init, that new passwords are hashed with scrypt because there is no
 * Argon2id here (node:crypto's `argon2`, Node 24.7 and later, nor the optional `@node-rs/argon2`),
 * when the provider uses the default hashing.
 *
 * @param argon2 Whether an Argon2id engine is at hand; tests pass false.
 * @param said The once-per-process flag; tests pass their own.
 */
export function announceHashing(provider: PasswordProvider, logger: LoggerInstance, argon2 = availableArgon2().engine !== undefined, said = announced): void {
  if (provider.password.hashing !== undefined || argon2 || said.scrypt) return
  said.scrypt = true
  logger.warn(
    'PasswordHashingScrypt',
    `Password provider "${provider.id}": no Argon2id here (node:crypto's argon2 came in Node 24.7, this is ${process.version}, and the optional @node-rs/argon2 is not installed), so new passwords are hashed with scrypt (N = 2^17: about 11 times the CPU time and 7 times the memory of Argon2id per sign-in, npm run bench password). On Node 24.7 or later, or with npm install @node-rs/argon2, new passwords get Argon2id, and scrypt hashes are replaced at their next sign-in.`,
  )
}

/** The default queue of `hashingLimit`: waiting hashes past the running ones. */
export const DEFAULT_HASHING_QUEUE = 16

/**
 * The default `hashingLimit.concurrency`: one thread of libuv's pool left to the app's other I/O
 * (UV_THREADPOOL_SIZE, 4 by default), and no more than the cores (more at once only adds latency
 * and memory, not sign-ins per second).
 */
export function defaultHashingConcurrency(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4
  return Math.max(1, Math.min(pool - 1, availableParallelism()))
}

function resolveHashingLimit(option: PasswordConfig['password']['hashingLimit'], fail: (message: string) => never): PasswordSettings['hashingLimit'] {
  if (option !== undefined && (typeof option !== 'object' || option === null)) fail('hashingLimit must be an object such as { concurrency: 2, queue: 16 }.')
  const concurrency = option?.concurrency ?? defaultHashingConcurrency()
  const queue = option?.queue ?? DEFAULT_HASHING_QUEUE
  if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > 1024) fail(`hashingLimit.concurrency must be a whole number from 1 to 1024; got ${String(concurrency)}.`)
  if (!Number.isSafeInteger(queue) || queue < 0 || queue > 100_000) fail(`hashingLimit.queue must be a whole number from 0 to 100000; got ${String(queue)}.`)
  return Object.freeze({ concurrency, queue })
}

function mailSettings(
  options: PasswordConfig['password'],
  env: Readonly<Record<string, string | undefined>>,
  production: boolean,
  nodemailer: { server?: unknown; from?: unknown } | undefined,
  fail: (message: string) => never,
): PasswordSettings['mail'] {
  if (options.sendMail !== undefined) {
    if (typeof options.sendMail !== 'function') fail('sendMail must be a function.')
    return Object.freeze({ sendMail: options.sendMail })
  }
  const server = options.server ?? (env.AUTH_EMAIL_SERVER || undefined) ?? nodemailer?.server
  if (server === undefined || server === null || server === '') {
    return fail(
      'it sends verification and reset mails, and has nowhere to send them: set AUTH_EMAIL_SERVER (e.g. smtps://user:password@smtp.example.com:465), pass server (or sendMail), or configure a Nodemailer provider; server: \'console\' prints the links in development.',
    )
  }
  if (typeof server !== 'string' && typeof server !== 'object') fail(`server must be an SMTP URL, nodemailer transport options, or 'console'; got ${typeof server}.`)
  if (server === 'console' && production) fail("server 'console' only prints the links, for development; with NODE_ENV=production set AUTH_EMAIL_SERVER (or server) to an SMTP server.")
  const from = options.from ?? (env.AUTH_EMAIL_FROM || undefined) ?? (typeof nodemailer?.from === 'string' ? nodemailer.from : undefined) ?? (server === 'console' ? 'no-reply@localhost' : undefined)
  if (typeof from !== 'string' || from.trim() === '') return fail('it has no sender: set AUTH_EMAIL_FROM (e.g. "Example <no-reply@example.com>") or pass from.')
  return Object.freeze({ server, from })
}

/**
 * @throws InvalidConfigurationError when the adapter lacks a method the password provider calls,
 *   naming them, or when there is no adapter.
 */
export function assertPasswordAdapter(providerId: string, adapter: Adapter | undefined, usernames = false): void {
  if (!adapter) {
    throw new InvalidConfigurationError(
      `Password provider "${providerId}" stores users and password hashes: it needs an adapter, e.g. adapter: KnexAdapter(knex) from "portcullis/adapters/knex" (run its migrations, the sixth creates the Password table).`,
    )
  }
  const missing = PASSWORD_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) {
    throw new InvalidConfigurationError(
      `Password provider "${providerId}": the adapter has no ${missing.join(', ')}. KnexAdapter has them all (after the portcullis_password migration); another adapter must implement them.`,
    )
  }
  const noUsernames = usernames ? USERNAME_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function') : []
  if (noUsernames.length > 0) {
    throw new InvalidConfigurationError(
      `Password provider "${providerId}" has usernames on: the adapter has no ${noUsernames.join(', ')}. KnexAdapter has them (after the portcullis_usernames migration); another adapter must implement them, or turn usernames off.`,
    )
  }
}
