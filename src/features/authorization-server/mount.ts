/**
 * The authorization server's endpoints (`<basePath>/oauth/*`: discovery, JWKS, authorize, token,
 * device, revocation, introspection, userinfo, end session), handed to oidc-provider with Node's
 * request and response (`Feature.mount`). The request is first shaped as oidc-provider reads it:
 * its URL below the mount, the mount as `baseUrl`, and the issuer's host and scheme as the
 * forwarded ones, so that every URL it writes (discovery, redirects, cookies' paths) is the
 * issuer's whatever Host the request sent (the issuer is fixed by AUTH_URL: config.ts).
 */
import type { MountHandler } from '../../composition/index.js'
import { serverOf } from './provider.js'

export const authorizationServerMount: MountHandler = async (req, res, { config, url }) => {
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
