/**
 * Events (spec §6): hooks that return nothing. The app's handlers are awaited, so what they write is
 * written before the response goes out, but one that throws is logged and the flow goes on. The
 * features' observers (the audit log's) are called first and never awaited: they queue their work.
 *
 * Also how any error reaches a log line or a `cause` (describeError, redactError): without the
 * values a database driver puts into its errors, which are session tokens, e-mails and passwords.
 */
import type { ResolvedConfig } from './config/types.js'
import { eventFields } from './event-fields.js'
import { countSignIn } from './telemetry/sign-in.js'
import type { AnyEvent, EventFields, EventMessage, EventName } from './types.js'

/** A feature's observer of every event but `session` (`FeatureHooks.event`): called at once, never awaited. */
export type EventObserver = (config: ResolvedConfig, name: EventName, message: unknown, fields: EventFields) => void

const observersOf = new WeakMap<ResolvedConfig, readonly EventObserver[]>()

/** Records the enabled features' observers of `config`'s events (resolveConfig, once). */
export function recordObservers(config: ResolvedConfig, observers: readonly EventObserver[]): void {
  if (observers.length > 0) observersOf.set(config, Object.freeze([...observers]))
}

/**
 * Runs the `name` event handler, if any, then the catch-all `'*'` (for every event but `session`,
 * which comes with each read); never throws.
 */
export async function emitEvent<Name extends EventName>(config: ResolvedConfig, name: Name, message: EventMessage<Name>): Promise<void> {
  if (name === 'signIn' && config.telemetry) countSignIn(config, message as EventMessage<'signIn'>)
  if (name !== 'session') {
    const observers = observersOf.get(config)
    if (observers) observe(config, observers, name, message)
  }
  const handler = config.events[name] as ((message: unknown) => unknown) | undefined
  if (handler) await runHandler(config, `The ${name} event handler`, name, () => handler(message))
  const all = config.events['*'] as ((...event: AnyEvent) => unknown) | undefined
  if (all && name !== 'session') await runHandler(config, `The '*' event handler (on ${name})`, name, () => all(...([name, message, eventFields(name, message)] as AnyEvent)))
}

/** The features' observers, at once and not awaited; one that throws is logged and the others still run. */
function observe(config: ResolvedConfig, observers: readonly EventObserver[], name: EventName, message: unknown): void {
  const fields = eventFields(name, message as EventMessage<EventName>)
  for (const observer of observers) {
    try {
      observer(config, name, message, fields)
    } catch (error) {
      config.logger.error('EventError', `A feature's observer of the ${name} event threw; the ${name} went ahead.`, describeError(error))
    }
  }
}

async function runHandler(config: ResolvedConfig, handler: string, name: string, run: () => unknown): Promise<void> {
  try {
    await run()
  } catch (error) {
    config.logger.error('EventError', `${handler} threw; the ${name} went ahead.`, describeError(error))
  }
}

/**
 * An error as a log line: its name, its `code` (a driver's `SQLITE_ERROR`, `42P01`, `ER_DUP_ENTRY`),
 * and its message as {@link redactError} leaves it; never its other properties (which may hold
 * request data).
 *
 * @example
 * describeError(new Error('connect ECONNREFUSED 10.0.0.5:5432')) // 'Error: connect ECONNREFUSED 10.0.0.5:5432'
 */
export function describeError(error: unknown): string {
  const redacted = redactError(error)
  const code = typeof redacted.code === 'string' && !redacted.message.includes(redacted.code) ? ` [${redacted.code}]` : ''
  return `${redacted.name}${code}: ${redacted.message}`
}

/** What {@link redactError} keeps of an error: identifiers that say what failed, never a value. */
export interface RedactedError extends Error {
  code?: string | number | undefined
  errno?: number | undefined
  sqlState?: string | undefined
  schema?: string | undefined
  table?: string | undefined
  column?: string | undefined
  constraint?: string | undefined
}

// The properties of a driver error that name what failed (pg, mysql2, better-sqlite3). The others
// (`sql`, `bindings`, `parameters`, pg's `detail` and `where`, mysql2's `sqlMessage`) hold values.
const KEPT_PROPERTIES = ['code', 'errno', 'sqlState', 'schema', 'table', 'column', 'constraint'] as const

