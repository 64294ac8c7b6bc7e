/**
 * Jest's node environment, plus:
 * - the log lines a test recorded (test/support/logger.ts) are printed when that test fails, after
 *   its name, so a failure comes with the log of what happened and a green run prints nothing of them;
 * - the AsyncLocalStorage instances a test file used are disabled when it ends. A Jest worker runs
 *   file after file in one process, and each file loads its own copy of the modules (Portcullis's
 *   request scope, oidc-provider's): on Node 20 and 22 an instance left enabled is visited each time
 *   any promise is created, so every later file in the worker ran slower (a whole run in one process
 *   spent a third of its CPU time there, in AsyncLocalStorage's _propagate);
 * - Node's undici global dispatcher is visible on the test's global, as on the process's.
 */
'use strict'
const { AsyncLocalStorage } = require('node:async_hooks')
const { inspect } = require('node:util')
const { TestEnvironment } = require('jest-environment-node')

const CURRENT_TEST_LINES = '__portcullisTestLogLines'

// Jest runs the ESM test files on vm.SourceTextModule, behind --experimental-vm-modules, and Node
// warns about it once per process: each worker printed "ExperimentalWarning: VM Modules is an
// experimental feature" (seven times a run). This module loads in each worker before its first test
// file, so the one warning is dropped here; every other warning (ExperimentalWarning included, such as
// require(esm)'s) is still printed. It works on every Node version, where --disable-warning (Node >= 21)
// would silence all ExperimentalWarnings, and NODE_OPTIONS reach the child processes tests spawn.
const emitWarning = process.emitWarning
process.emitWarning = function (warning, ...rest) {
  const type = typeof rest[0] === 'string' ? rest[0] : rest[0]?.type
  const message = typeof warning === 'string' ? warning : warning?.message
  const name = typeof warning === 'string' ? type : warning?.name
  if (name === 'ExperimentalWarning' && typeof message === 'string' && message.startsWith('VM Modules is an experimental feature')) return
  return emitWarning.call(this, warning, ...rest)
}

const { run, enterWith } = AsyncLocalStorage.prototype

/** How many of each kind of resource keep this process alive (ref'd handles, timers, requests). */
function aliveCounts() {
  const counts = new Map()
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return counts
}

/** A handle as a reader can place it: a socket's or server's addresses, a child's command. */
function describeHandle(handle) {
  const name = handle?.constructor?.name ?? typeof handle
  try {
    if (typeof handle.spawnargs !== 'undefined') return `${name} ${handle.pid} (${handle.spawnargs.join(' ').slice(0, 120)})`
    if (typeof handle.address === 'function' && typeof handle.listen === 'function') return `${name} on ${JSON.stringify(handle.address())}`
    if (handle.remotePort !== undefined) return `${name} ${handle.localAddress}:${handle.localPort} -> ${handle.remoteAddress}:${handle.remotePort}`
    if (typeof handle.fd === 'number') return `${name} fd ${handle.fd}`
  } catch {}
  return name
}

/** The test file this worker runs now (set by the environment's setup). */
let currentFile = 'no test file'

/** Which test file was running when each handle (a socket, server, child process) first outlived one. */
const handleFiles = new WeakMap()

/**
 * With PORTCULLIS_LEFT_RUNNING set, at the worker's end (Jest's END message; the worker then waits
 * for its event loop to empty, and Jest kills it half a second later with "A worker process has
 * failed to exit gracefully"): names what still keeps it alive, and the test file that left each
 * handle. This catches what the per-file report below cannot: a handle that outlives its file's
 * grace by a little, or whose kind an earlier file had left more of.
 */
if (process.env.PORTCULLIS_LEFT_RUNNING && typeof process.send === 'function') {
  // Worker threads are in neither list above (process.getActiveResourcesInfo, _getActiveHandles), yet a
  // running one that is not unref()'d keeps the process alive: these are counted as they start and end.
  const threads = require('node:worker_threads')
  const liveThreads = new Map()
  threads.Worker = class CountedWorker extends threads.Worker {
    constructor(...args) {
      super(...args)
      liveThreads.set(this, { what: String(args[0]).slice(0, 120), file: currentFile, ref: true })
      this.once('exit', () => liveThreads.delete(this))
    }
    unref() {
      if (liveThreads.has(this)) liveThreads.get(this).ref = false
      return super.unref()
    }
    ref() {
      if (liveThreads.has(this)) liveThreads.get(this).ref = true
      return super.ref()
    }
  }
  const JEST_CHILD_MESSAGE_END = 2
  let endAt = 0
  // An exit that comes late with nothing left running above: the process spent that time exiting.
  process.on('exit', () => {
    const ms = Date.now() - endAt
    if (endAt && ms >= 250) require('node:fs').writeSync(2, `\nJest worker ${process.pid} exited ${ms} ms after Jest's END\n`)
  })
  const onEnd = (message) => {
    if (!Array.isArray(message) || message[0] !== JEST_CHILD_MESSAGE_END) return
    endAt = Date.now()
    process.removeListener('message', onEnd)
    setTimeout(() => {
      const handles = process._getActiveHandles().filter((handle) => handle !== process.channel && !(handle?.fd <= 2))
      for (const { what, file, ref } of liveThreads.values()) if (ref) handles.push({ constructor: { name: `a worker thread (${what}), started by ${file}` } })
      const kinds = process.getActiveResourcesInfo().filter((kind) => kind !== 'PipeWrap' && kind !== 'TTYWrap')
      // Listeners of 'message' or 'disconnect' keep the IPC channel to Jest referenced, so the worker alive;
      // a 'beforeExit' listener that starts work again keeps it from exiting when its loop empties.
      const listeners = ['message', 'disconnect', 'beforeExit'].flatMap((event) => process.listeners(event).map((listener) => `  a process.on('${event}') listener: ${String(listener).replace(/\s+/g, ' ').slice(0, 160)}`))
      if (handles.length === 0 && kinds.length === 0 && listeners.length === 0) return
      const lines = handles.map((handle) => `  ${describeHandle(handle)}${handleFiles.has(handle) ? `, left by ${handleFiles.get(handle)}` : ''}`).concat(listeners)
      process.stderr.write(`\nJest worker ${process.pid} at its end still has: ${kinds.join(', ')}\n${lines.join('\n')}\n`)
    }, 200).unref()
  }
  process.on('message', onEnd)
}

