/** The plain values the SAML engine works on: an identity provider, our service provider, and the identity a response proves. */

/**
 * An organization's SAML identity provider, as its metadata describes it.
 * @see SAML 2.0 Metadata §2.4.3 (IDPSSODescriptor)
 */
export interface SamlIdp {
  readonly entityId: string
  readonly ssoUrl: string
  /** PEM or base64 DER, several for rollover */
  readonly certificates: readonly string[]
}

/**
 * This service provider as one connection presents itself to an identity provider.
 * @see SAML 2.0 Metadata §2.4.4 (SPSSODescriptor)
 */
export interface SamlServiceProvider {
  readonly entityId: string
  readonly acsUrl: string
}

/**
 * Who a verified SAML response says signed in, read only from the signed assertion.
 * @see SAML 2.0 Core §2.3.3 (Assertion), §2.4 (Subject), §2.7.3 (AttributeStatement)
 */
export interface SamlIdentity {
  readonly issuer: string
  readonly nameId: string
  readonly nameIdFormat: string | null
  readonly email: string | null
  readonly name: string | null
  readonly attributes: Readonly<Record<string, readonly string[]>>
  readonly assertionId: string
  readonly inResponseTo: string | null
  /** ms since epoch: when the assertion stops being valid (the replay cache keeps its id until then) */
  readonly notOnOrAfter: number
  readonly sessionIndex: string | null
}