/**
 * A copy of `error` that is safe to log, serialise or hand to the app as a `cause`: same name and
 * stack frames, the identifying properties above, and a message without values. A database error's
 * message loses the SQL that Knex puts in front of it (`<sql with its bound values> - <driver
 * message>`) and its quoted literals (`Duplicate entry '…'`), but keeps the names of tables, keys
 * and columns. Nested causes and every other property are dropped: they are where drivers keep the
 * query and its parameters, which are session tokens, e-mail addresses and passwords.
 *
 * @param values Strings (or the string properties of objects) of at least 4 characters to blank
 *   out wherever they appear: the arguments of the adapter call, the submitted credentials.
 * @example
 * redactError(knexError).message // 'no such table: Session' (code 'SQLITE_ERROR')
 */
export function redactError(error: unknown, values: readonly unknown[] = []): RedactedError {
  const source = (error !== null && typeof error === 'object' ? error : {}) as Record<string, unknown>
  const name = typeof source.name === 'string' && source.name ? source.name : 'Error'
  let message = typeof source.message === 'string' ? source.message : error instanceof Error ? '' : String(error)
  if (isDatabaseError(source, message)) message = withoutQueryValues(message)
  message = withoutValues(message, values)

  const redacted: RedactedError = new Error(message)
  Object.defineProperty(redacted, 'name', { value: name, writable: true, configurable: true })
  for (const key of KEPT_PROPERTIES) {
    const value = source[key]
    if (typeof value === 'number') Object.assign(redacted, { [key]: value })
    else if (typeof value === 'string') Object.assign(redacted, { [key]: withoutValues(value, values) })
  }
  // The frames say where it failed and hold no data; the lines before them are the unredacted message.
  const frames = typeof source.stack === 'string' ? source.stack.split('\n').filter((line) => STACK_FRAME.test(line)) : []
  redacted.stack = [`${name}: ${message}`, ...frames].join('\n')
  return redacted
}

// `    at fn (file.js:1:2)`, `    at file.js:1:2`, `    at Promise.all (index 0)`: not a line of a multi-line SQL message.
const STACK_FRAME = /^\s+at .*(?::\d+:\d+\)?|\((?:<anonymous>|native|index \d+)\))$/
// Knex's message of a failed query: the SQL, with the bound values written into it, then " - ".
const KNEX_QUERY_PREFIX = /^\s*(?:select|insert|update|delete|with|create|alter|drop|truncate|pragma|begin|commit|rollback|savepoint|release|replace|merge|call|set|show|lock|explain)\b[\s\S]* - /i
// A quoted SQL literal ('it''s'), unless it names a table, key, column, constraint or database.
const QUOTED_LITERAL = /(\b(?:table|key|column|constraint|index|database|schema)\s+)?'(?:[^'\\]|\\.|'')*'/gi
// PostgreSQL quotes the rejected value in double quotes: `invalid input syntax for type uuid: "…"`.
const POSTGRES_VALUE = /(invalid input (?:syntax|value) for [^:]*: )"(?:[^"]|"")*"/gi

function isDatabaseError(error: Record<string, unknown>, message: string): boolean {
  if (KNEX_QUERY_PREFIX.test(message)) return true
  if (['sql', 'bindings', 'sqlMessage', 'sqlState'].some((key) => key in error)) return true
  const code = error.code
  return typeof code === 'string' && (/^(?:SQLITE_|ER_)/.test(code) || ('severity' in error && /^[0-9A-Z]{5}$/.test(code)))
}

function withoutQueryValues(message: string): string {
  return message
    .replace(KNEX_QUERY_PREFIX, '')
    .replace(QUOTED_LITERAL, (literal, identifier: string | undefined) => (identifier ? literal : "'…'"))
    .replace(POSTGRES_VALUE, '$1"…"')
}

function withoutValues(text: string, values: readonly unknown[]): string {
  const secrets = new Set<string>()
  for (const value of values) {
    if (typeof value === 'string') secrets.add(value)
    else if (value && typeof value === 'object') for (const field of Object.values(value)) if (typeof field === 'string') secrets.add(field)
  }
  let redacted = text
  // Longest first, so that a value containing a shorter one is blanked out whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) if (secret.length >= 4) redacted = redacted.split(secret).join('[redacted]')
  return redacted
}
