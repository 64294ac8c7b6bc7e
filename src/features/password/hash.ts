/**
 * Password hashing with node:crypto: Argon2id where this Node has it (≥ 24.7, argon2.ts), else
 * scrypt; no native addon to compile, nothing to download.
 *
 * A hash is stored as one self-describing string, `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<tag>` or
 * `$scrypt$ln=17,r=8,p=1$<salt>$<key>` (the PHC string format: algorithm, `name=value` parameters,
 * salt and key in unpadded base64), so the algorithm and its parameters can change later: a hash
 * made otherwise still verifies (both hashers read both), and `needsRehash` says when to store a new one.
 *
 * The stored string is read strictly. A row that an attacker could edit must not make the server
 * spend minutes or gigabytes on one sign-in, so parameters beyond fixed bounds are refused before
 * any work is done, and so are bcrypt hashes of a cost above 16.
 *
 * bcrypt hashes imported from another app (a Passport app's users table) verify through the
 * optional `bcryptjs` package, loaded only when such a hash is met.
 */
import { randomBytes, scrypt, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto'
import {
  ARGON2_SALT_BYTES,
  ARGON2_TAG_BYTES,
  availableArgon2,
  formatArgon2id,
  looksLikeArgon2id,
  parseArgon2id,
  resolveArgon2Parameters,
  type Argon2Engine,
  type Argon2Parameters,
} from './argon2.js'

/**
 * The scrypt cost parameters (RFC 7914 §2): `N` the CPU/memory cost, a power of two; `r` the block
 * size; `p` the parallelization. One hash needs about `128 · N · r` bytes of memory and time in
 * proportion to `N · r · p`.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7914#section-2
 */
export interface ScryptParameters {
  readonly N: number
  readonly r: number
  readonly p: number
}

/**
 * The default scrypt parameters, N = 2^17, r = 8, p = 1: the minimum the OWASP Password Storage
 * Cheat Sheet gives for scrypt. 128 MiB of memory per hash.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#scrypt
 */
export const DEFAULT_SCRYPT: ScryptParameters = Object.freeze({ N: 2 ** 17, r: 8, p: 1 })

/** Hashes passwords for storage and checks a password against what was stored. */
export interface PasswordHasher {
  /**
   * A new hash of `password` (a fresh random salt each time), to store.
   *
   * @param password The password as `normalizePassword` returned it (NFKC).
   */
  hash(password: string): Promise<string>
  /**
   * Whether `password` is the one `stored` was made from. Resolves `false`, never rejects, for a
   * stored value that is not a hash this hasher reads (malformed, unknown format, parameters out of
   * bounds), except a bcrypt hash while `bcryptjs` is not installed, and an Argon2id hash on a Node
   * without `crypto.argon2` (before 24.7): those reject with an Error saying what is missing, since
   * refusing every such user's password would look like wrong passwords.
   *
   * @param password The password as `normalizePassword` returned it (NFKC).
   * @param stored What `hash` returned, or an imported bcrypt hash.
   */
  verify(password: string, stored: string): Promise<boolean>
  /**
   * Whether `stored` should be replaced by a new hash (after a successful `verify`, while the
   * password is at hand): true unless it is this hasher's algorithm with exactly its parameters, so
   * also for another algorithm (scrypt for the Argon2id hasher and the other way round), for bcrypt
   * and for anything unreadable.
   *
   * @param stored The stored hash.
   */
  needsRehash(stored: string): boolean
}

/** The most work a stored scrypt hash may ask for: `N · r · p` ≤ 2^23 (8 times the default's). */
const MAX_SCRYPT_WORK = 2 ** 23
/** The most memory a stored scrypt hash may ask for: `128 · N · r` ≤ 1 GiB (8 times the default's). */
const MAX_SCRYPT_MEMORY = 2 ** 30
/** The bounds of each stored parameter: log2(N), r and p. */
const LN_RANGE = [10, 22] as const
const MAX_R = 64
const MAX_P = 64
/** The smallest N a new hash may use (2^14, the cost the scrypt paper gave for interactive logins in 2009). */
const MIN_NEW_N = 2 ** 14

const SALT_BYTES = 16
const KEY_BYTES = 32

/**
 * The highest bcrypt cost verified. Each step doubles the work; bcryptjs (JavaScript) takes about
 * 70 ms at cost 10 and so several seconds at 16. A stored hash of a higher cost verifies `false`.
 */
const MAX_BCRYPT_COST = 16

/**
 * A stored scrypt hash. The numbers have no leading zeros; the salt is 16 bytes and the key 32, in
 * canonical unpadded base64 (the last character carries no stray bits, so no two strings decode to
 * the same salt or key).
 */
const SCRYPT_FORMAT = /^\$scrypt\$ln=([1-9]\d?),r=([1-9]\d?),p=([1-9]\d?)\$([A-Za-z0-9+/]{21}[AQgw])\$([A-Za-z0-9+/]{42}[AEIMQUYcgkosw048])$/

/** A bcrypt hash in the modular crypt format: version, two-digit cost (4-31), 22 characters of salt and 31 of hash. */
const BCRYPT_FORMAT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/

interface StoredScrypt extends ScryptParameters {
  readonly salt: Buffer
  readonly key: Buffer
}

const deriveKey = (password: BinaryLike, salt: BinaryLike, keyLength: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scrypt(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))))

