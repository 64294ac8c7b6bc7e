/**
 * The Redis server of the machine or of CI (127.0.0.1:6379; `REDIS_URL` overrides it), for the
 * suites that share counts through Redis. Suites use a key prefix of their own (`uniqueKeyPrefix()`)
 * so Jest's parallel workers never count each other's attempts, and delete their keys afterwards.
 *
 * A server that does not answer skips its suites with a line saying so, unless `CI` is set: CI
 * must run them, so there an unreachable server fails the suite instead (as for the databases).
 *
 * @example
 * ```ts
 * import { describeWithRedis } from '../support/redis.js'
 *
 * await describeWithRedis('limits shared through Redis', (redis) => {
 *   let client: Redis
 *   beforeAll(() => { client = redis.connect() })
 *   afterAll(() => redis.cleanUp())
 *   it('...', async () => { await client.ping() })
 * })
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer, type AddressInfo } from 'node:net'
import { afterAll, describe, it } from '@jest/globals'
import { Redis, type RedisOptions } from 'ioredis'
import { Redis as Redis5 } from 'ioredis5'
import { createClient } from 'redis'
import { isCI } from './databases.js'

/** How long the probe waits for the server. */
const PROBE_TIMEOUT_MS = 2000
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

/** The Redis server, probed once, and the clients a suite opened on it. */
export interface RedisServer {
  /** For messages: `127.0.0.1:6379`. */
  readonly address: string
  readonly reachable: boolean
  readonly unreachableReason?: string
  /** A new client (another app process would have its own); closed by `cleanUp()`. */
  connect(options?: RedisOptions): Redis
  /** The same with ioredis 5 (RESP2; `npm install ioredis` gives 6, RESP3), which apps still use. */
  connectIoredis5(): Redis5
  /** A connected node-redis client (the `redis` package), which the rate limit also takes. */
  connectNodeRedis(): Promise<NodeRedis>
  /** Deletes the keys under the prefixes handed out by `uniqueKeyPrefix()`, then closes every client. */
  cleanUp(): Promise<void>
  /** A key prefix no other suite or run uses, e.g. `portcullis-test-1a2b3c4d5e6f`. */
  uniqueKeyPrefix(): string
}

const nodeRedis = (url: string) => createClient({ url })
type NodeRedis = ReturnType<typeof nodeRedis>

function redisUrl(): string {
  return process.env.REDIS_URL || DEFAULT_REDIS_URL
}

/** Probes the server (the machine's, or the one at `url`): one connection and `PING`, at most ~2 s. */
export async function findRedisServer(url = redisUrl()): Promise<RedisServer> {
  const { host, port } = new URL(url)
  const address = `${host}:${port || 6379}`
  const unreachableReason = await probe(url)
  const clients: Array<Redis | Redis5> = []
  const nodeRedisClients: NodeRedis[] = []
  const prefixes: string[] = []
  const mustBeReachable = () => {
    if (unreachableReason !== undefined) throw new Error(`Redis is not reachable at ${address}: ${unreachableReason}`)
  }
  const opened = <C extends Redis | Redis5>(open: () => C): C => {
    mustBeReachable()
    const client = open()
    clients.push(client)
    return client
  }
  return {
    address,
    reachable: unreachableReason === undefined,
    ...(unreachableReason === undefined ? {} : { unreachableReason }),
    connect(options = {}) {
      return opened(() => new Redis(url, options))
    },
    connectIoredis5() {
      return opened(() => new Redis5(url))
    },
    async connectNodeRedis() {
      mustBeReachable()
      const client = nodeRedis(url)
      nodeRedisClients.push(client)
      await client.connect()
      return client
    },
    uniqueKeyPrefix() {
      const prefix = `portcullis-test-${randomBytes(6).toString('hex')}`
      prefixes.push(prefix)
      return prefix
    },
    async cleanUp() {
      const client = clients[0]
      if (client) {
        for (const prefix of prefixes) {
          const keys = await client.keys(`${prefix}:*`)
          if (keys.length > 0) await client.del(...keys)
        }
      }
      await Promise.all([
        ...clients.splice(0).map((each) => each.quit().catch(() => each.disconnect())),
        ...nodeRedisClients.splice(0).map((each) => each.close().catch(() => each.destroy())),
      ])
    },
  }
}

/**
 * `describe(title, body)` when Redis answers. When it does not: without `CI`, the suite is skipped
 * (its title saying why) and a warning is printed; with `CI` set, a failing test takes its place.
 * Call it at the top level of a test file with `await`.
 */
export async function describeWithRedis(title: string, body: (server: RedisServer) => void, found?: Promise<RedisServer>): Promise<void> {
  const server = await (found ?? findRedisServer())
  if (server.reachable) {
    describe(title, () => body(server))
    return
  }
  const why = `Redis not reachable at ${server.address} (${server.unreachableReason})`
  if (isCI()) {
    describe(title, () => {
      it(`connects to Redis at ${server.address} (required when CI is set)`, () => {
        throw new Error(`${why}. CI must run the Redis suites: start redis-server (.ci/run does), or point REDIS_URL at one.`)
      })
    })
    return
  }
  // Straight to stderr: Jest drops the console output of a file whose tests were all skipped.
  process.stderr.write(`\n${why}: skipping "${title}" (set CI=true to make this a failure; REDIS_URL overrides the address)\n`)
  describe.skip(`${title} [skipped: ${why}]`, () => body(server))
}

/**
 * `describeWithRedis` on a `redis-server` of the file's own (a free loopback port, no persistence),
 * stopped after the suite: for a suite that pauses or breaks its server (`CLIENT PAUSE … ALL`), which
 * on the shared server would stall every other suite's Redis for as long. Without the `redis-server`
 * binary it skips (or fails with `CI` set) as `describeWithRedis` does for an unreachable server.
 */
export async function describeWithOwnRedis(title: string, body: (server: RedisServer) => void): Promise<void> {
  const own = await startOwnRedis()
  await describeWithRedis(title, (server) => {
    body(server)
    afterAll(() => own.stop())
  }, own.server)
}

async function startOwnRedis(): Promise<{ server: Promise<RedisServer>; stop: () => void }> {
  const port = await new Promise<number>((resolve, reject) => {
    const probeServer = createServer().once('error', reject)
    probeServer.listen(0, '127.0.0.1', () => {
      const { port: free } = probeServer.address() as AddressInfo
      probeServer.close(() => resolve(free))
    })
  })
  let child: ChildProcess | undefined
  const started = new Promise<void>((resolve) => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
    child.once('error', () => resolve())
    // Ready once it answers; findRedisServer below waits for that (and says why not).
    setTimeout(resolve, 300)
  })
  await started
  const url = `redis://127.0.0.1:${port}`
  const waitForIt = async (): Promise<RedisServer> => {
    for (let tries = 0; ; tries++) {
      const server = await findRedisServer(url)
      if (server.reachable || tries >= 20 || child?.exitCode !== null) return server
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  return { server: waitForIt(), stop: () => child?.kill() }
}

/** `undefined` when the server answered PING, else why not. */
async function probe(url: string): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null })
  // The failure is reported once, as the reason; ioredis would also emit it as an event.
  client.on('error', () => {})
  try {
    await client.connect()
    await client.ping()
    return undefined
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string }
    return code ?? message ?? String(error)
  } finally {
    client.disconnect()
  }
}
