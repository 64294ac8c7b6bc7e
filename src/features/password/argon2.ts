/**
 * Argon2id (RFC 9106) for the password hashers: its parameters, the PHC string it is stored as, the
 * strict reading of a stored one, and the engine that computes it.
 *
 * The engine is node:crypto's `argon2` (Node ≥ 24.7): asynchronous, on libuv's thread pool like
 * scrypt, nothing to install or compile. On an older Node it is the optional dependency
 * `@node-rs/argon2` (prebuilt binaries in per-platform packages, nothing compiled; also on libuv's
 * pool), imported on the first hash. Where neither is there, `availableArgon2()` is undefined and
 * new hashes stay scrypt (hash.ts).
 *
 * A stored hash is read as strictly as a scrypt one: Argon2id only, version 19, `m`, `t` and `p` in
 * that order without leading zeros, within fixed bounds, salt and tag in canonical unpadded base64,
 * so a row an attacker could edit cannot make one sign-in take seconds or gigabytes.
 */
import * as crypto from 'node:crypto'
import { createRequire } from 'node:module'

/**
 * The Argon2id cost parameters (RFC 9106 §3.1): `m` the memory in KiB, `t` the passes over it,
 * `p` the lanes (parallelism). One hash holds `m` KiB while it runs, and takes time in proportion
 * to `m · t`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9106#section-3.1
 */
export interface Argon2Parameters {
  readonly m: number
  readonly t: number
  readonly p: number
}

/**
 * The default Argon2id parameters, m = 19456 KiB (19 MiB), t = 2, p = 1: the OWASP Password Storage
 * Cheat Sheet's first choice.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#argon2id
 */
export const DEFAULT_ARGON2ID: Argon2Parameters = Object.freeze({ m: 19456, t: 2, p: 1 })

/** Computes an Argon2id tag: the password, the salt, the parameters and the tag's length in bytes. */
export type Argon2Engine = (password: string, salt: Buffer, parameters: Argon2Parameters, tagLength: number) => Promise<Buffer>

/** The most memory a stored hash may ask for: 256 MiB (13 times the default's). */
const MAX_M = 256 * 1024
/** The most passes a stored hash may ask for. */
const MAX_T = 16
/** The most lanes a stored hash may ask for. */
const MAX_P = 16
/** The most work a stored hash may ask for: `m · t` ≤ 2^20 KiB (27 times the default's, 1 GiB of memory passes). */
const MAX_WORK = 2 ** 20
/** The least memory and passes a new hash may use: OWASP's lowest row, m = 7 MiB with t = 5, has more; this is the floor. */
const MIN_NEW_M = 7168
const ARGON2_VERSION = 19

export const ARGON2_SALT_BYTES = 16
export const ARGON2_TAG_BYTES = 32

/**
 * A stored Argon2id hash: version 19, `m`, `t`, `p` (no leading zeros), a salt of 8 to 48 bytes and a
 * tag of 16 to 64 bytes in unpadded base64 (their canonical form is checked after decoding).
 */
const ARGON2_FORMAT = /^\$argon2id\$v=19\$m=([1-9]\d{0,6}),t=([1-9]\d?),p=([1-9]\d?)\$([A-Za-z0-9+/]{11,64})\$([A-Za-z0-9+/]{22,86})$/

/** A stored Argon2id hash, parsed. */
export interface StoredArgon2 extends Argon2Parameters {
  readonly salt: Buffer
  readonly tag: Buffer
}

/** node:crypto's Argon2id, where this Node has it (≥ 24.7); undefined elsewhere. */
export function builtinArgon2(): Argon2Engine | undefined {
  const argon2 = (crypto as { argon2?: NodeArgon2 }).argon2
  if (typeof argon2 !== 'function') return undefined
  return (password, salt, { m, t, p }, tagLength) =>
    new Promise<Buffer>((resolve, reject) =>
      argon2('argon2id', { message: password, nonce: salt, memory: m, passes: t, parallelism: p, tagLength }, (error, tag) => (error ? reject(error) : resolve(tag))),
    )
}

/** The optional package that computes Argon2id where node:crypto does not (Node before 24.7). */
export const ARGON2_PACKAGE = '@node-rs/argon2'

/** Where the Argon2id engine comes from: node:crypto, the optional package, or none. */
export type Argon2Source = 'node:crypto' | typeof ARGON2_PACKAGE | undefined

/** Whether the optional package can be found from here, without loading it (its binary loads on the first hash). */
export function argon2PackageInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve(ARGON2_PACKAGE)
    return true
  } catch {
    return false
  }
}

/** The part of @node-rs/argon2 used here (2.x). */
interface NodeRsArgon2 {
  hashRaw(password: string, options: { algorithm: number; version: number; memoryCost: number; timeCost: number; parallelism: number; outputLen: number; salt: Uint8Array }): Promise<Buffer>
}

let argon2Package: Promise<NodeRsArgon2> | undefined

/** @node-rs/argon2, imported once; rejects saying what to do when its binary cannot load. */
function importArgon2Package(): Promise<NodeRsArgon2> {
  argon2Package ??= (import(ARGON2_PACKAGE) as Promise<{ default?: NodeRsArgon2 } & Partial<NodeRsArgon2>>).then(
    (loaded) => {
      const candidate = typeof loaded.hashRaw === 'function' ? loaded : loaded.default
      if (typeof candidate?.hashRaw !== 'function') throw new Error(`The installed ${ARGON2_PACKAGE} has no hashRaw(): install version 2 (npm install ${ARGON2_PACKAGE}@2)`)
      return candidate as NodeRsArgon2
    },
    (error: unknown) => {
      argon2Package = undefined
      throw new Error(`${ARGON2_PACKAGE} is installed but could not be loaded (its binary for this platform is missing?): reinstall it, or remove it to hash with scrypt.`, { cause: error })
    },
  )
  return argon2Package
}

