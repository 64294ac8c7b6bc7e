/**
 * Permission-check benchmark (`npm run bench`, group `roles`): what one check costs in process.
 *
 *   access.can, one role        the pure check (`defineAccess`'s result), a granted ask of two actions
 *   access.can, one role, denied the same ask of a role that lacks one action
 *   access.can, two roles        the union of two roles' grants (the second grants the ask)
 *   hasPermission(req), warm JWT `hasPermission` on requests whose JWT session (roles in the token)
 *                                this instance read before: the session read it shares with `auth()`
 *                                plus the check (compare the session group's warm rows)
 *   hasPermission(req), warm JWT, active organization
 *                                the same with the `organizations` option on, an `activeOrganization`
 *                                claim in each token ({ id, roles: ['admin'] }) and an ask of the
 *                                organizations' own statement (`project: ['create']`): the global roles
 *                                (`editor`) deny it, the roles in the active organization grant it. The
 *                                adapter counts its calls: a warm read makes none (checked after the run)
 *
 * Method: the rows take turns within each of 5 rounds (BENCH_ROUNDS), the first rotating; a round
 * of a `can` row is 1,000,000 checks (BENCH_QUICK=1: 100,000), of the request row 10,000 reads.
 * Medians of the rounds, their spread, and the ratio to the first row. Target (issue 66): a check
 * in process under a microsecond.
 */
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { loadavg } from 'node:os'
import { randomUUID } from 'node:crypto'
import Portcullis, { defineAccess, type AccessControl } from '../src/index.js'
import Credentials from '../src/providers/credentials.js'
import { deriveKeyRing } from '../src/session/keys.js'
import { sealSessionToken } from '../src/session/token.js'
import { QUICK, rounds } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const ROUNDS = rounds(5)
const CHECKS = QUICK ? 100_000 : 1_000_000
const TOKENS = QUICK ? 2_000 : 10_000
const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef'
const SALT = 'authjs.session-token'

const access = defineAccess({
  statements: { post: ['create', 'update', 'delete'], comment: ['create', 'delete'], user: ['ban', 'set-role'] },
  roles: { editor: { post: ['create', 'update'], comment: ['create'] }, moderator: { comment: ['delete'], user: ['ban'] } },
})
const ask = { post: ['create', 'update'] } as const
const editor = Object.freeze(['editor'])
const moderatorEditor = Object.freeze(['moderator', 'editor'])
const user = Object.freeze(['user'])

const now = Math.floor(Date.now() / 1000)
const ring = deriveKeyRing([SECRET], SALT)
const tokens = Array.from({ length: TOKENS }, (_, i) =>
  sealSessionToken({ name: `Ada ${i}`, email: `ada.${i}@example.com`, sub: randomUUID(), roles: ['editor'] }, ring.current, 30 * 24 * 60 * 60, now),
)
const portcullis = Portcullis({
  secret: SECRET,
  providers: [Credentials({ authorize: () => null })],
  roles: access,
  session: { strategy: 'jwt' },
  // The check reads the session only: the adapter's methods are for sign-in and setRoles.
  adapter: { getUserRoles: async () => null, setUserRoles: async () => true },
  logger: { warn: () => {} },
  jwt: { cacheSize: TOKENS },
})
// The same tokens with an active organization, read by an instance with the organizations option.
const organizationTokens = Array.from({ length: TOKENS }, (_, i) =>
  sealSessionToken(
    { name: `Ada ${i}`, email: `ada.${i}@example.com`, sub: randomUUID(), roles: ['editor'], activeOrganization: { id: randomUUID(), roles: ['admin'] } },
    ring.current,
    30 * 24 * 60 * 60,
    now,
  ),
)
let adapterCalls = 0
const counted = <T>(value: T) => async () => {
  adapterCalls++
  return value
}
// Typed by the base AccessControl: `project` is a statement of the organizations option, not of `access`.
const organizations = Portcullis<AccessControl>({
  secret: SECRET,
  providers: [Credentials({ authorize: () => null })],
  roles: access,
  organizations: { statements: { project: ['create', 'delete'] } },
  session: { strategy: 'jwt' },
  // Every method counts its calls: the warm reads must make none.
  adapter: {
    getUserRoles: counted(null),
    setUserRoles: counted(true),
    listOrganizationsOfUser: counted([]),
    getMember: counted(null),
    getOrganization: counted(null),
    // The rest of what the organizations option checks the adapter has at init (its routes' methods): none is
    // called by a read, and each counts if it were.
    ...Object.fromEntries(
      ['createOrganization', 'updateOrganization', 'deleteOrganization', 'addMember', 'listMembers', 'countMembers', 'updateMemberRoles', 'removeMember', 'createInvitation', 'getInvitation', 'getInvitationByTokenHash', 'listInvitations', 'listInvitationsForEmail', 'settleInvitation', 'pruneInvitations', 'updateInvitationToken', 'getUser', 'getUserByEmail'].map((name) => [name, counted(null)]),
    ),
  },
  logger: { warn: () => {} },
  jwt: { cacheSize: TOKENS },
})
const organizationAsk = { project: ['create'] } as const

