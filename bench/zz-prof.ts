import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { createHash, randomUUID } from 'node:crypto'
import knex from 'knex'
import Portcullis from '../src/index.js'
import { KnexAdapter, migrationSource } from '../src/adapters/knex/index.js'
import Credentials from '../src/providers/credentials.js'
import { displayOf, generateKey } from '../src/features/api-keys/format.js'
const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
await db.migrate.latest({ migrationSource: migrationSource() })
const uid = randomUUID()
await db('User').insert({ id: uid, name: 'u', email: 'u@example.com' })
const keys = Array.from({ length: 100 }, () => generateKey('pc_live_'))
await db('ApiKey').insert(keys.map((key, i) => ({ id: randomUUID(), keyHash: createHash('sha256').update(key).digest('hex'), display: displayOf(key, 'pc_live_'), name: `k${i}`, ownerType: 'user', ownerId: uid, scopes: '["a"]', createdAt: new Date() })))
const KA = KnexAdapter(db)
const mode = process.env.MODE ?? 'auth'
const { auth } = Portcullis({ secret: 'bench-secret-0123456789abcdef0123456789abcdef', adapter: KnexAdapter(db), providers: [Credentials({ authorize: () => null })], rateLimit: false, apiKeys: { cacheSeconds: 0, rateLimit: false }, logger: { warn: () => {}, error: console.error, debug: () => {} } })
const req = (key: string) => { const r = new IncomingMessage(new Socket()); r.method = 'GET'; r.url = '/x'; r.headers = { host: 'localhost', authorization: `Bearer ${key}` }; return r }
const res = new ServerResponse(req(''))
const hashes = keys.map((k) => createHash('sha256').update(k).digest('hex'))
const conn = await db.client.acquireConnection(); const stmt = conn.prepare('select k.*, u.id as uid from ApiKey as k inner join User as u on u.id = k.ownerId where k.keyHash = ? and k.ownerType = ? limit 1'); await db.client.releaseConnection(conn)
const compiled = db('ApiKey as k').join('User as u', 'u.id', 'k.ownerId').where('k.keyHash', 'x').andWhere('k.ownerType', 'user').first('k.*', 'u.id as uid', 'u.name as uname', 'u.email as uemail').toSQL().sql
const N = Number(process.env.N ?? 20000)
const reqs = mode === 'auth' ? Array.from({ length: N }, (_, i) => req(keys[i % 100]!)) : []
const t = process.hrtime.bigint(); const c0 = process.cpuUsage()
for (let i = 0; i < N; i++) {
  if (mode === 'raw') await db('ApiKey as k').join('User as u', 'u.id', 'k.ownerId').where('k.keyHash', hashes[i % 100]!).andWhere('k.ownerType', 'user').first('k.*', 'u.id as uid', 'u.name as uname', 'u.email as uemail')
  else if (mode === 'raw5') await db('ApiKey as k').join('User as u', 'u.id', 'k.ownerId').where('k.keyHash', hashes[i % 100]!).andWhere('k.ownerType', 'user').first('k.*', 'u.id as portcullis_owner_id', 'u.name as portcullis_owner_name', 'u.email as portcullis_owner_email', 'u.emailVerified as portcullis_owner_emailVerified', 'u.image as portcullis_owner_image')
  else if (mode === 'rawsql') await db.raw(compiled, [hashes[i % 100]!, 'user', 1])
  else if (mode === 'prepared') stmt.get(hashes[i % 100]!, 'user')
  else if (mode === 'adapter') await (KA as any).getApiKeyByHash(hashes[i % 100]!)
  else { const s = await auth(reqs[i]!, res); if (!s) throw new Error('no') }
}
const c1 = process.cpuUsage(c0); console.log(mode, (Number(process.hrtime.bigint() - t) / 1000 / N).toFixed(1), 'µs/op wall', ((c1.user + c1.system) / N).toFixed(1), 'µs/op cpu')
await db.destroy()