/** @node-rs/argon2's Argon2id (version 0x13), as an engine. */
export const packageArgon2: Argon2Engine = async (password, salt, { m, t, p }, tagLength) =>
  // Algorithm.Argon2id = 2 and Version.V0x13 = 1: const enums, which isolated modules cannot import.
  (await importArgon2Package()).hashRaw(password, { algorithm: 2, version: 1, memoryCost: m, timeCost: t, parallelism: p, outputLen: tagLength, salt })

/**
 * The Argon2id engine at hand and where it comes from: node:crypto's (Node ≥ 24.7), else the optional
 * `@node-rs/argon2` when it is installed, else none.
 *
 * @param installed Whether the optional package is installed; tests pass false for "missing".
 */
export function availableArgon2(installed: () => boolean = argon2PackageInstalled): { readonly engine: Argon2Engine | undefined; readonly source: Argon2Source } {
  const builtin = builtinArgon2()
  if (builtin) return { engine: builtin, source: 'node:crypto' }
  if (installed()) return { engine: packageArgon2, source: ARGON2_PACKAGE }
  return { engine: undefined, source: undefined }
}

/** The shape of node:crypto's `argon2` (Node 24.7), which @types/node 20 does not declare. */
type NodeArgon2 = (
  algorithm: 'argon2id',
  parameters: { message: string; nonce: Buffer; memory: number; passes: number; parallelism: number; tagLength: number },
  callback: (error: Error | null, tag: Buffer) => void,
) => void

/** The parameters within the bounds a stored hash may ask for, or a sentence saying which bound is passed. */
export function argon2BoundsProblem({ m, t, p }: Argon2Parameters): string | undefined {
  if (p > MAX_P) return `p must be at most ${MAX_P}`
  if (m < 8 * p) return 'm must be at least 8 · p KiB (RFC 9106)'
  if (m > MAX_M) return `m must be at most ${MAX_M} KiB (256 MiB)`
  if (t > MAX_T) return `t must be at most ${MAX_T}`
  if (m * t > MAX_WORK) return 'm · t (the work one hash takes) must be at most 2^20 KiB'
  return undefined
}

/** Whether `text` is unpadded base64 that encodes back to itself (no stray bits in the last character). */
function canonicalBase64(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64')
  return unpadded(bytes) === text ? bytes : undefined
}

export const unpadded = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

/** Whether `stored` is written as an Argon2id hash (whatever its parameters). */
export function looksLikeArgon2id(stored: string): boolean {
  return stored.startsWith('$argon2id$')
}

/** `stored` read as an Argon2id hash within bounds, or undefined. */
export function parseArgon2id(stored: string): StoredArgon2 | undefined {
  const match = ARGON2_FORMAT.exec(stored)
  if (!match) return undefined
  const [, m, t, p, saltText, tagText] = match as unknown as [string, string, string, string, string, string]
  const parameters = { m: Number(m), t: Number(t), p: Number(p) }
  if (argon2BoundsProblem(parameters) !== undefined) return undefined
  const salt = canonicalBase64(saltText)
  const tag = canonicalBase64(tagText)
  if (!salt || !tag || salt.length < 8 || salt.length > 48 || tag.length < 16 || tag.length > 64) return undefined
  return { ...parameters, salt, tag }
}

/** The PHC string of a new hash. */
export function formatArgon2id({ m, t, p }: Argon2Parameters, salt: Buffer, tag: Buffer): string {
  return `$argon2id$v=${ARGON2_VERSION}$m=${m},t=${t},p=${p}$${unpadded(salt)}$${unpadded(tag)}`
}

/** The parameters a caller passed, completed with the defaults and checked. */
export function resolveArgon2Parameters(parameters: Partial<Argon2Parameters> | undefined): Argon2Parameters {
  if (parameters !== undefined && (typeof parameters !== 'object' || parameters === null)) {
    throw new TypeError('argon2idHasher(parameters): parameters must be an object such as { m: 19456, t: 2, p: 1 }')
  }
  const resolved = { m: parameters?.m ?? DEFAULT_ARGON2ID.m, t: parameters?.t ?? DEFAULT_ARGON2ID.t, p: parameters?.p ?? DEFAULT_ARGON2ID.p }
  const { m, t, p } = resolved
  if (!Number.isSafeInteger(m) || m < MIN_NEW_M) throw new TypeError(`argon2idHasher: m (KiB) must be a whole number of at least ${MIN_NEW_M} (7 MiB); got ${String(m)}. The default is 19456 (19 MiB).`)
  if (!Number.isSafeInteger(t) || t < 1) throw new TypeError(`argon2idHasher: t must be a whole number of at least 1; got ${String(t)}. The default is 2.`)
  if (!Number.isSafeInteger(p) || p < 1) throw new TypeError(`argon2idHasher: p must be a whole number of at least 1; got ${String(p)}. The default is 1.`)
  const problem = argon2BoundsProblem(resolved)
  if (problem !== undefined) throw new TypeError(`argon2idHasher: ${problem} (verify refuses stored hashes beyond that); got m=${m}, t=${t}, p=${p}.`)
  return Object.freeze(resolved)
}
