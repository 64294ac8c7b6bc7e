/**
 * Password hashing benchmark (`npm run bench`): what one hash and one verification cost with the
 * Password provider's default hashing (Argon2id at OWASP's m = 19456 KiB, t = 2, p = 1 where
 * node:crypto has it, Node 24.7 and later, else through the optional @node-rs/argon2 when it is
 * installed, and then through both for comparison; scrypt elsewhere), scrypt at its defaults (OWASP's
 * minimum, N = 2^17, r = 8, p = 1, the default before Argon2id and still where Node has none) and at
 * N = 2^16 and 2^15 for comparison, and what verifying an imported bcrypt hash (bcryptjs, cost 10) costs.
 *
 * Method: one operation at a time, awaited (node:crypto's Argon2id and scrypt run on one thread of
 * libuv's pool, bcryptjs on the main thread: either way about one core), through the public hashers.
 * Each hasher makes one untimed hash first (the hash its verify row checks), bcrypt one untimed verify
 * (the call that loads bcryptjs, printed apart). Then 3 rounds (BENCH_ROUNDS), the rows taking turns
 * and the first rotating: Argon2id rows 10 operations a round, the scrypt default rows and bcrypt 2,
 * the comparison rows 1 (a scrypt hash at the defaults takes 0.4-0.8 s on the project's machine, an
 * Argon2id one about 40 ms). A row reports the median of its rounds' wall ms per operation and their
 * spread (min–max), the CPU ms per operation (process.cpuUsage over the round, all threads: what the
 * machine's load inflates least), `per core/s` = 1000 / CPU ms (for a verify row, the sign-ins one
 * core can check per second), the memory one operation holds (Argon2id's m KiB; 128 · N · r bytes
 * for scrypt; bcrypt's 4 KiB state), and its CPU time over scrypt's default verify (the cost of a
 * sign-in before Argon2id). BENCH_QUICK=1: 3 rounds of 1 operation per row (Argon2id 3).
 */
import { loadavg } from 'node:os'
import bcryptjs from 'bcryptjs'
import { argon2PackageInstalled, availableArgon2, DEFAULT_ARGON2ID, packageArgon2 } from '../src/features/password/argon2.js'
import { argon2idHasherWith, DEFAULT_SCRYPT, defaultHashing, defaultPasswordHasher, scryptHasher, type PasswordHasher } from '../src/features/password/hash.js'
import { QUICK, rounds } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const ROUNDS = rounds(3)
/** Operations per round: the Argon2id rows, the scrypt default and bcrypt rows, the comparison rows (ln=16, ln=15). */
const ARGON2_OPS = QUICK ? 3 : 10
const DEFAULT_OPS = QUICK ? 1 : 2
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

/** A hash row and a verify row of `hasher`. */
async function hasherRows(label: string, hasher: PasswordHasher, ops: number, memory: number): Promise<Row[]> {
  const stored = await hasher.hash(PASSWORD)
  const verify = async () => {
    if (!(await hasher.verify(PASSWORD, stored))) throw new Error(`${label}: verify refused the right password`)
  }
  return [
    { name: `${label.replace(' ', ' hash, ')}`, ops, memory, run: () => hasher.hash(PASSWORD) },
    { name: `${label.replace(' ', ' verify, ')}`, ops, memory, run: verify },
  ]
}

const { engine: argon2, source } = availableArgon2()
const hashing = defaultHashing()
const argon2Label = `argon2id m=${DEFAULT_ARGON2ID.m},t=${DEFAULT_ARGON2ID.t},p=${DEFAULT_ARGON2ID.p}`
const argon2Rows = argon2 ? await hasherRows(`${argon2Label} (default, ${source})`, argon2idHasherWith(DEFAULT_ARGON2ID, argon2), ARGON2_OPS, DEFAULT_ARGON2ID.m * 1024) : []
// Where Node has its own, the optional package's too, for comparison.
const packageRows =
  source === 'node:crypto' && argon2PackageInstalled() ? await hasherRows(`${argon2Label} (@node-rs/argon2)`, argon2idHasherWith(DEFAULT_ARGON2ID, packageArgon2), ARGON2_OPS, DEFAULT_ARGON2ID.m * 1024) : []
const scryptRows = async (ln: number) =>
  hasherRows(
    `scrypt ln=${ln}, r=${DEFAULT_SCRYPT.r}, p=${DEFAULT_SCRYPT.p}${ln === 17 ? (argon2 ? ' (default before Argon2id)' : ' (default)') : ''}`,
    scryptHasher({ ...DEFAULT_SCRYPT, N: 2 ** ln }),
    ln === 17 ? DEFAULT_OPS : COMPARISON_OPS,
    128 * 2 ** ln * DEFAULT_SCRYPT.r,
  )

