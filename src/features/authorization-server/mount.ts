/**
 * The authorization server's endpoints (`<basePath>/oauth/*`: discovery, JWKS, authorize, token,
 * device, revocation, introspection, userinfo, end session), handed to oidc-provider with Node's
 * request and response (`Feature.mount`). The request is first shaped as oidc-provider reads it:
 * its URL below the mount, the mount as `baseUrl`, and the issuer's host and scheme as the
 * forwarded ones, so that every URL it writes (discovery, redirects, cookies' paths) is the
 * issuer's whatever Host the request sent (the issuer is fixed by AUTH_URL: config.ts).
 */
import type { MountHandler } from '../../composition/index.js'
import { limitRequest } from '../../security/rate-limit.js'
import { clientAddress } from '../../security/rate-limit-ip.js'
import { authorizationServerOf } from './config.js'
import { serverOf } from './provider.js'

// Open registration (RFC 7591) stores a client for anyone who asks: some a day from one address is
// what a developer trying clients needs, and keeps a script from filling the store.
const REGISTRATIONS = { attempts: 20, windowSeconds: 3600 } as const

export const authorizationServerMount: MountHandler = async (req, res, { config, url }) => {
  if (req.method === 'POST' && url.split('?', 1)[0] === '/reg' && authorizationServerOf(config)!.registration) {
    const address = clientAddress(req, config.rateLimit ? config.rateLimit.ipv6Subnet : 64) ?? 'unknown'
    const retryAfter = await limitRequest(config, 'oauth-registration', address, REGISTRATIONS)
    if (retryAfter !== undefined) {
      res.writeHead(429, { 'Retry-After': String(retryAfter), 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' })
      return void res.end(JSON.stringify({ error: 'rate_limited', error_description: `Too many registrations from this address: try again in ${retryAfter} seconds.` }))
    }
  }
  const server = await serverOf(config)
  const issuer = new URL(server.issuer)
  req.url = url
  delete req.originalUrl
  // The issuer's path, which is where this mount is when basePath is right (the router warns when not).
  ;(req as { baseUrl?: string }).baseUrl = issuer.pathname
  req.headers['x-forwarded-host'] = issuer.host
  req.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1)
  await server.callback(req, res)
}