/** Node refuses scrypt when 128 · N · r exceeds maxmem (32 MiB by default): allow twice what it needs. */
const scryptOptions = ({ N, r, p }: ScryptParameters): ScryptOptions => ({ N, r, p, maxmem: 128 * N * r * 2 })

/** The scrypt parameters within the bounds a stored hash may ask for, or a sentence saying which bound is passed. */
function boundsProblem({ N, r, p }: ScryptParameters): string | undefined {
  const ln = Math.log2(N)
  if (ln < LN_RANGE[0] || ln > LN_RANGE[1]) return `N must be between 2^${LN_RANGE[0]} and 2^${LN_RANGE[1]}`
  if (r > MAX_R) return `r must be at most ${MAX_R}`
  if (p > MAX_P) return `p must be at most ${MAX_P}`
  if (128 * N * r > MAX_SCRYPT_MEMORY) return `128 · N · r (the memory one hash takes) must be at most 1 GiB`
  if (N * r * p > MAX_SCRYPT_WORK) return `N · r · p (the work one hash takes) must be at most 2^23`
  return undefined
}

/** `stored` read as a scrypt hash within bounds, or undefined. */
function parseScrypt(stored: string): StoredScrypt | undefined {
  const match = SCRYPT_FORMAT.exec(stored)
  if (!match) return undefined
  const [, ln, r, p, salt, key] = match as unknown as [string, string, string, string, string, string]
  const parameters = { N: 2 ** Number(ln), r: Number(r), p: Number(p) }
  if (boundsProblem(parameters) !== undefined) return undefined
  return { ...parameters, salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') }
}

const unpadded = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

/** The parameters a caller passed, completed with the defaults and checked. */
function resolveParameters(parameters: Partial<ScryptParameters> | undefined): ScryptParameters {
  if (parameters !== undefined && (typeof parameters !== 'object' || parameters === null)) {
    throw new TypeError('scryptHasher(parameters): parameters must be an object such as { N: 2 ** 17, r: 8, p: 1 }')
  }
  const resolved = { N: parameters?.N ?? DEFAULT_SCRYPT.N, r: parameters?.r ?? DEFAULT_SCRYPT.r, p: parameters?.p ?? DEFAULT_SCRYPT.p }
  const { N, r, p } = resolved
  if (!Number.isSafeInteger(N) || N < MIN_NEW_N || Math.log2(N) % 1 !== 0) {
    throw new TypeError(`scryptHasher: N must be a power of two of at least 2^14 (16384); got ${String(N)}. The default is 2^17 (2 ** 17).`)
  }
  if (!Number.isSafeInteger(r) || r < 1) throw new TypeError(`scryptHasher: r must be a whole number of at least 1; got ${String(r)}. The default is 8.`)
  if (!Number.isSafeInteger(p) || p < 1) throw new TypeError(`scryptHasher: p must be a whole number of at least 1; got ${String(p)}. The default is 1.`)
  const problem = boundsProblem(resolved)
  if (problem !== undefined) throw new TypeError(`scryptHasher: ${problem} (verify refuses stored hashes beyond that); got N=2^${Math.log2(N)}, r=${r}, p=${p}.`)
  return Object.freeze(resolved)
}

/**
 * A `PasswordHasher` on node:crypto's scrypt: 16-byte random salt, 32-byte key, stored as
 * `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt>$<key>` (unpadded base64). It also verifies bcrypt hashes
 * (`$2a$`, `$2b$`, `$2y$`) when the optional `bcryptjs` package is installed, and Argon2id hashes
 * (`argon2idHasher`'s) where this Node has `crypto.argon2` (24.7 and later) or `@node-rs/argon2` is installed.
 *
 * `verify` reads stored scrypt hashes whose parameters stay within these bounds, and returns `false`
 * for any other: log2(N) from 10 to 22, r and p at most 64, at most 1 GiB of memory (`128 · N · r`)
 * and at most 2^23 work (`N · r · p`, 8 times the default's); and bcrypt hashes of a cost up to 16.
 * So a tampered row cannot make one sign-in take minutes or gigabytes. New hashes must stay within
 * these bounds too.
 *
 * bcrypt reads only the first 72 bytes of a password (UTF-8): an imported bcrypt hash accepts any
 * password that shares them. It was made from whatever the other app hashed, usually the raw input,
 * which for ASCII passwords is the same as the NFKC form passed here. `needsRehash` is true for it:
 * store a scrypt hash once the password verifies.
 *
 * @param parameters Any of `N` (a power of two, at least 2^14), `r` and `p` (at least 1); the rest
 *   from `DEFAULT_SCRYPT`. Throws a TypeError for values out of range.
 * @example
 * const hasher = scryptHasher()
 * const stored = await hasher.hash('correct horse battery staple') // '$scrypt$ln=17,r=8,p=1$…$…'
 * await hasher.verify('correct horse battery staple', stored) // true
 * hasher.needsRehash(stored) // false
 * @see https://www.rfc-editor.org/rfc/rfc7914 (scrypt)
 * @see https://github.com/P-H-C/phc-string-format/blob/master/phc-sf-spec.md (the string format)
 */
export function scryptHasher(parameters?: Partial<ScryptParameters>): PasswordHasher {
  return scryptHasherWith(resolveParameters(parameters), availableArgon2().engine)
}

/** `scryptHasher`, verifying stored Argon2id hashes with `argon2` (undefined: they reject, saying why). */
export function scryptHasherWith(configured: ScryptParameters, argon2: Argon2Engine | undefined): PasswordHasher {
  const options = scryptOptions(configured)
  const prefix = `$scrypt$ln=${Math.log2(configured.N)},r=${configured.r},p=${configured.p}$`

  return Object.freeze({
    async hash(password: string): Promise<string> {
      assertPassword(password, 'hash')
      const salt = randomBytes(SALT_BYTES)
      const key = await deriveKey(password, salt, KEY_BYTES, options)
      return `${prefix}${unpadded(salt)}$${unpadded(key)}`
    },

    verify: (password: string, stored: string) => verifyStored(password, stored, argon2),

    needsRehash(stored: string): boolean {
      if (typeof stored !== 'string') return true
      const parsed = parseScrypt(stored)
      return parsed === undefined || parsed.N !== configured.N || parsed.r !== configured.r || parsed.p !== configured.p
    },
  })
}

/**
 * A `PasswordHasher` on Argon2id (RFC 9106) with node:crypto's `argon2` (Node 24.7 or later), or on
 * an older Node the optional `@node-rs/argon2` package:
 * 16-byte random salt, 32-byte tag, stored as `$argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<tag>`
 * (unpadded base64). It also verifies scrypt hashes (`scryptHasher`'s, within its bounds) and
 * bcrypt hashes through the optional `bcryptjs` package; `needsRehash` is true for them.
 *
 * `verify` reads stored Argon2id hashes whose parameters stay within these bounds, and returns
 * `false` for any other: `p` at most 16, `m` from 8 · p to 262144 KiB (256 MiB), `t` at most 16, and
 * `m · t` at most 2^20 (27 times the default's work). New hashes must stay within them too.
 *
 * @param parameters Any of `m` (KiB, at least 7168), `t` and `p` (at least 1); the rest from
 *   `DEFAULT_ARGON2ID` (OWASP's m = 19456, t = 2, p = 1). Throws a TypeError for values out of range,
 *   and when this Node has no `crypto.argon2` and `@node-rs/argon2` is not installed.
 * @example
 * const hasher = argon2idHasher()
 * const stored = await hasher.hash('correct horse battery staple') // '$argon2id$v=19$m=19456,t=2,p=1$…$…'
 * await hasher.verify('correct horse battery staple', stored) // true
 * @see https://www.rfc-editor.org/rfc/rfc9106 (Argon2)
 * @see https://github.com/P-H-C/phc-string-format/blob/master/phc-sf-spec.md (the string format)
 */
export function argon2idHasher(parameters?: Partial<Argon2Parameters>): PasswordHasher {
  const configured = resolveArgon2Parameters(parameters)
  const argon2 = availableArgon2().engine
  if (!argon2) throw new TypeError(`argon2idHasher: this Node.js (${process.version}) has no crypto.argon2, which Node 24.7 added, and @node-rs/argon2 is not installed; use scryptHasher() here, or the default hashing (Argon2id where it exists, scrypt elsewhere).`)
  return argon2idHasherWith(configured, argon2)
}

/** `argon2idHasher` on the given engine. */
export function argon2idHasherWith(configured: Argon2Parameters, argon2: Argon2Engine): PasswordHasher {
  return Object.freeze({
    async hash(password: string): Promise<string> {
      assertPassword(password, 'hash')
      const salt = randomBytes(ARGON2_SALT_BYTES)
      return formatArgon2id(configured, salt, await argon2(password, salt, configured, ARGON2_TAG_BYTES))
    },

    verify: (password: string, stored: string) => verifyStored(password, stored, argon2),

    needsRehash(stored: string): boolean {
      if (typeof stored !== 'string') return true
      const parsed = parseArgon2id(stored)
      return parsed === undefined || parsed.m !== configured.m || parsed.t !== configured.t || parsed.p !== configured.p
    },
  })
}

/** What the default hashing is, for the line said at init and for the bench. */
export type DefaultHashing = { readonly algorithm: 'argon2id'; readonly parameters: Argon2Parameters } | { readonly algorithm: 'scrypt'; readonly parameters: ScryptParameters }

/** The default hashing where `argon2` is the Argon2id engine at hand (null: none, so scrypt). */
export function defaultHashing(argon2: Argon2Engine | null = availableArgon2().engine ?? null): DefaultHashing {
  return argon2 ? { algorithm: 'argon2id', parameters: resolveArgon2Parameters(undefined) } : { algorithm: 'scrypt', parameters: DEFAULT_SCRYPT }
}

/**
 * The Password provider's default hasher: Argon2id at OWASP's parameters where an engine is at hand
 * (node:crypto's on Node ≥ 24.7, else the optional `@node-rs/argon2`), else scrypt at its defaults. Either verifies the other's hashes
 * (an Argon2id one only where the engine is) and imported bcrypt ones, and asks to rehash them.
 *
 * @param argon2 The Argon2id engine; default `availableArgon2()`'s. Tests pass `null` for "none".
 */
export function defaultPasswordHasher(argon2: Argon2Engine | null = availableArgon2().engine ?? null): PasswordHasher {
  return argon2 ? argon2idHasherWith(resolveArgon2Parameters(undefined), argon2) : scryptHasherWith(DEFAULT_SCRYPT, undefined)
}

/**
 * Whether `password` is the one `stored` was made from, whichever of scrypt, Argon2id and bcrypt
 * made it; false for anything unreadable or out of bounds, before any work.
 */
async function verifyStored(password: string, stored: string, argon2: Argon2Engine | undefined): Promise<boolean> {
  assertPassword(password, 'verify')
  if (typeof stored !== 'string') return false
  const parsed = parseScrypt(stored)
  if (parsed !== undefined) {
    const derived = await deriveKey(password, parsed.salt, parsed.key.length, scryptOptions(parsed))
    return derived.length === parsed.key.length && timingSafeEqual(derived, parsed.key)
  }
  if (looksLikeArgon2id(stored)) {
    const argon = parseArgon2id(stored)
    if (argon === undefined) return false
    // As for bcrypt without bcryptjs: refusing every such user's password would look like wrong passwords.
    if (!argon2) throw new Error(`A stored password is an Argon2id hash, and this Node.js (${process.version}) cannot verify it: node:crypto has argon2 from Node 24.7 on; before, npm install @node-rs/argon2.`)
    const tag = await argon2(password, argon.salt, argon, argon.tag.length)
    return tag.length === argon.tag.length && timingSafeEqual(tag, argon.tag)
  }
  if (isBcryptHash(stored)) return verifyBcrypt(password, stored)
  return false
}

function assertPassword(password: unknown, method: string): asserts password is string {
  if (typeof password !== 'string') throw new TypeError(`PasswordHasher.${method}: the password must be a string (normalizePassword's result); got ${typeof password}`)
}

/**
 * Whether `stored` is a bcrypt hash in the modular crypt format: `$2a$`, `$2b$` or `$2y$`, a
 * two-digit cost from 04 to 31, then 53 characters of salt and hash (bcrypt's base64 alphabet).
 *
 * @param stored A stored password hash.
 * @example
 * isBcryptHash('$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy') // true
 * isBcryptHash('$scrypt$ln=17,r=8,p=1$…$…') // false
 */
export function isBcryptHash(stored: string): boolean {
  return typeof stored === 'string' && BCRYPT_FORMAT.test(stored)
}

/** The part of bcryptjs used here (v2 and v3 both have it, v3 also as named exports). */
interface Bcrypt {
  compare(password: string, hash: string): Promise<boolean>
}

let bcrypt: Bcrypt | undefined

/**
 * Checks `password` against an imported bcrypt hash with bcryptjs, loaded on first use.
 *
 * bcrypt reads only the first 72 bytes of the password's UTF-8 encoding: two passwords that share
 * those bytes verify alike. The hash was made from whatever the other app hashed, usually the raw
 * input; for ASCII that is the same as the NFKC form given here.
 */
async function verifyBcrypt(password: string, stored: string): Promise<boolean> {
  if (Number(stored.slice(4, 6)) > MAX_BCRYPT_COST) return false
  bcrypt ??= await loadBcrypt()
  return bcrypt.compare(password, stored)
}

async function loadBcrypt(): Promise<Bcrypt> {
  let loaded: { default?: Bcrypt } & Partial<Bcrypt>
  try {
    loaded = (await import('bcryptjs')) as { default?: Bcrypt } & Partial<Bcrypt>
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new Error('A stored password is a bcrypt hash, and verifying it needs the bcryptjs package: npm install bcryptjs', { cause: error })
    }
    throw error
  }
  const candidate = typeof loaded.compare === 'function' ? loaded : loaded.default
  if (typeof candidate?.compare !== 'function') throw new Error('The installed bcryptjs has no compare(): install bcryptjs 2.4 or 3 (npm install bcryptjs)')
  return candidate as Bcrypt
}
