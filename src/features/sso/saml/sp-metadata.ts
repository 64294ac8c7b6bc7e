/** This service provider's SAML metadata, for an organization's administrator to load into their IdP. */
import type { SamlServiceProvider } from './types.js'

/**
 * The SPSSODescriptor metadata of one connection: its entity id, an HTTP-POST AssertionConsumerService at
 * `sp.acsUrl`, `AuthnRequestsSigned="false"` (requests are not signed) and `WantAssertionsSigned="true"`
 * (the engine refuses an assertion without its own signature).
 *
 * @param sp the connection's entity id and ACS URL
 * @example
 * const xml = await serviceProviderMetadata({ entityId: 'https://app.example/sso/saml/acme', acsUrl: 'https://app.example/sso/saml/acme/acs' })
 * @see SAML 2.0 Metadata §2.4.4 (SPSSODescriptor), SAML 2.0 Profiles §4.1.6 (Web SSO metadata)
 */
export async function serviceProviderMetadata(sp: SamlServiceProvider): Promise<string> {
  // Imported when used, as client.ts does: node-saml is an optional peer, loaded only by a SAML connection.
  const { generateServiceProviderMetadata } = await import('@node-saml/node-saml')
  return generateServiceProviderMetadata({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    wantAssertionsSigned: true,
    identifierFormat: null,
  })
}
