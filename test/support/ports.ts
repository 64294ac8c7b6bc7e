/** Ports for the suites' own servers: one nothing listens on, one for an example's servers. */
import { createServer } from 'node:http'

/** A port nothing listens on: bound on 127.0.0.1, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A port for an example to listen on, chosen at random below Linux's ephemeral range (32768-60999),
 * where the suite's own outgoing sockets take theirs: a port picked there may be in use on one of
 * localhost's addresses and free on the other. `span` leaves the ports after it for the example's
 * other servers.
 */
export function examplePort(span = 1): number {
  return 20000 + Math.floor(Math.random() * (12000 - span))
}
