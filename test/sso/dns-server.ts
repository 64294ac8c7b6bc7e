/**
 * A DNS server on 127.0.0.1 (UDP, an ephemeral port) for the domain verification tests: it answers
 * TXT questions from a table the test fills, NXDOMAIN for any other name. The SSO provider's
 * `dnsServers` points `node:dns`'s resolver at it, so the check runs the real lookup over the wire.
 */
import { createSocket, type Socket } from 'node:dgram'
import { once } from 'node:events'
import dnsPacket from 'dns-packet'

/** A running test DNS server. */
export interface TestDns {
  /** `127.0.0.1:<port>`, for `SSO({ dnsServers: [dns.server] })`. */
  readonly server: string
  /** The TXT records by name (lower case): each a list of values (a value split in strings of 255 bytes at most). */
  readonly txt: Map<string, string[]>
  /** How many questions it answered, by name. */
  readonly asked: Map<string, number>
  close(): Promise<void>
}

export async function startDns(): Promise<TestDns> {
  const socket: Socket = createSocket('udp4')
  const txt = new Map<string, string[]>()
  const asked = new Map<string, number>()
  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet
    try {
      query = dnsPacket.decode(message)
    } catch {
      return
    }
    const question = query.questions?.[0]
    if (!question) return
    const name = question.name.toLowerCase()
    asked.set(name, (asked.get(name) ?? 0) + 1)
    const values = question.type === 'TXT' ? txt.get(name) : undefined
    const answer = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (values ? 0 : 3), // rcode 3: NXDOMAIN
      questions: [question],
      answers: (values ?? []).map((value) => ({ type: 'TXT', name: question.name, ttl: 60, class: 'IN', data: chunks(value) })),
    })
    socket.send(answer, remote.port, remote.address)
  })
  socket.bind(0, '127.0.0.1')
  await once(socket, 'listening')
  const { port } = socket.address()
  return {
    server: `127.0.0.1:${port}`,
    txt,
    asked,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  }
}

// A TXT record's value as its strings of at most 255 bytes (RFC 1035 §3.3.14).
function chunks(value: string): Buffer[] {
  const bytes = Buffer.from(value)
  const parts: Buffer[] = []
  for (let at = 0; at < bytes.length; at += 255) parts.push(bytes.subarray(at, at + 255))
  return parts.length > 0 ? parts : [Buffer.alloc(0)]
}
