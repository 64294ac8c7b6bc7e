/**
 * A CLI signing its user in with the device flow (RFC 8628): `npx tsx examples/authorization-server/cli-device.ts`
 * (server.ts running). It is the public client `acme-cli`: no secret (anyone can read a CLI's binary), no
 * redirect. It asks for a code, prints where to enter it, and polls the token endpoint while the user opens
 * that page in any browser (a phone will do), signs in and allows it; then it calls /api/reports with the token.
 * A TV app does the same, showing the URL as a QR code.
 *
 * A real CLI keeps the refresh token where only the user can read it (the OS keychain, or a file with mode
 * 0600 under ~/.config), and the access token in memory; the next run refreshes instead of asking again.
 * Environment: SERVER_URL (default http://localhost:3000).
 */
import * as oauth from 'openid-client'

const server = new URL(process.env.SERVER_URL ?? 'http://localhost:3000')
// The example's server speaks http on this machine; openid-client refuses http unless told. Only for a local server.
const insecure = ['localhost', '127.0.0.1', '[::1]'].includes(server.hostname) ? [oauth.allowInsecureRequests] : []

const config = await oauth.discovery(new URL('/api/auth/oauth', server), 'acme-cli', undefined, oauth.None(), { execute: insecure })
const device = await oauth.initiateDeviceAuthorization(config, { scope: 'openid email reports:read' })
console.log(`To sign in, open ${device.verification_uri} in a browser and enter the code ${device.user_code}`)
if (device.verification_uri_complete) console.log(`(or open ${device.verification_uri_complete}, which has the code in it)`)
console.log('Waiting for you to allow Acme CLI…')

// Polls at the interval the server asked for, slower when told to, until the user allows or denies it, or the code expires.
const tokens = await oauth.pollDeviceAuthorizationGrant(config, device)
console.log(`Signed in as ${tokens.claims()?.['email'] ?? tokens.claims()?.sub}; scopes "${tokens.scope}"${tokens.refresh_token ? ', with a refresh token' : ''}`)

const response = await fetch(new URL('/api/reports', server), { headers: { authorization: `Bearer ${tokens.access_token}` } })
console.log(`GET /api/reports: ${response.status} ${await response.text()}`)
if (!response.ok) process.exitCode = 1
