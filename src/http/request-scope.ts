/**
 * How `auth()`, `signIn()` and the other server-side calls find the request they are made in.
 *
 * One AsyncLocalStorage for the whole module, not one per `Portcullis()` call: on Node 20 and 22
 * every enabled AsyncLocalStorage is visited each time any promise or other async resource is
 * created, anywhere in the process. An instance each would make every promise of the app slower
 * with each instance made (a test suite makes thousands). Each instance still sees only its own
 * requests: a frame names the scope that entered it.
 *
 * A request's scope ends with its work: a route of `handlers` when the route has settled (its
 * callbacks and events have run; the response follows), a request entered by the `auth` middleware
 * or `auth(handler)` when its response closes. Work left running after that finds no request, on
 * every Node version. And on Node 20 and 22 the storage is disabled whenever no scope is open, so
 * that an app whose only scoped requests are its auth routes stops paying for every promise once
 * they are answered (over HTTP, a bare Express route with an `await` costs 4% more instructions with
 * one enabled: docs/performance.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { ServerResponse } from 'node:http'
import type { NodeRequest } from './request.js'

/** The request a server-side call is made in. */
export interface RequestStore {
  readonly req: NodeRequest
  readonly res: ServerResponse
}

/** A request entered by one scope, inside whatever was entered before it. */
interface Frame extends RequestStore {
  readonly scope: RequestScope
  readonly outer: Frame | undefined
  /** Set when the request's work is over: the frame is then passed over. */
  ended: boolean
}

const frames = new AsyncLocalStorage<Frame>()

// Node 20 and 22 build AsyncLocalStorage on async_hooks (its `_propagate` copies the store to each new
// resource); Node 24's AsyncContextFrame costs nothing while idle, so there it is never disabled.
const HOOKED = typeof (AsyncLocalStorage.prototype as { _propagate?: unknown })._propagate === 'function'

/** Scopes entered and not yet ended, all instances together. */
let open = 0
/** A scope was entered whose end cannot be seen (a response that emits no `close`): never disable. */
let pinned = false

function release(frame: Frame): void {
  if (frame.ended) return
  frame.ended = true
  if (--open === 0 && HOOKED && !pinned) frames.disable()
}

/** One instance's view of the current request. */
export class RequestScope {
  /**
   * Runs a route of `handlers` with `store` as this scope's current request, until the route settles.
   */
  async runRoute<T>(store: RequestStore, route: () => Promise<T>): Promise<T> {
    const frame = this.enter(store)
    try {
      return await frames.run(frame, route)
    } finally {
      release(frame)
    }
  }

  /**
   * Runs `fn` with `store` as this scope's current request, until the request's response closes
   * (the rest of an Express chain runs inside it).
   */
  runUntilClosed<T>(store: RequestStore, fn: () => T): T {
    const frame = this.enter(store)
    const { res } = store
    if (res.destroyed) release(frame)
    else if (typeof res.once === 'function') res.once('close', () => release(frame))
    else pinned = true
    return frames.run(frame, fn)
  }

  /** This scope's current request: the innermost one it entered and whose work is not over, if any. */
  getStore(): RequestStore | undefined {
    for (let frame = frames.getStore(); frame; frame = frame.outer) if (frame.scope === this && !frame.ended) return frame
    return undefined
  }

  private enter(store: RequestStore): Frame {
    open++
    return { req: store.req, res: store.res, scope: this, outer: frames.getStore(), ended: false }
  }
}

/** The request being served, by whichever instance entered it (the log lines' fields: http/log-fields.ts). */
export function currentRequest(): RequestStore | undefined {
  for (let frame = frames.getStore(); frame; frame = frame.outer) if (!frame.ended) return frame
  return undefined
}
