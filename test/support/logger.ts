/**
 * One recording logger for the suites: Portcullis's log lines go into an array the test can read
 * (`logger.lines`, `logger.codes()`) instead of onto the console, so a green run prints little
 * beyond Jest's summary. Lines are also kept for the test that is running: when it fails, the test
 * environment (test/support/environment.cjs) prints them under the failure, so nothing is lost
 * where it matters.
 *
 * @example
 * const logger = recordingLogger()
 * const { handlers } = Portcullis({ secret, providers, logger })
 * // … requests …
 * expect(logger.codes('warn')).toContain('UntrustedHost')
 */
import type { LoggerInstance } from 'portcullis'

export type LogLevel = keyof LoggerInstance

/** One call of the logger. */
export interface LogLine {
  level: LogLevel
  code: string
  message: unknown[]
}

/** A logger that records; `lines` holds every call since it was made (or last `clear()`ed). */
export interface RecordingLogger extends LoggerInstance {
  readonly lines: LogLine[]
  /** The codes logged, in order, at `level` or at any level. */
  codes(level?: LogLevel): string[]
  clear(): void
}

/** What the test environment prints when the running test fails (see environment.cjs). */
const CURRENT_TEST_LINES = '__portcullisTestLogLines'

function currentTestLines(): LogLine[] | undefined {
  return (globalThis as Record<string, unknown>)[CURRENT_TEST_LINES] as LogLine[] | undefined
}

export function recordingLogger(): RecordingLogger {
  const lines: LogLine[] = []
  const record = (level: LogLevel) => (code: string, ...message: unknown[]) => {
    const line = { level, code, message }
    lines.push(line)
    currentTestLines()?.push(line)
  }
  return {
    lines,
    error: record('error'),
    warn: record('warn'),
    debug: record('debug'),
    codes: (level) => lines.filter((line) => !level || line.level === level).map((line) => line.code),
    clear: () => void lines.splice(0),
  }
}
