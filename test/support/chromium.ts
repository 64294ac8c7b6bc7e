/**
 * Debian's Chromium for the real-browser suites, driven by playwright-core. A suite declared with
 * `describeWithChromium` runs when /usr/bin/chromium is there; without it, it skips with a line
 * saying so (`apt-get install -y chromium`), or, with `CI` set, fails instead.
 */
import { describe, it, jest } from '@jest/globals'
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { isCI } from './databases.js'
import { TEST_LIMIT_MS } from './time-limits.js'

export const CHROMIUM = '/usr/bin/chromium'

/** Each test's limit in a file of browser suites: the suites' own (a bound on a hang, see time-limits.ts). */
export const BROWSER_TEST_TIMEOUT = TEST_LIMIT_MS

/** Declares `suite` under `title` when Chromium is installed; see the file's comment for when it is not. */
export function describeWithChromium(title: string, suite: () => void): void {
  if (existsSync(CHROMIUM)) {
    // A browser flow takes 2-5 s on a quiet machine and several times that when the
    // suite's other workers load both cores (a 15 s limit ran out in CI).
    jest.setTimeout(BROWSER_TEST_TIMEOUT)
    describe(title, suite)
  } else if (isCI()) {
    describe(title, () => {
      it(`finds Chromium at ${CHROMIUM} (required when CI is set)`, () => {
        throw new Error(`Chromium not found at ${CHROMIUM}: CI must run the browser test; install it with apt-get install -y chromium (.ci/run does).`)
      })
    })
  } else {
    const why = `Chromium not found at ${CHROMIUM}`
    // Straight to stderr: Jest drops the console output of a file whose tests were all skipped.
    process.stderr.write(`\n${why}: apt-get install -y chromium; skipping "${title}" (set CI=true to make this a failure)\n`)
    describe.skip(`${title} [skipped: ${why}]`, suite)
  }
}

/** Headless Chromium with the flags this machine needs (no sandbox as root; no background networking on a closed network). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-background-networking'] })
}