const requestWithCookie = (token: string): IncomingMessage => {
  const req = new IncomingMessage(new Socket())
  req.method = 'GET'
  req.url = '/posts'
  req.headers = { host: 'localhost:3000', cookie: `${SALT}=${token}`, accept: 'application/json' }
  return req
}
const response = new ServerResponse(requestWithCookie(''))
let requests: IncomingMessage[] = []
const prepareRequests = () => {
  requests = tokens.map(requestWithCookie)
}
let organizationRequests: IncomingMessage[] = []
const prepareOrganizationRequests = () => {
  organizationRequests = organizationTokens.map(requestWithCookie)
}

interface Row {
  name: string
  ops: number
  prepare?: () => void
  /** `ops` operations; returns how many were granted (so none is optimised away). */
  run: (ops: number) => number | Promise<number>
}

const canRow = (name: string, roles: readonly string[]): Row => ({
  name,
  ops: CHECKS,
  run: (ops) => {
    let granted = 0
    for (let i = 0; i < ops; i++) if (access.can(roles, ask)) granted++
    return granted
  },
})

const rows: Row[] = [
  canRow('access.can, one role', editor),
  canRow('access.can, one role, denied', user),
  canRow('access.can, two roles', moderatorEditor),
  {
    name: 'hasPermission(req), warm JWT',
    ops: TOKENS,
    prepare: prepareRequests,
    run: async (ops) => {
      let granted = 0
      for (let i = 0; i < ops; i++) if (await portcullis.hasPermission({ req: requests[i]!, res: response }, ask)) granted++
      return granted
    },
  },
  {
    name: 'hasPermission(req), warm JWT, active organization',
    ops: TOKENS,
    prepare: prepareOrganizationRequests,
    run: async (ops) => {
      let granted = 0
      for (let i = 0; i < ops; i++) if (await organizations.hasPermission({ req: organizationRequests[i]!, res: response }, organizationAsk)) granted++
      return granted
    },
  },
]

// Every token read twice, untimed: from then on the request row's reads hit the token cache.
for (let pass = 0; pass < 2; pass++) {
  prepareRequests()
  for (const req of requests) await portcullis.auth(req, response)
  prepareOrganizationRequests()
  for (const req of organizationRequests) await organizations.auth(req, response)
}
// The global roles alone do not grant the organizations' ask: the active organization's must.
if (await organizations.hasPermission({ req: requestWithCookie(tokens[0]!), res: response }, organizationAsk)) throw new Error('the global roles granted project: create')
for (const row of rows) {
  row.prepare?.()
  const granted = await row.run(Math.min(row.ops, 1000))
  if (row.name.includes('denied') ? granted !== 0 : granted === 0) throw new Error(`${row.name}: unexpected answer`)
}

const roundsUs = rows.map(() => [] as number[])
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < rows.length; i++) {
    const r = (i + round) % rows.length
    const { ops, prepare, run } = rows[r]!
    prepare?.()
    const start = process.hrtime.bigint()
    await run(ops)
    roundsUs[r]!.push(Number(process.hrtime.bigint() - start) / 1000 / ops)
  }
}

const medianUs = roundsUs.map((values) => median(values))
const us = (value: number) => (value < 0.1 ? value.toFixed(3) : value.toFixed(2))
console.log(`\nNode ${process.version}, permission checks in process, ${ROUNDS} rounds per row taking turns, medians (load average ${loadavg()[0]!.toFixed(1)})\n`)
printTable(
  ['permission check', 'ops/round', 'µs/op', 'spread µs/op', 'ops/s', 'x first'],
  rows.map(({ name, ops }, r) => [name, thousands(ops), us(medianUs[r]!), spread(roundsUs[r]!, us), thousands(1e6 / medianUs[r]!), (medianUs[r]! / medianUs[0]!).toFixed(2)]),
)
const slowest = Math.max(...medianUs.slice(0, 3))
console.log(`\naccess.can: at most ${us(slowest)} µs a check (target < 1 µs)`)
// Sign-in and the organization functions query; a warm read with an active organization must not.
if (adapterCalls !== 0) throw new Error(`the warm reads with an active organization called the adapter ${adapterCalls} times`)
console.log(`hasPermission with an active organization: ${(medianUs[4]! / medianUs[3]!).toFixed(2)}x the roles row, ${adapterCalls} adapter calls over its reads`)
