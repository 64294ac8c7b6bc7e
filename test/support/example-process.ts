/**
 * An example started as its README starts it, in a child process: resolved once its output says
 * `ready`, rejected (with the output so far) when it exits first or does not get there in time;
 * then it is stopped (its whole process group when `detached`), as the suite never got hold of it.
 * A suite stops a started one with `stop()`, which waits for it to exit: a child still running when
 * the suite ends keeps its Jest worker alive ("a worker process has failed to exit gracefully").
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { STEP_LIMIT_MS } from './time-limits.js'

/** A started example and everything it has printed so far (stdout and stderr, interleaved). */
export interface ExampleProcess {
  readonly child: ChildProcess
  readonly output: string
  /** Sends SIGTERM (to the process group when `detached`) and resolves once the process has exited. */
  stop(): Promise<void>
}

/** Spawns `command args` and waits for `ready` in its output (for STEP_LIMIT_MS unless `timeoutMs` says otherwise); `name` says what failed to start. */
export async function startExampleProcess(
  command: string,
  args: string[],
  options: SpawnOptions & { ready: string; timeoutMs?: number; name: string },
): Promise<ExampleProcess> {
  const { ready, timeoutMs = STEP_LIMIT_MS, name, ...spawnOptions } = options
  const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
    if (spawnOptions.detached) process.kill(-child.pid, 'SIGTERM')
    else child.kill()
    await exited
  }
  const started: ExampleProcess = {
    child,
    get output() {
      return output
    },
    stop,
  }
  const whenReady = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${timeoutMs / 1000} s:\n${output}`)), timeoutMs)
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes(ready)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', collect)
    child.stderr!.on('data', collect)
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with ${code}:\n${output}`))
    })
  })
  try {
    await whenReady
  } catch (error) {
    await stop()
    throw error
  }
  return started
}
