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
 *   the request goes next), that answers this module's record of the request's session: no
 *   property is added to the request. Assigning `req.auth` still works as on any object: the setter
 *   gives the request an own property, which wins from then on (and which `auth()` then writes
 *   too). Requests Portcullis never read answer `undefined`, as before.
 * - **V8 13 and later (Node 24):** the same property costs an Express request next to nothing, and
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
  delete(req: NodeRequest): void
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

  /** Writes `undefined` rather than deleting: a deleted property turns the object into a slow dictionary. */
  delete(req: NodeRequest): void {
    if (this.key in req) (req as unknown as Record<symbol, T | undefined>)[this.key] = undefined
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

  delete(req: NodeRequest): void {
    this.values.delete(req)
  }
}

/** The session each Express request was last given, read through the accessor. */
const sessions = new WeakMap<object, Session | null>()

/** For each request prototype seen: whether `auth` is this module's accessor along its chain. */
const served = new WeakMap<object, boolean>()

/** Sets `req.auth` to the session `auth()` resolved for the request. */
export function setRequestAuth(req: NodeRequest, session: Session | null): void {
  if (!ownRequestProperties && !Object.hasOwn(req, 'auth') && accessorServes(Object.getPrototypeOf(req) as object | null)) sessions.set(req, session)
  else (req as AuthRequest).auth = session
}

function accessorServes(prototype: object | null): boolean {
  if (prototype === null) return false
  let serves = served.get(prototype)
  if (serves === undefined) served.set(prototype, (serves = install(prototype)))
  return serves
}

/**
 * Whether `prototype` is an Express app's request prototype (it owns `app`) whose chain answers
 * `auth` with this module's accessor, defining it first when nothing on the chain answers `auth`:
 * on the Express module's request prototype, above every app's (a mounted sub-app's inherits from
 * its parent's), so the accessor holds wherever Express moves the request. False otherwise: the
 * caller then sets an own property.
 */
function install(prototype: object): boolean {
  if (!Object.hasOwn(prototype, 'app')) return false
  if ('auth' in prototype) return accessorOnChain(prototype) === readAuth
  let shared = Object.getPrototypeOf(prototype) as object | null
  while (shared !== null && Object.hasOwn(shared, 'app')) shared = Object.getPrototypeOf(shared) as object | null
  if (shared === null || shared === IncomingMessage.prototype || !Object.isExtensible(shared)) return false
  Object.defineProperty(shared, 'auth', { configurable: true, enumerable: false, get: readAuth, set: writeAuth })
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

function readAuth(this: object): Session | null | undefined {
  return sessions.get(this)
}

/** An assignment by the app (or another library) makes an own property, as it would without the accessor. */
function writeAuth(this: object, value: unknown): void {
  Object.defineProperty(this, 'auth', { value, writable: true, enumerable: true, configurable: true })
}
