/**
 * The logger every part of Portcullis writes to. Callers pass a code and a message, never a token,
 * cookie, password or secret: those stay out of logs by construction, not by filtering.
 */

/** The three levels the spec names (§2.1 `logger`), in Auth.js's form: `(code, ...message)`. */
export interface LoggerInstance {
  error: (code: string, ...message: unknown[]) => void
  warn: (code: string, ...message: unknown[]) => void
  debug: (code: string, ...message: unknown[]) => void
}

/** A log line's level. */
export type LogLevel = keyof LoggerInstance

/**
 * What a log line is about, beside its code and message. Each is an identifier, never a token or
 * a secret; the ones a client chooses (`requestId`, `route`) are cut to 300 characters and their
 * control and bidirectional characters escaped, as in every log line.
 */
export interface LogFields {
  /** The request's id: `req.id` (pino-http, express-request-id), else its `X-Request-Id` header. */
  requestId?: string | undefined
  /** The request's method. */
  method?: string | undefined
  /** The request's path, without its query (which may hold a token). */
  route?: string | undefined
  /** The provider of the auth route (`/signin/:provider`, `/callback/:provider`), or the one the line is about. */
  provider?: string | undefined
  /** The user the line is about, or the signed-in user of the request (`req.auth`). */
  userId?: string | undefined
  /** The administrator impersonating the request's signed-in user (`req.auth.impersonatedBy`). */
  impersonatedBy?: string | undefined
}

/** One log line in the structured form: what `logger.log(record)` receives. */
export interface LogRecord extends LogFields {
  level: LogLevel
  /** A stable code (`AdapterError`, `UntrustedHost`, …): what to alert on. */
  code: string
  /** What happened and what to change, in words. */
  message: string
}

/**
 * The `logger` option: Auth.js's levels, `(code, ...message)`, any of which replaces the built-in one;
 * or `log(record)`, the structured form; or a pino or winston logger as it is (docs/configuration.md).
 */
export type LoggerOption = Partial<LoggerInstance> & {
  /** The structured form: each line as one {@link LogRecord}. Used alone, or by a logger with `child()` (winston). */
  log?: ((record: LogRecord) => void) | undefined
}

/** Fields a caller adds to one line: the last argument of a level's call, `logFields({ userId })`. */
class ExtraFields {
  constructor(readonly fields: LogFields) {}
}

/**
 * Fields for one line, passed as its last argument: `logger.warn('Code', 'message', logFields({ userId }))`.
 * The structured forms get them; Auth.js's `(code, ...message)` form does not (its arguments stay as they were).
 */
export function logFields(fields: LogFields): unknown {
  return new ExtraFields(fields)
}

const prefix = '[portcullis]'

/** The most characters of one client-chosen value that reach a log line. */
const MAX_CLIENT_VALUE = 300
/** The most characters of one argument of any log line: a bound for whatever a value-less message embeds. */
const MAX_ARGUMENT = 4000
// C0 and C1 controls (a newline forges a log line), the line and paragraph separators (the same in
// JSON-reading log tools and JavaScript), and the bidirectional marks and overrides (U+202E shows text
// reversed in a terminal or log viewer).
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text
  // Not between the two halves of a surrogate pair.
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max
  return `${text.slice(0, end)}… (${text.length} characters)`
}

/**
 * A value the client chose (a query parameter, a path, a header), as it may appear in a log line:
 * quoted, cut to 300 characters, control, line-separator and bidirectional characters escaped. A
 * 50 KB `?error=` is then one short line that cannot pose as another or reverse what follows.
 *
 * @example
 * logValue('access_denied\u2028[portcullis][error] forged') // '"access_denied\\u2028[portcullis][error] forged"'
 */
export function logValue(value: unknown): string {
  return escapeUnsafe(JSON.stringify(cut(String(value), MAX_CLIENT_VALUE)))
}

/** Where each line goes: the app's logger, called in the form it takes. */
type Sink = (level: LogLevel, code: string, parts: unknown[], fields: () => LogFields) => void

/**
 * Builds the logger. The app's logger is called in the form it takes:
 * - pino (a logger with `bindings()` and `child()`): `logger[level]({ code, ...fields }, message)`;
 * - winston (with `log()` and `child()`), or an object with only `log()`: `logger.log({ level, code, message, ...fields })`;
 * - anything else (`console`, Auth.js's form): each level it has replaces the built-in one, `(code, ...message)`;
 *   the built-in `debug` prints only with `debug: true`.
 *
 * A logger that throws is ignored: logging must never break a sign-in.
 *
 * @param requestFields The fields of the request being served, if any (http/log-fields.ts).
 */
export function createLogger(custom: LoggerOption | undefined, debug: boolean, requestFields: () => LogFields | undefined = () => undefined): LoggerInstance {
  const sink = sinkFor(custom, debug)
  const fieldsOf = (extra: LogFields | undefined) => (): LogFields => {
    const fields: LogFields = { ...requestFields() }
    if (extra) for (const [key, value] of Object.entries(extra)) if (value !== undefined) fields[key as keyof LogFields] = value
    return fields
  }
  // Every line is bounded and escaped whatever a message embeds; client values are cut shorter (logValue).
  const guard =
    (level: LogLevel) =>
    (code: string, ...message: unknown[]): void => {
      try {
        const last = message[message.length - 1]
        const extra = last instanceof ExtraFields ? last.fields : undefined
        const parts = (extra ? message.slice(0, -1) : message).map((part) => (typeof part === 'string' ? escapeUnsafe(cut(part, MAX_ARGUMENT)) : part))
        sink(level, code, parts, fieldsOf(extra))
      } catch {
        // A broken logger must not take the request down with it.
      }
    }
  return Object.freeze({ error: guard('error'), warn: guard('warn'), debug: guard('debug') })
}

function sinkFor(logger: LoggerOption | undefined, printDebug: boolean): Sink {
  const kind = loggerKind(logger)
  if (kind === 'pino') {
    // pino's own form: the fields first, then the message. Called as a method: pino reads `this`.
    const pino = logger as unknown as Record<LogLevel, (this: unknown, fields: object, message: string) => void>
    return (level, code, parts, fields) => pino[level]({ code, ...fields() }, messageOf(parts))
  }
  if (kind === 'record') {
    const log = logger!.log!
    return (level, code, parts, fields) => log.call(logger, { level, code, message: messageOf(parts), ...fields() })
  }
  return (level, code, parts) => {
    const method = logger?.[level]
    if (method) method.call(logger, code, ...parts)
    else if (level !== 'debug') console[level](`${prefix}[${level}] ${code}`, ...parts)
    else if (printDebug) console.debug(`${prefix}[debug] ${code}`, ...parts)
  }
}

/** Which form the app's logger takes (see createLogger). */
function loggerKind(logger: LoggerOption | undefined): 'pino' | 'record' | 'positional' {
  if (!logger) return 'positional'
  const has = (name: string) => typeof (logger as Record<string, unknown>)[name] === 'function'
  if (has('bindings') && has('child')) return 'pino'
  if (has('log') && (has('child') || !(has('error') || has('warn') || has('debug')))) return 'record'
  return 'positional'
}

/** The message parts of a line as one string, for the structured forms. */
function messageOf(parts: readonly unknown[]): string {
  return parts.map((part) => (typeof part === 'string' ? part : part instanceof Error ? `${part.name}: ${part.message}` : String(part))).join(' ')
}

/** A client-chosen field value as a structured line holds it: cut and escaped as logValue does, without its quotes. */
export function clientField(value: string): string {
  return escapeUnsafe(cut(value, MAX_CLIENT_VALUE))
}
