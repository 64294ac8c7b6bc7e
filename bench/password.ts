/**
 * Password hashing benchmark (`npm run bench`): what one scrypt hash and one verification cost at
 * the default parameters (OWASP's minimum, N = 2^17, r = 8, p = 1), at N = 2^16 and 2^15 for
 * comparison, and what verifying an imported bcrypt hash (bcryptjs, cost 10) costs.
 *
 * Method: one operation at a time, awaited (node:crypto's scrypt runs on one thread of libuv's pool,
 * bcryptjs on the main thread: either way about one core), through the public `scryptHasher`. Each
 * hasher makes one untimed hash first (the hash its verify row checks), bcrypt one untimed verify
 * (the call that loads bcryptjs, printed apart). Then 3 rounds (BENCH_ROUNDS), the rows taking turns
 * and the first rotating, of 2 default hashes (6 in all), 2 default verifications and 2 bcrypt
 * ones (6 each), and 1 of each comparison row (3 each): hash and verify are the same scrypt call,
 * so the default rows carry the most samples, and a scrypt hash at the defaults takes
 * 0.4-0.6 s on the project's machine. A row reports the median of its rounds' ms per operation, their spread
 * (min–max), `per core/s` = 1000 / ms (for a verify row, the sign-ins one core can check per second),
 * the memory one operation takes (128 · N · r bytes for scrypt; bcrypt's 4 KiB state), and its
 * median over the default verify's. About 20-25 s on the project's 2-core machine. BENCH_QUICK=1: 3
 * rounds of 1 operation per row.
 */
import { loadavg } from 'node:os'
import bcryptjs from 'bcryptjs'
import { DEFAULT_SCRYPT, scryptHasher, type PasswordHasher } from '../src/features/password/hash.js'
import { QUICK, rounds } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const ROUNDS = rounds(3)
/** Operations per round: the default hash row, the default verify and bcrypt rows, the comparison rows (ln=16, ln=15). */
const HASH_OPS = QUICK ? 1 : 2
const VERIFY_OPS = QUICK ? 1 : 2
const COMPARISON_OPS = 1
const PASSWORD = 'correct horse battery staple'
const MiB = 2 ** 20

interface Row {
  name: string
  /** Operations per round. */
  ops: number
  /** Bytes one operation holds while it runs. */
  memory: number
  run: () => Promise<unknown>
}

/** A hash row and a verify row for scrypt with N = 2^ln (r = 8, p = 1). */
async function scryptRows(ln: number): Promise<Row[]> {
  const hasher = scryptHasher({ ...DEFAULT_SCRYPT, N: 2 ** ln })
  const stored = await hasher.hash(PASSWORD)
  const memory = 128 * 2 ** ln * DEFAULT_SCRYPT.r
  const isDefault = ln === Math.log2(DEFAULT_SCRYPT.N)
  const label = `ln=${ln}, r=${DEFAULT_SCRYPT.r}, p=${DEFAULT_SCRYPT.p}${isDefault ? ' (default)' : ''}`
  const verify = async () => {
    if (!(await hasher.verify(PASSWORD, stored))) throw new Error(`scrypt ${label}: verify refused the right password`)
  }
  return [
    { name: `scrypt hash, ${label}`, ops: isDefault ? HASH_OPS : COMPARISON_OPS, memory, run: () => hasher.hash(PASSWORD) },
    { name: `scrypt verify, ${label}`, ops: isDefault ? VERIFY_OPS : COMPARISON_OPS, memory, run: verify },
  ]
}

const defaultHasher: PasswordHasher = scryptHasher()
const imported = bcryptjs.hashSync(PASSWORD, 10)
const bcryptRow: Row = {
  name: 'bcrypt verify, cost 10 (bcryptjs)',
  ops: VERIFY_OPS,
  memory: 4168, // the P-array and the four S-boxes
  run: async () => {
    if (!(await defaultHasher.verify(PASSWORD, imported))) throw new Error('bcrypt: verify refused the right password')
  },
}

const rows: Row[] = [...(await scryptRows(17)), ...(await scryptRows(16)), ...(await scryptRows(15)), bcryptRow]
// The default verify is the reference: rows[1].
const REFERENCE = 1

/** ms per operation over `count` operations of `run`, one at a time. */
async function measure(run: () => Promise<unknown>, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) await run()
  return Number(process.hrtime.bigint() - start) / 1e6 / count
}

// Untimed: bcrypt's first verification, the one that imports bcryptjs. (Each scrypt hasher has
// hashed once already, making the hash its verify row checks.)
const firstBcryptMs = await measure(bcryptRow.run, 1)

const roundsMs = rows.map(() => [] as number[])
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < rows.length; i++) {
    const r = (i + round) % rows.length
    roundsMs[r]!.push(await measure(rows[r]!.run, rows[r]!.ops))
  }
}

const medianMs = roundsMs.map((values) => median(values))
const ms = (value: number) => value.toFixed(1)
const mib = (bytes: number) => (bytes >= MiB ? String(bytes / MiB) : (bytes / MiB).toFixed(3))
console.log(
  `\nNode ${process.version}, one operation at a time (about one core), ${ROUNDS} rounds per row taking turns (operations a round: ${HASH_OPS} default hashes, ${VERIFY_OPS} default and bcrypt verifications, ${COMPARISON_OPS} of each at ln=16 and ln=15), medians (load average ${loadavg()[0]!.toFixed(1)})\n`,
)
printTable(
  ['password hashing', 'ops', 'ms/op', 'spread ms/op', 'per core/s', 'memory MiB', 'x default verify'],
  rows.map(({ name, ops, memory }, r) => [
    name,
    thousands(ROUNDS * ops),
    ms(medianMs[r]!),
    spread(roundsMs[r]!, ms),
    (1000 / medianMs[r]!).toFixed(1),
    mib(memory),
    (medianMs[r]! / medianMs[REFERENCE]!).toFixed(2),
  ]),
)

const verifyMs = medianMs[REFERENCE]!
const defaultMemory = 128 * DEFAULT_SCRYPT.N * DEFAULT_SCRYPT.r
console.log(`\nAt the defaults one core checks about ${(1000 / verifyMs).toFixed(1)} sign-ins per second (${ms(verifyMs)} ms each).`)
console.log(
  `scrypt runs on libuv's thread pool (UV_THREADPOOL_SIZE, 4 by default): up to 4 at once on 4 cores, holding ${(4 * defaultMemory) / MiB} MiB together at the defaults.`,
)
console.log(`The first bcrypt verification, which imports bcryptjs, took ${ms(firstBcryptMs)} ms.`)
