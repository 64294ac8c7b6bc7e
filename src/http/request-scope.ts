/**
 * How `auth()`, `signIn()` and the other server-side calls find the request they are made in.
 *
 * One AsyncLocalStorage for the whole module, not one per `Portcullis()` call: on Node 20 and 22
 * every enabled AsyncLocalStorage is visited each time any promise or other async resource is
 * created, anywhere in the process, and one stays enabled once it has run. An instance each would
 * make every promise of the app slower with each instance made (a test suite makes thousands).
 * Each instance still sees only its own requests: a frame names the scope that entered it.
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
}

const frames = new AsyncLocalStorage<Frame>()

/** One instance's view of the current request. */
export class RequestScope {
  /** Runs `fn` with `store` as this scope's current request. */
  run<T>(store: RequestStore, fn: () => T): T {
    return frames.run({ req: store.req, res: store.res, scope: this, outer: frames.getStore() }, fn)
  }

  /** This scope's current request: the innermost one it entered, if any. */
  getStore(): RequestStore | undefined {
    for (let frame = frames.getStore(); frame; frame = frame.outer) if (frame.scope === this) return frame
    return undefined
  }
}
