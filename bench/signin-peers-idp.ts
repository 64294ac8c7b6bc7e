/**
 * The identity provider of bench/signin-peers.ts, in a process of its own so that the apps' process
 * CPU holds none of its work: test/support/idp.ts's oidc-provider with the clients it is sent.
 *
 * IPC: receives `{ clients }` once and answers `{ issuer }` when listening; then answers each
 * `{ id, type: 'cpu' }` with its `process.cpuUsage()` (`{ id, cpu: { user, system } }`, µs), and exits on
 * `{ type: 'close' }`.
 */
import { once } from 'node:events'
import { startIdp, type IdpClient } from '../test/support/idp.js'

const send = (message: unknown) => process.send!(message)
// The bench gone (stopped, or failed), so is this process.
process.on('disconnect', () => process.exit(0))
const [{ clients }] = (await once(process, 'message')) as [{ clients: IdpClient[] }]
const idp = await startIdp({ clients })
process.on('message', (message: { id: number; type: string }) => {
  if (message.type === 'cpu') send({ id: message.id, cpu: process.cpuUsage() })
  else if (message.type === 'close') void idp.close().then(() => process.exit(0))
})
send({ issuer: idp.issuer })