/** What `now` has beyond `before`, as "2 Timeout, 1 TCPSocketWrap", or '' when nothing. */
function beyond(before, now) {
  const extra = []
  for (const [kind, count] of now) if (count > (before.get(kind) ?? 0)) extra.push(`${count - (before.get(kind) ?? 0)} ${kind}`)
  return extra.join(', ')
}

class PortcullisEnvironment extends TestEnvironment {
  /** The instances this file entered a store of. */
  usedStorages = new Set()

  constructor(config, context) {
    super(config, context)
    this.testPath = context.testPath
  }

  async setup() {
    await super.setup()
    // Node's fetch is the process's, and so is its undici: the global dispatcher it keeps on the
    // process's global object is shown to the test's too, as code that reads it expects (oidc-provider
    // builds its guard against private addresses from it; without it, that guard is off in tests).
    void Response
    for (const name of ['undici.globalDispatcher.1', 'undici.globalDispatcher.2']) {
      const symbol = Symbol.for(name)
      if (globalThis[symbol] !== undefined) this.global[symbol] = globalThis[symbol]
    }
    this.aliveBefore = aliveCounts()
    this.handlesBefore = new Set(process._getActiveHandles())
    currentFile = this.testPath
    const used = this.usedStorages
    AsyncLocalStorage.prototype.run = function (...args) {
      used.add(this)
      return run.apply(this, args)
    }
    AsyncLocalStorage.prototype.enterWith = function (...args) {
      used.add(this)
      return enterWith.apply(this, args)
    }
  }

  async teardown() {
    AsyncLocalStorage.prototype.run = run
    AsyncLocalStorage.prototype.enterWith = enterWith
    for (const storage of this.usedStorages) storage.disable()
    this.usedStorages.clear()
    await super.teardown()
    if (process.env.PORTCULLIS_LEFT_RUNNING) await this.reportLeftRunning()
  }

  /**
   * With PORTCULLIS_LEFT_RUNNING set: names this file and what it left running (a timer, a socket, a
   * server, a child process) once its tests and hooks are done. A worker runs file after file, and
   * anything left keeps it from exiting at the end of the run ("A worker process has failed to exit
   * gracefully"), far from the file that left it. What closes within a second is not reported.
   */
  async reportLeftRunning() {
    for (const handle of process._getActiveHandles()) if (!this.handlesBefore.has(handle) && !handleFiles.has(handle)) handleFiles.set(handle, this.testPath)
    let left = beyond(this.aliveBefore, aliveCounts())
    for (let tries = 0; left && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20).unref())
      left = beyond(this.aliveBefore, aliveCounts())
    }
    if (left) {
      const handles = process._getActiveHandles().filter((handle) => handleFiles.get(handle) === this.testPath)
      process.stderr.write(`\n${this.testPath} left running: ${left}${handles.map((handle) => `\n  ${describeHandle(handle)}`).join('')}\n`)
    }
  }

  handleTestEvent(event) {
    if (event.name === 'test_start' || event.name === 'run_describe_start') this.global[CURRENT_TEST_LINES] = []
    if (event.name === 'test_done' && event.test.errors.length > 0) {
      const lines = this.global[CURRENT_TEST_LINES] ?? []
      if (lines.length > 0) {
        const title = []
        for (let block = event.test; block && block.name !== 'ROOT_DESCRIBE_BLOCK'; block = block.parent) title.unshift(block.name)
        const body = lines.map(({ level, code, message }) => `  [${level}] ${code} ${message.map((part) => (typeof part === 'string' ? part : inspect(part, { depth: 4 }))).join(' ')}`)
        process.stderr.write(`\nLog of the failed test "${title.join(' › ')}":\n${body.join('\n')}\n`)
      }
    }
  }
}

module.exports = PortcullisEnvironment
