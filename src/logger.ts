/**
 * The logger every part of Portcullis writes to. Callers pass a code and a message, never a token,
 * cookie, password or secret: those stay out of logs by construction, not by filtering.
 */

/** The three levels the spec names (§2.1 `logger`). */
export interface LoggerInstance {
  error: (code: string, ...message: unknown[]) => void
  warn: (code: string, ...message: unknown[]) => void
  debug: (code: string, ...message: unknown[]) => void
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

/**
 * Builds the logger: each level the caller gives replaces the built-in one (spec §2.1); the
 * built-in `debug` prints only with `debug: true`. A logger that throws is ignored: logging must
 * never break a sign-in.
 */
export function createLogger(custom: Partial<LoggerInstance> | undefined, debug: boolean): LoggerInstance {
  const levels: LoggerInstance = {
    error: custom?.error ?? ((code, ...message) => console.error(`${prefix}[error] ${code}`, ...message)),
    warn: custom?.warn ?? ((code, ...message) => console.warn(`${prefix}[warn] ${code}`, ...message)),
    debug: custom?.debug ?? (debug ? (code, ...message) => console.debug(`${prefix}[debug] ${code}`, ...message) : () => {}),
  }
  // Every line is bounded and escaped whatever a message embeds; client values are cut shorter (logValue).
  const guard =
    (level: keyof LoggerInstance) =>
    (code: string, ...message: unknown[]): void => {
      try {
        levels[level](code, ...message.map((part) => (typeof part === 'string' ? escapeUnsafe(cut(part, MAX_ARGUMENT)) : part)))
      } catch {
        // A broken logger must not take the request down with it.
      }
    }
  return Object.freeze({ error: guard('error'), warn: guard('warn'), debug: guard('debug') })
}
