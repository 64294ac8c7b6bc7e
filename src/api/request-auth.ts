/**
 * What Portcullis keeps on a request: each instance's pending session read, and the documented
 * `req.auth`. Where it keeps them depends on the JavaScript engine, measured (docs/performance.md):
 *
 * - **V8 before 13 (Node 20 and 22):** adding a property to an Express request costs more than it
 *   looks. Express gives each request its app's prototype (`Object.setPrototypeOf(req,
 *   app.request)`), after which V8 keeps no transition for the request's hidden class: each
 *   property added builds a class of its own, for every request. Counted in process
 *   (`BENCH_INSTRUCTIONS=pipeline npm run bench:instructions`), the warm route took 22,000-32,000
 *   instructions a request over the plain route with an own `req.auth`, and 9,000-16,000 with the
 *   accessor below (the plain route: about 400,000). So the reads are kept in a `WeakMap`, and on
 *   an Express request `req.auth` is an accessor, defined once on the Express module's request
 *   prototype (the prototype of every app's `app.request`, sub-apps' included, so it holds wherever
 *   the request goes next), that answers Portcullis's record of the request's session (one record
 *   per process: below): no property is added to the request. Assigning `req.auth` still works as
 *   on any object: the setter gives the request an own property, which wins from then on (and
 *   which `auth()` then writes too). Requests Portcullis never read answer `undefined`, as before.
 * - **V8 13 and later (Node 24 and later):** the same property costs an Express request next to nothing, and
 *   the `WeakMap` entries cost more than they do on Node 20: timed in process, each was about 2 µs
 *   of the 6-8 µs a warm read added to a route of 15-16 µs, and their tables brought the garbage
 *   collector's pauses with them (with own properties: 2-4 µs). So both are own properties there:
 *   the read under a symbol of the instance's, `req.auth` as set.
 *
 * Every other request (node:http's, Connect's) gets `req.auth` as an own property on every engine:
 * node:http's requests share one hidden class, so adding it costs next to nothing, and Node's own
 * prototype is never touched. So does a request whose prototype chain already answers `auth` some
 * other way.
 */
import { IncomingMessage } from 'node:http'
import type { NodeRequest } from '../http/request.js'
import type { Session } from '../types.js'

type AuthRequest = NodeRequest & { auth?: Session | null | undefined }

/** Whether properties added to an Express request are cheap on this engine (see above). */
export const ownRequestProperties = Number.parseInt(process.versions.v8, 10) >= 13

/** A value each request may hold for one owner (an instance's pending read). */
export interface RequestMemo<T> {
  get(req: NodeRequest): T | undefined
  set(req: NodeRequest, value: T): void
}

/** A memo of the engine's cheaper kind: an own property under a symbol of its own, or a `WeakMap`. */
export function requestMemo<T>(): RequestMemo<T> {
  return ownRequestProperties ? new PropertyMemo<T>() : new WeakMapMemo<T>()
}

/** Under a symbol, so no other code reads it by name, and `Object.keys` and JSON leave it out. */
class PropertyMemo<T> implements RequestMemo<T> {
  private readonly key = Symbol('portcullis.session')

  get(req: NodeRequest): T | undefined {
    return (req as unknown as Record<symbol, T | undefined>)[this.key]
  }

  set(req: NodeRequest, value: T): void {
    ;(req as unknown as Record<symbol, T | undefined>)[this.key] = value
  }
}

class WeakMapMemo<T> implements RequestMemo<T> {
  private readonly values = new WeakMap<NodeRequest, T>()

  get(req: NodeRequest): T | undefined {
    return this.values.get(req)
  }

  set(req: NodeRequest, value: T): void {
    this.values.set(req, value)
  }
}

/**
 * The accessor and the session each Express request was last given, which it answers: one per
 * process, not one per copy of this module. An app can hold two copies of Portcullis (two versions
 * in its node_modules; bench/ab.ts loads two builds), and only one accessor can own `auth` on
 * Express's request prototype: a copy that found another copy's there would set own properties, at
 * 3-5 µs a request on these engines. So the first copy registers it on `globalThis` under a
 * registered symbol, and every later copy with the same contract (the `.1`) uses it. Anything else
 * under that symbol is left alone, and this copy keeps its own. Not made on V8 13+, which has no use
 * for it.
 */
interface RequestAuthAccessor {
  readonly sessions: WeakMap<object, Session | null>
  readonly get: (this: object) => Session | null | undefined
  readonly set: (this: object, value: unknown) => void
}

const REGISTERED = Symbol.for('portcullis.request-auth.1')

function requestAuthAccessor(): RequestAuthAccessor {
  const registered = (globalThis as Record<symbol, Partial<RequestAuthAccessor> | undefined>)[REGISTERED]
  const usable = typeof registered?.sessions?.get === 'function' && typeof registered.get === 'function' && typeof registered.set === 'function'
  if (usable) return registered as RequestAuthAccessor
  const sessions = new WeakMap<object, Session | null>()
  const accessor: RequestAuthAccessor = Object.freeze({
    sessions,
    get(this: object) {
      return sessions.get(this)
    },
    /** An assignment by the app (or another library) makes an own property, as it would without the accessor. */
    set(this: object, value: unknown) {
      Object.defineProperty(this, 'auth', { value, writable: true, enumerable: true, configurable: true })
    },
  })
  if (registered === undefined) Object.defineProperty(globalThis, REGISTERED, { value: accessor })
  return accessor
}

const accessor = ownRequestProperties ? undefined : requestAuthAccessor()

/** For each request prototype seen: whether `auth` is the accessor along its chain. */
const served = new WeakMap<object, boolean>()

/** Sets `req.auth` to the session `auth()` resolved for the request. */
export function setRequestAuth(req: NodeRequest, session: Session | null): void {
  if (accessor && !Object.hasOwn(req, 'auth') && accessorServes(accessor, Object.getPrototypeOf(req) as object | null)) accessor.sessions.set(req, session)
  else (req as AuthRequest).auth = session
}

function accessorServes(accessor: RequestAuthAccessor, prototype: object | null): boolean {
  if (prototype === null) return false
  let serves = served.get(prototype)
  if (serves === undefined) served.set(prototype, (serves = install(accessor, prototype)))
  return serves
}

/**
 * Whether `prototype` is an Express app's request prototype (it owns `app`) whose chain answers
 * `auth` with the accessor, defining it first when nothing on the chain answers `auth`:
 * on the Express module's request prototype, above every app's (a mounted sub-app's inherits from
 * its parent's), so the accessor holds wherever Express moves the request. False otherwise: the
 * caller then sets an own property.
 */
function install(accessor: RequestAuthAccessor, prototype: object): boolean {
  if (!Object.hasOwn(prototype, 'app')) return false
  if ('auth' in prototype) return accessorOnChain(prototype) === accessor.get
  let shared = Object.getPrototypeOf(prototype) as object | null
  while (shared !== null && Object.hasOwn(shared, 'app')) shared = Object.getPrototypeOf(shared) as object | null
  if (shared === null || shared === IncomingMessage.prototype || !Object.isExtensible(shared)) return false
  Object.defineProperty(shared, 'auth', { configurable: true, enumerable: false, get: accessor.get, set: accessor.set })
  return true
}

/** The getter of the nearest `auth` along the chain from `object`, if that is an accessor. */
function accessorOnChain(object: object | null): unknown {
  for (; object !== null; object = Object.getPrototypeOf(object) as object | null) {
    const descriptor = Object.getOwnPropertyDescriptor(object, 'auth')
    if (descriptor) return descriptor.get
  }
  return undefined
}
