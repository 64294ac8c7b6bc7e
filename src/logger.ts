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
  const guard =
    (level: keyof LoggerInstance) =>
    (code: string, ...message: unknown[]): void => {
      try {
        levels[level](code, ...message)
      } catch {
        // A broken logger must not take the request down with it.
      }
    }
  return Object.freeze({ error: guard('error'), warn: guard('warn'), debug: guard('debug') })
}
