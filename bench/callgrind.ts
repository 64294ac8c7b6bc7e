/**
 * `callgrind_control`, valgrind's command for a running callgrind: bench/instructions.ts turns the
 * count of a server on after its warm-up and dumps it after the window, and
 * bench/instructions-pipeline.ts does the same to itself. Also what the two share of the warm-up.
 */
import { spawn } from 'node:child_process'

/**
 * How many cookies the cold row's warm-up sends first, before sending them again with the rest: a
 * server meets returning browsers from its first minutes, so the code that caches a token, and
 * evicts one once the cache's 1,000 are taken, has run and been compiled long before the count.
 * Without them it first ran when two of the row's cookies happened to share a tag fingerprint, and
 * V8 deoptimized and recompiled the read then, in the window on some runs (2,200 instructions a
 * request more on Node 24, 2026-11-28); sent at the end of the warm-up, they had the recompiling
 * fall in the window every time (4,300 more).
 */
export const RETURNING_COOKIES = 1_200

/** Runs `callgrind_control <command> <pid>` and resolves once callgrind has carried it out. */
export function callgrindControl(pid: number, command: '--instr=on' | '--instr=off' | '--dump'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('callgrind_control', [command, String(pid)], { stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control ${command} ${pid} exited (${code})`))))
  })
}
