/**
 * The requests this server makes to an organization's identity provider (its OIDC discovery, JWKS and
 * token endpoints, its SAML metadata URL): an organization admin chose those URLs, so each connection
 * is checked where it is made, not where it is registered. The address the name resolves to is
 * refused when it is loopback, private, link-local (cloud metadata at 169.254.169.254), shared,
 * unique-local or multicast, unless `dangerouslyAllowInternalUrls`; the check runs in the socket's
 * own lookup, so a name that resolves to a public address for a check and to an internal one for the
 * request (DNS rebinding) is refused too. No redirects are followed; answers are capped in size and time.
 *
 * @see https://owasp.org/www-community/attacks/Server_Side_Request_Forgery
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { BlockList, isIP } from 'node:net'
import { SsoError } from './errors.js'

const MAX_BYTES = 1024 * 1024
const TIMEOUT_MS = 10_000

const internal = new BlockList()
for (const [address, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) internal.addSubnet(address, prefix, 'ipv4')
for (const [address, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) internal.addSubnet(address, prefix, 'ipv6')

/** Whether an IP address is one a connection may not reach (see the module's comment). */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return internal.check(address, 'ipv4')
  if (family !== 6) return true
  // An IPv4-mapped IPv6 address is the IPv4 address it maps.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped ? internal.check(mapped[1]!, 'ipv4') : internal.check(address, 'ipv6')
}

/**
 * Checks a URL an organization gave for its identity provider.
 * @throws SsoError `invalid_input` when it is no https URL (http only with `allowInternal`).
 */
export function checkedIdpUrl(value: unknown, field: string, allowInternal: boolean): URL {
  let url: URL
  try {
    url = new URL(String(value))
  } catch {
    throw new SsoError('invalid_input', `${field} must be an absolute URL.`)
  }
  if (typeof value !== 'string' || (url.protocol !== 'https:' && !(allowInternal && url.protocol === 'http:'))) throw new SsoError('invalid_input', `${field} must be an https URL.`)
  if (url.username || url.password) throw new SsoError('invalid_input', `${field} must not carry a user name or password.`)
  return url
}

type Lookup = (hostname: string, options: object, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => void

/** A lookup that fails for names resolving to an internal address. */
function guardedLookup(allowInternal: boolean): Lookup {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      const refused = allowInternal ? undefined : addresses.find(({ address }) => isInternalAddress(address))
      if (refused) return callback(Object.assign(new Error(`${hostname} resolves to an internal address; a connection's identity provider must be on the public internet (dangerouslyAllowInternalUrls is for a local development IdP).`), { code: 'PORTCULLIS_INTERNAL_ADDRESS' }), [])
      if ((options as { all?: boolean }).all) return callback(null, addresses)
      const first = addresses[0]!
      callback(null, first.address, first.family)
    })
  }
}

/**
 * A `fetch` for the identity provider's endpoints (openid-client's `customFetch`): Node's http(s)
 * with the guarded lookup, no redirects followed, at most 1 MiB in 10 s.
 */
export function guardedFetch(allowInternal: boolean): (url: string, options: { method?: string; headers?: HeadersInit; body?: BodyInit | null; signal?: AbortSignal | null }) => Promise<Response> {
  const lookup = guardedLookup(allowInternal)
  return async (input, options = {}) => {
    const url = new URL(input)
    if (url.protocol !== 'https:' && !(allowInternal && url.protocol === 'http:')) throw new TypeError(`Refused a request to ${url.origin}: an identity provider's endpoints must be https.`)
    if (!allowInternal && isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0 && isInternalAddress(url.hostname.replace(/^\[|\]$/g, ''))) throw new TypeError(`Refused a request to ${url.origin}: an internal address.`)
    const body = options.body === undefined || options.body === null ? undefined : Buffer.from(await new Response(options.body).arrayBuffer())
    const headers = Object.fromEntries(new Headers(options.headers ?? {}))
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const answer = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = send(url, { method: options.method ?? 'GET', headers, lookup: lookup as never, timeout: TIMEOUT_MS, signal: options.signal ?? undefined }, resolve)
      request.on('timeout', () => request.destroy(new Error(`${url.origin} did not answer within ${TIMEOUT_MS / 1000} s.`)))
      request.on('error', reject)
      request.end(body)
    })
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of answer as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > MAX_BYTES) {
        answer.destroy()
        throw new TypeError(`${url.origin} answered more than ${MAX_BYTES} bytes.`)
      }
      chunks.push(chunk)
    }
    const status = answer.statusCode ?? 502
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const one of value) responseHeaders.append(name, one)
      else if (value !== undefined) responseHeaders.set(name, value)
    }
    // A redirect is answered as it is (openid-client refuses it): never followed to where it points.
    return new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status, headers: responseHeaders })
  }
}

/** The text at an identity provider's metadata URL, fetched as `guardedFetch` does. @throws SsoError `invalid_metadata` */
export async function fetchMetadata(url: URL, allowInternal: boolean): Promise<string> {
  let response: Response
  try {
    response = await guardedFetch(allowInternal)(url.href, { headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } })
  } catch (error) {
    throw new SsoError('invalid_metadata', `The metadata at ${url.origin}${url.pathname} could not be fetched: ${(error as Error).message}`, { cause: error })
  }
  if (response.status !== 200) throw new SsoError('invalid_metadata', `The metadata at ${url.origin}${url.pathname} answered ${response.status}.`)
  return response.text()
}
