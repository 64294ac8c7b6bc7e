/** The node-saml instance for one IdP and one service provider, configured the one way the engine uses it. */
import type { SAML, SamlConfig } from '@node-saml/node-saml'
import type { SamlIdp, SamlServiceProvider } from './types.js'

/**
 * A node-saml `SAML` for this pair. Signed assertions are required (`wantAssertionsSigned`); a signed
 * Response alone is not enough (see verify.ts). InResponseTo, the clock and the Issuer are checked by
 * verify.ts from the verified assertion, so node-saml's per-process request cache is not used
 * (`validateInResponseTo: 'never'`) and its clock checks are off (`acceptedClockSkewMs: -1`: node-saml
 * reads `Date.now()` itself, and the engine must take the caller's clock).
 */
export async function samlClient(idp: SamlIdp, sp: SamlServiceProvider, extra: Partial<SamlConfig> = {}): Promise<SAML> {
  const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml')
  return new SAML({
    idpCert: [...idp.certificates],
    idpIssuer: idp.entityId,
    entryPoint: idp.ssoUrl,
    issuer: sp.entityId,
    audience: sp.entityId,
    callbackUrl: sp.acsUrl,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    validateInResponseTo: ValidateInResponseTo.never,
    acceptedClockSkewMs: -1,
    disableRequestedAuthnContext: true,
    // No NameIDPolicy Format: the IdP answers with the format it is configured for (asking for
    // emailAddress, node-saml's default, makes some IdPs refuse the request outright).
    identifierFormat: null,
    signatureAlgorithm: 'sha256',
    ...extra,
  })
}
