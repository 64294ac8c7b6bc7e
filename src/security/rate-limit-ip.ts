/**
 * The client a sign-in attempt is counted against: its IP address as the app's framework sees it,
 * reduced to the network one client controls for IPv6.
 */
import { isIP, isIPv6 } from 'node:net'
import type { NodeRequest } from '../http/request.js'

/**
 * The client's address, as the rate limit counts it.
 *
 * Express's `req.ip` when present: it follows `app.set('trust proxy', …)`, so clients behind the
 * app's own proxy are told apart, and an `X-Forwarded-For` header from anyone else is ignored.
 * Elsewhere (Connect, node:http) the socket's peer address. Forwarded headers are never read here.
 * IPv4-mapped IPv6 (`::ffff:192.0.2.1`) counts as its IPv4 address; other IPv6 addresses count as
 * their first `ipv6Subnet` bits (`2001:db8:1:2::/64`), since one client gets a whole /64 and can use
 * any address in it.
 *
 * @param req The request (Express, Connect or node:http).
 * @param ipv6Subnet Prefix length IPv6 addresses are reduced to (1-128).
 * @returns The address or network, or undefined when the request has none (a closed socket).
 * @example
 * clientAddress(req, 64) // '203.0.113.7', or '2001:db8:1:2::/64'
 */
export function clientAddress(req: NodeRequest, ipv6Subnet: number): string | undefined {
  const expressIp = (req as { ip?: unknown }).ip
  const raw = typeof expressIp === 'string' && expressIp.length > 0 ? expressIp : req.socket?.remoteAddress
  if (!raw) return undefined
  return addressBucket(raw, ipv6Subnet)
}

/**
 * An address reduced to what the limit counts: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 as its
 * `/ipv6Subnet` network in canonical lower-case form.
 *
 * @example
 * addressBucket('2001:DB8:0:0:1::7', 64) // '2001:db8::/64'
 * addressBucket('::ffff:198.51.100.4', 64) // '198.51.100.4'
 */
export function addressBucket(address: string, ipv6Subnet: number): string {
  const withoutZone = address.replace(/%.*$/, '')
  if (isIP(withoutZone) === 4) return withoutZone
  if (!isIPv6(withoutZone)) return address.slice(0, 64)
  const groups = ipv6Groups(withoutZone)
  if (groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  }
  const masked = groups.map((group, index) => {
    const bits = Math.min(16, Math.max(0, ipv6Subnet - 16 * index))
    return group & ((0xffff << (16 - bits)) & 0xffff)
  })
  const text = compress(masked)
  return ipv6Subnet === 128 ? text : `${text}/${ipv6Subnet}`
}

// The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing IPv4 part converted).
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase()
  const ipv4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (ipv4) {
    const [a, b, c, d] = ipv4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, ipv4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const start = head ? head.split(':') : []
  const end = tail ? tail.split(':') : []
  const middle = tail === undefined ? [] : new Array<string>(8 - start.length - end.length).fill('0')
  return [...start, ...middle, ...end].map((group) => Number.parseInt(group, 16))
}

// RFC 5952 text: lower case, no leading zeros, the longest run (2+) of zero groups as `::`.
function compress(groups: number[]): string {
  let bestStart = -1
  let bestLength = 1
  for (let index = 0; index < groups.length; ) {
    if (groups[index] !== 0) {
      index += 1
      continue
    }
    let end = index
    while (end < groups.length && groups[end] === 0) end += 1
    if (end - index > bestLength) {
      bestStart = index
      bestLength = end - index
    }
    index = end
  }
  const hex = groups.map((group) => group.toString(16))
  if (bestStart === -1) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`
}
