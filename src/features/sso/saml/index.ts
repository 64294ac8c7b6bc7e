/** The SAML engine's surface for the rest of the SSO wing (loaded on a SAML connection's first use). */
export { parseIdpMetadata, type IdpMetadataOptions } from './metadata.js'
export { authnRequestUrl } from './request.js'
export { serviceProviderMetadata } from './sp-metadata.js'
export { verifySamlResponse } from './verify.js'
export type { SamlIdentity, SamlIdp, SamlServiceProvider } from './types.js'