const defaultHasher: PasswordHasher = defaultPasswordHasher()
const imported = bcryptjs.hashSync(PASSWORD, 10)
const bcryptRow: Row = {
  name: 'bcrypt verify, cost 10 (bcryptjs)',
  ops: DEFAULT_OPS,
  memory: 4168, // the P-array and the four S-boxes
  run: async () => {
    if (!(await defaultHasher.verify(PASSWORD, imported))) throw new Error('bcrypt: verify refused the right password')
  },
}

const rows: Row[] = [...argon2Rows, ...packageRows, ...(await scryptRows(17)), ...(await scryptRows(16)), ...(await scryptRows(15)), bcryptRow]
/** scrypt's default verify: the reference. */
const SCRYPT_VERIFY = argon2Rows.length + packageRows.length + 1
/** The default hashing's verify: what a sign-in costs now. */
const DEFAULT_VERIFY = argon2 ? 1 : SCRYPT_VERIFY

/** Wall and CPU ms per operation over `count` operations of `run`, one at a time. */
async function measure(run: () => Promise<unknown>, count: number): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage()
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) await run()
  const wall = Number(process.hrtime.bigint() - start) / 1e6 / count
  const used = process.cpuUsage(cpu)
  return { wall, cpu: (used.user + used.system) / 1000 / count }
}

// Untimed: bcrypt's first verification, the one that imports bcryptjs. (Each hasher has hashed
// once already, making the hash its verify row checks.)
const firstBcryptMs = (await measure(bcryptRow.run, 1)).wall

const wallMs = rows.map(() => [] as number[])
const cpuMs = rows.map(() => [] as number[])
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < rows.length; i++) {
    const r = (i + round) % rows.length
    const { wall, cpu } = await measure(rows[r]!.run, rows[r]!.ops)
    wallMs[r]!.push(wall)
    cpuMs[r]!.push(cpu)
  }
}

const medianWall = wallMs.map((values) => median(values))
const medianCpu = cpuMs.map((values) => median(values))
const ms = (value: number) => value.toFixed(1)
const mib = (bytes: number) => (bytes >= MiB ? String(Math.round((bytes / MiB) * 100) / 100) : (bytes / MiB).toFixed(3))
console.log(
  `\nNode ${process.version}, default hashing ${hashing.algorithm}, one operation at a time (about one core), ${ROUNDS} rounds per row taking turns (operations a round: ${argon2 ? `${ARGON2_OPS} Argon2id, ` : ''}${DEFAULT_OPS} scrypt default and bcrypt, ${COMPARISON_OPS} at ln=16 and ln=15), medians (load average ${loadavg()[0]!.toFixed(1)})\n`,
)
printTable(
  ['password hashing', 'ops', 'ms/op', 'spread ms/op', 'CPU ms/op', 'per core/s', 'memory MiB', 'CPU x scrypt verify'],
  rows.map(({ name, ops, memory }, r) => [
    name,
    thousands(ROUNDS * ops),
    ms(medianWall[r]!),
    spread(wallMs[r]!, ms),
    ms(medianCpu[r]!),
    (1000 / medianCpu[r]!).toFixed(1),
    mib(memory),
    (medianCpu[r]! / medianCpu[SCRYPT_VERIFY]!).toFixed(2),
  ]),
)

const verifyCpu = medianCpu[DEFAULT_VERIFY]!
const scryptCpu = medianCpu[SCRYPT_VERIFY]!
const memoryOf = (row: number) => rows[row]!.memory
console.log(`\nAt the defaults (${hashing.algorithm}) one core checks about ${(1000 / verifyCpu).toFixed(1)} sign-ins per second (${ms(verifyCpu)} ms of CPU, ${ms(medianWall[DEFAULT_VERIFY]!)} ms wall each).`)
if (argon2) {
  console.log(
    `That is ${(scryptCpu / verifyCpu).toFixed(1)} times the sign-ins per core of scrypt at N = 2^17 (${(1000 / scryptCpu).toFixed(1)}/s), at ${mib(memoryOf(DEFAULT_VERIFY))} MiB a sign-in instead of ${mib(memoryOf(SCRYPT_VERIFY))} (${(memoryOf(DEFAULT_VERIFY) / memoryOf(SCRYPT_VERIFY)).toFixed(2)} of it).`,
  )
} else {
  console.log('No Argon2id here (node:crypto has it from Node 24.7; @node-rs/argon2 is not installed): the default is scrypt, and the Argon2id rows are left out.')
}
console.log(
  `Both run on libuv's thread pool (UV_THREADPOOL_SIZE, 4 by default); the Password provider runs at most hashingLimit.concurrency at once (default: the pool less one, at most the cores), holding ${mib(memoryOf(DEFAULT_VERIFY))} MiB each.`,
)
console.log(`The first bcrypt verification, which imports bcryptjs, took ${ms(firstBcryptMs)} ms.`)
