/**
 * The SAML 2.0 engine of the SSO wing: reading an IdP's metadata, starting an SP-initiated sign-in,
 * this service provider's metadata, and verifying the response. The rest of the wing imports only this
 * file; the engine knows nothing of connections, cookies or routes.
 *
 * @see https://docs.oasis-open.org/security/saml/v2.0/saml-profiles-2.0-os.pdf §4.1 (Web Browser SSO profile)
 */
export { parseIdpMetadata, type IdpMetadataOptions } from './metadata.js'
export { authnRequestUrl } from './request.js'
export { serviceProviderMetadata } from './sp-metadata.js'
export { verifySamlResponse, type SamlResponseExpectations } from './verify.js'
export type { SamlIdentity, SamlIdp, SamlServiceProvider } from './types.js'
