/** The AuthnRequest that starts an SP-initiated sign-in, as an HTTP-Redirect URL. */
import { randomBytes } from 'node:crypto'
import { samlClient } from './client.js'
import type { SamlIdp, SamlServiceProvider } from './types.js'

/**
 * The URL to send the browser to (the IdP's SSO URL with a deflated AuthnRequest and the RelayState), and
 * the request's ID, which the caller binds to the browser and later passes to `verifySamlResponse` as
 * `expectedRequestId`.
 *
 * @param relayState an opaque value the IdP returns with the response (at most 80 bytes, Bindings §3.4.3)
 * @example
 * const { url, requestId } = await authnRequestUrl(idp, sp, state)
 * @see SAML 2.0 Bindings §3.4 (HTTP-Redirect), SAML 2.0 Core §3.4.1 (AuthnRequest), SAML 2.0 Profiles §4.1.4.1
 */
export async function authnRequestUrl(idp: SamlIdp, sp: SamlServiceProvider, relayState: string): Promise<{ url: string; requestId: string }> {
  if (Buffer.byteLength(relayState) > 80) throw new TypeError('authnRequestUrl: relayState must be at most 80 bytes (SAML Bindings §3.4.3)')
  // An xs:ID must not start with a digit; 160 random bits, as node-saml's own generator.
  const requestId = `_${randomBytes(20).toString('hex')}`
  const saml = await samlClient(idp, sp, { generateUniqueId: () => requestId })
  const url = await saml.getAuthorizeUrlAsync(relayState, undefined, {})
  return { url, requestId }
}
