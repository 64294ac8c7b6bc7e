/**
 * The configured adapter as the rest of Portcullis calls it. Every failure becomes an
 * `AdapterError`, logged once here with its cause, so a database outage fails the request with a
 * clear code (and never an unhandled rejection); the next request simply tries again. The cause is
 * a redacted copy of the driver's error (redactError): the original holds the query and its bound
 * values, which are session and verification tokens, and any logger that serialises `cause` would
 * print them.
 */
import { AdapterError, InvalidConfigurationError } from '../errors.js'
import { describeError, redactError } from '../events.js'
import type { LoggerInstance } from '../logger.js'
import { DEFAULT_STORE_TIMEOUTS, withDeadline, type StoreTimeouts } from '../session/store/deadline.js'
import type { Adapter } from '../types.js'

/** The methods database sessions need. */
export const SESSION_METHODS = ['createSession', 'getSessionAndUser', 'updateSession', 'deleteSession'] as const

/** An adapter that has the session methods (checked at init when the strategy is `database`). */
export type SessionAdapter = Adapter & Required<Pick<Adapter, (typeof SESSION_METHODS)[number]>>

/**
 * A copy of `adapter` whose methods turn any failure into an `AdapterError`.
 *
 * @param timeouts `session.storeTimeoutMs`: the session methods (every request's read, sign-in's
 *   and sign-out's writes) that get no answer within it fail as a failed call does. The statement
 *   itself is the driver's: it runs on until the app's pool or database settings end it.
 * @throws InvalidConfigurationError when `adapter` is not an object of functions.
 */
export function guardAdapter(adapter: Adapter, logger: LoggerInstance, timeouts: StoreTimeouts = DEFAULT_STORE_TIMEOUTS): Adapter {
  if (!adapter || typeof adapter !== 'object') {
    throw new InvalidConfigurationError('adapter must be an adapter object, e.g. KnexAdapter(knex) from "portcullis/adapters/knex".')
  }
  const guarded: Record<string, unknown> = {}
  for (const method of methodNames(adapter)) {
    const fn = (adapter as Record<string, (...args: unknown[]) => unknown>)[method]!
    const ms = method === 'getSessionAndUser' ? timeouts.readMs : (SESSION_METHODS as readonly string[]).includes(method) ? timeouts.writeMs : undefined
    guarded[method] = async (...args: unknown[]) => {
      try {
        const answer = fn.apply(adapter, args)
        return await (ms === undefined ? answer : withDeadline(Promise.resolve(answer), ms, `the adapter's ${method}()`))
      } catch (error) {
        const cause = redactError(error, args)
        const hint = missingTableHint(error)
        if (hint) logger.error('AdapterError', `The adapter's ${method}() failed: ${hint}`, describeError(cause))
        else logger.error('AdapterError', `The adapter's ${method}() failed:`, describeError(cause))
        throw new AdapterError(method, { cause, hint })
      }
    }
  }
  return guarded as Adapter
}

/**
 * The advice for a database whose tables were never created (the migrations not run), from the
 * driver's error: SQLite `no such table: User`, PostgreSQL 42P01 `relation "User" does not exist`,
 * MySQL/MariaDB ER_NO_SUCH_TABLE `Table 'app.User' doesn't exist`. Undefined for anything else.
 */
export function missingTableHint(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined
  const { code, message } = error as { code?: unknown; message?: unknown }
  const text = typeof message === 'string' ? message : ''
  const table =
    /no such table: (\S+)/.exec(text)?.[1] ??
    (code === '42P01' ? /relation "([^"]+)" does not exist/.exec(text)?.[1] : undefined) ??
    (code === 'ER_NO_SUCH_TABLE' ? /Table '(?:[^'.]*\.)?([^']+)' doesn't exist/.exec(text)?.[1] : undefined)
  if (!table) return undefined
  return `its table ${table} does not exist. Run the migrations: \`npx knex migrate:latest\` with a knexfile whose migrations.directory is node_modules/portcullis/migrations, or db.migrate.latest({ migrationSource: migrationSource() }) from portcullis/adapters/knex.`
}

// Own and inherited methods: an adapter may be a plain object or an instance of a class.
function methodNames(adapter: object): Set<string> {
  const names = new Set<string>()
  for (let proto: object | null = adapter; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof (adapter as Record<string, unknown>)[name] === 'function') names.add(name)
    }
  }
  return names
}

/** @throws InvalidConfigurationError naming the session methods the adapter lacks. */
export function assertSessionAdapter(adapter: Adapter): asserts adapter is SessionAdapter {
  const missing = SESSION_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) {
    throw new InvalidConfigurationError(
      `session.strategy "database" needs an adapter with ${missing.join(', ')}; this adapter lacks them. Use KnexAdapter, or session.strategy "jwt".`,
    )
  }
}
