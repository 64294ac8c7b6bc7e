/**
 * `callgrind_control`, valgrind's command for a running callgrind: bench/instructions.ts turns the
 * count of a server on after its warm-up and dumps it after the window, and
 * bench/instructions-pipeline.ts does the same to itself.
 */
import { spawn } from 'node:child_process'

/** Runs `callgrind_control <command> <pid>` and resolves once callgrind has carried it out. */
export function callgrindControl(pid: number, command: '--instr=on' | '--dump'): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('callgrind_control', [command, String(pid)], { stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control ${command} ${pid} exited (${code})`))))
  })
}
