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
import { randomBytes } from 'node:crypto'
import { describe, it } from '@jest/globals'
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

/** Probes the server: one connection and `PING`, at most ~2 s. */
export async function findRedisServer(): Promise<RedisServer> {
  const url = redisUrl()
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
export async function describeWithRedis(title: string, body: (server: RedisServer) => void): Promise<void> {
  const server = await findRedisServer()
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
