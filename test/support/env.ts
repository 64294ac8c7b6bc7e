/** Environment variables a test file sets: cleared before each test and restored after it. */
import { afterEach, beforeEach } from '@jest/globals'

/**
 * Registers hooks that remove `keys` from `process.env` before each test (except `keep`, which
 * starts as it was) and put back what was there after it.
 */
export function isolateEnv(keys: readonly string[], keep: readonly string[] = []): void {
  let saved: Record<string, string | undefined> = {}
  beforeEach(() => {
    saved = Object.fromEntries(keys.map((key) => [key, process.env[key]]))
    for (const key of keys) if (!keep.includes(key)) delete process.env[key]
  })
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  })
}
