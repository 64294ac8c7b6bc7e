/**
 * The suites' time limits. A limit here ends a hang; it never judges speed. On a loaded two-core
 * machine (the whole suite's workers beside PostgreSQL, MariaDB and Chromium, or other jobs) a step
 * takes many times what it takes alone: a plain `node` running the Knex CLI, under a second alone,
 * ran past a fixed 10 s `spawnSync` timeout there (test/migrations/knex-cli.test.ts, ETIMEDOUT).
 * So a test waits for the event itself (a child's exit or ready line, a response, a mail, a condition
 * it polls for), and the limit is only how long before that event counts as never coming.
 *
 * The two numbers nest: one step's limit is below a test's (jest.config.ts `testTimeout`, which
 * must stay equal to TEST_LIMIT_MS), so a hung step fails with its own message (what it waited for,
 * what the child printed) rather than Jest's bare "Exceeded timeout". Note that `spawnSync` and
 * `execFileSync` block the event loop: Jest's timer cannot fire while they run, so their own
 * `timeout` is the only guard a hung child has.
 */

/** How long one awaited event may take (a child process's run or start, a response, a mail, a polled condition). */
export const STEP_LIMIT_MS = 60_000

/** A test's (and a `beforeAll`'s) limit: jest.config.ts's `testTimeout`. Longer only for tests of several long steps. */
export const TEST_LIMIT_MS = 120_000

/**
 * Resolves once `condition` holds, checking every `everyMs`; rejects naming `what` after STEP_LIMIT_MS.
 * Not a timing assertion: the limit is a bound on a hang.
 */
export async function until(what: string, condition: () => boolean | Promise<boolean>, everyMs = 10): Promise<void> {
  const end = Date.now() + STEP_LIMIT_MS
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${STEP_LIMIT_MS / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
