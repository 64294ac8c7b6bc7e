/**
 * The server's own requests (oidc-provider's `fetch`): client ID metadata documents, back-channel
 * logout tokens, a client's `jwks_uri`. oidc-provider sends each through a dispatcher that refuses
 * loopback and private network addresses (its guard against a client making the server reach into
 * its own network). Two destinations are let through it: any, in development, when
 * `allowPrivateAddressesInDevelopment` says so; and the back-channel logout URI of a client declared
 * in the config, which the app's own code names (the company's intranet app on a private address),
 * never one a client registered or described itself.
 */
import type { ResolvedAuthorizationServer } from './config.js'

/** oidc-provider's `fetch` for `options`. */
export function outgoingFetch(options: ResolvedAuthorizationServer): (url: string, init: RequestInit & { dispatcher?: unknown }) => Promise<Response> {
  const fetch = options.fetch ?? globalThis.fetch
  const declaredLogoutUris = new Set(options.clients.flatMap((client) => (typeof client.backchannel_logout_uri === 'string' && URL.canParse(client.backchannel_logout_uri) ? [new URL(client.backchannel_logout_uri).href] : [])))
  return async (url, init) => {
    if (options.allowPrivateAddresses || (init.method === 'POST' && declaredLogoutUris.has(url))) delete init.dispatcher
    return fetch(url, init)
  }
}
