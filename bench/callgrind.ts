/**
 * `callgrind_control`, valgrind's command for a running callgrind: bench/instructions.ts turns the
 * count of a server on after its warm-up and dumps it after the window, and
 * bench/instructions-pipeline.ts does the same to itself. Also what the two share of the warm-up, and
 * the garbage collector's share of a dump (bench/signin-peers.ts counts with it too).
 */
import { spawn, spawnSync } from 'node:child_process'

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

/**
 * The functions of V8's garbage collector, by name: the scavenger, the mark-compact collector and its
 * incremental marking, sweeping, evacuation, the remembered sets and the write barriers (which do
 * work only while marking runs, or to record old-to-new pointers for the scavenger).
 */
export const COLLECTOR = /Scaveng|MarkCompact|Marking|Sweep|Evacuat|RememberedSet|SlotSet|WriteBarrier|GCTracer|CollectGarbage/

/**
 * The instructions of the collector's functions (`COLLECTOR`) in the callgrind dump `file`, their own
 * cost (`callgrind_annotate --inclusive=no`): a window's count depends on whether a collection falls
 * into it, so bench/instructions.ts and bench/signin-peers.ts also give each row without them.
 */
export function collectorInstructions(file: string): number {
  const annotated = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', '--auto=no', '--show=Ir', '--sort=Ir', file], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 })
  if (annotated.status !== 0) throw new Error(`callgrind_annotate failed on ${file}: ${annotated.stderr}`)
  let sum = 0
  for (const line of annotated.stdout.split('\n')) {
    const fn = /^\s*([\d,]+) \([^)]*\)\s+(.+)$/.exec(line)
    if (fn && !fn[2]!.startsWith('PROGRAM TOTALS') && COLLECTOR.test(fn[2]!)) sum += Number(fn[1]!.replaceAll(',', ''))
  }
  return sum
}
