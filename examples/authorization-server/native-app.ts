/**
 * A desktop (or phone) app signing its user in through the system browser, as RFC 8252 says a native app
 * does: `npx tsx examples/authorization-server/native-app.ts` (server.ts running). It is the public client
 * `acme-desktop`. It listens on a loopback port of its own (127.0.0.1, a random port: a native client's
 * loopback redirect matches any port), builds the authorization URL with PKCE (S256) and a state, and
 * prints it: the user opens it in their browser (a real app opens it itself, never in a web view of its
 * own, where it could read the password), signs in to the site and allows the app. The browser comes back
 * to the loopback address with the code, which the app exchanges (with its PKCE verifier) for tokens; it
 * calls /api/reports, refreshes once, and calls it again.
 *
 * A phone app does the same with its claimed https redirect (an App Link / Universal Link) or its
 * reverse-domain scheme (com.example.acme:/callback) instead of a loopback listener. It keeps the refresh
 * token in the platform's keystore (Keychain, Android Keystore) and the access token in memory; the
 * refresh token is rotated on each use, so it stores the new one each time.
 * Environment: SERVER_URL (default http://localhost:3000).
 */
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as oauth from 'openid-client'

const server = new URL(process.env.SERVER_URL ?? 'http://localhost:3000')
// The example's server speaks http on this machine; openid-client refuses http unless told. Only for a local server.
const insecure = ['localhost', '127.0.0.1', '[::1]'].includes(server.hostname) ? [oauth.allowInsecureRequests] : []
const config = await oauth.discovery(new URL('/api/auth/oauth', server), 'acme-desktop', undefined, oauth.None(), { execute: insecure })

// The loopback listener, on 127.0.0.1 (not `localhost`, which may resolve elsewhere: RFC 8252 §8.3).
const loopback = createServer()
loopback.listen(0, '127.0.0.1')
await once(loopback, 'listening')
const redirectUri = `http://127.0.0.1:${(loopback.address() as AddressInfo).port}/callback`

// PKCE binds the code to this run of the app: another app that catches the redirect cannot redeem it.
const codeVerifier = oauth.randomPKCECodeVerifier()
const state = oauth.randomState()
const authorizationUrl = oauth.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'openid email reports:read',
  code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
  code_challenge_method: 'S256',
  state,
})
console.log(`Open this URL in your browser to sign in:\n${authorizationUrl.href}`)

// The browser's request to the loopback address with the authorization response (anything else it asks for, a
// favicon say, is not found).
const { callbackUrl, response } = await new Promise<{ callbackUrl: URL; response: ServerResponse }>((resolve) => {
  loopback.on('request', (request: IncomingMessage, answer: ServerResponse) => {
    const url = new URL(request.url ?? '/', redirectUri)
    if (url.pathname === '/callback') resolve({ callbackUrl: url, response: answer })
    else answer.writeHead(404).end()
  })
})
let tokens: oauth.TokenEndpointResponse & oauth.TokenEndpointResponseHelpers
try {
  // Checks the state and the iss parameter (RFC 9207), then redeems the code with the verifier.
  tokens = await oauth.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: codeVerifier, expectedState: state })
  response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Signed in to Acme Desktop. You can close this window.\n')
} catch (error) {
  response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('The sign-in did not complete. Go back to Acme Desktop.\n')
  throw error
} finally {
  loopback.close()
  loopback.closeAllConnections()
}
console.log(`Signed in as ${tokens.claims()?.['email'] ?? tokens.claims()?.sub}; scopes "${tokens.scope}"`)

async function callApi(accessToken: string): Promise<boolean> {
  const answer = await fetch(new URL('/api/reports', server), { headers: { authorization: `Bearer ${accessToken}` } })
  console.log(`GET /api/reports: ${answer.status} ${await answer.text()}`)
  return answer.ok
}

let ok = await callApi(tokens.access_token)
// What the app does when the access token expires: the refresh token gives a new one, and a new refresh token
// (the old one is spent: used again, it would end the whole grant).
if (tokens.refresh_token) {
  const refreshed = await oauth.refreshTokenGrant(config, tokens.refresh_token)
  console.log(`Refreshed: a new access token${refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token ? ' and a new refresh token' : ''}`)
  ok = (await callApi(refreshed.access_token)) && ok
}
if (!ok) process.exitCode = 1
