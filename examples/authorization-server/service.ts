/**
 * A service calling the API for itself, with no user: `npx tsx examples/authorization-server/service.ts`
 * (server.ts running). It is the confidential client `report-job`: it authenticates with its secret and
 * asks for an access token by the client credentials grant (RFC 6749 §4.4), then calls /api/reports.
 * The token is the client's own: on the API, `req.auth.user` is null and `req.auth.client.id` is `report-job`.
 *
 * A service keeps the token in memory and asks for a new one when it expires (no refresh token: it can
 * always ask again). Environment: SERVER_URL (default http://localhost:3000), REPORT_JOB_SECRET.
 */
import * as oauth from 'openid-client'

const server = new URL(process.env.SERVER_URL ?? 'http://localhost:3000')
// The development default of server.ts. A real service reads its secret from its secret store, never from code.
const secret = process.env.REPORT_JOB_SECRET ?? 'report-job-development-secret-not-for-production'
// The example's server speaks http on this machine; openid-client refuses http unless told. Only for a local server.
const insecure = ['localhost', '127.0.0.1', '[::1]'].includes(server.hostname) ? [oauth.allowInsecureRequests] : []

const config = await oauth.discovery(new URL('/api/auth/oauth', server), 'report-job', undefined, oauth.ClientSecretBasic(secret), { execute: insecure })
const tokens = await oauth.clientCredentialsGrant(config, { scope: 'reports:read' })
console.log(`Got an access token for scope "${tokens.scope}", valid for ${tokens.expires_in} s`)

const response = await fetch(new URL('/api/reports', server), { headers: { authorization: `Bearer ${tokens.access_token}` } })
console.log(`GET /api/reports: ${response.status} ${await response.text()}`)
if (!response.ok) process.exitCode = 1
