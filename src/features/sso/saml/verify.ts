/** Verifying the SAMLResponse an identity provider posted to the Assertion Consumer Service. */
import { SamlResponseError } from '../errors.js'
import { checkAssertion } from './assertion.js'
import { samlClient } from './client.js'
import { emailOf, nameOf } from './identity-claims.js'
import { fromNodeSamlError } from './node-saml-errors.js'
import { checkEnvelope } from './response-envelope.js'
import type { SamlIdentity, SamlIdp, SamlServiceProvider } from './types.js'

/** A response larger than this is refused unread: real ones are a few KiB, and each byte is parsed three times. */
const MAX_RESPONSE_BYTES = 256 * 1024
/** The base64 of `MAX_RESPONSE_BYTES`, with room for the line breaks some IdPs put every 64 or 76 characters. */
const MAX_ENCODED_LENGTH = Math.ceil(MAX_RESPONSE_BYTES / 3) * 4 * 2
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** What `verifySamlResponse` compares the response with. */
export interface SamlResponseExpectations {
  readonly idp: SamlIdp
  readonly sp: SamlServiceProvider
  /** The ID of the AuthnRequest this browser sent (`authnRequestUrl`), `null` for an IdP-initiated sign-in. */
  readonly expectedRequestId: string | null
  /** The caller's clock, ms since epoch. */
  readonly nowMs: number
  /** How far the IdP's clock may be from ours, ms. */
  readonly skewMs: number
}

/**
 * Verifies a SAML 2.0 Response (HTTP-POST binding) and returns who it says signed in.
 *
 * In this order: the form field is base64 of at most 256 KiB of UTF-8; the received Response passes the
 * envelope checks (one well-formed samlp:Response without DOCTYPE, status Success, exactly one Assertion,
 * our Destination and IdP, the InResponseTo; response-envelope.ts); node-saml verifies the Assertion's
 * own signature with one of the IdP's certificates (several for key rollover); then every field is read
 * from the bytes node-saml verified (the canonical form of the signed Assertion, not the received
 * document, CVE-2025-54419) and checked (Issuer, Audience, Recipient, time window, InResponseTo;
 * assertion.ts). No part of the response goes into an error message but the Response's and the Assertion's
 * IDs, and only when they are plain xs:IDs.
 *
 * @param samlResponse the `SAMLResponse` form field, as posted
 * @param expected the connection's IdP and service provider, the request this browser made, and the clock
 * @returns the identity, read only from the signed assertion; the caller must still refuse a replayed `assertionId`
 * @throws SamlResponseError with the code of the first check the response fails
 * @throws TypeError when `expected` is not usable (a clock that is not a number, no IdP certificate)
 * @example
 * const identity = await verifySamlResponse(body.SAMLResponse, { idp, sp, expectedRequestId: requestId, nowMs: Date.now(), skewMs: 60_000 })
 * @see SAML 2.0 Profiles §4.1.4.3 (Web SSO response processing rules), SAML 2.0 Bindings §3.5 (HTTP-POST)
 */
export async function verifySamlResponse(samlResponse: string, expected: SamlResponseExpectations): Promise<SamlIdentity> {
  checkExpectations(expected)
  const { base64, xml } = decodeResponse(samlResponse)
  checkEnvelope(xml, expected)
  const saml = await samlClient(expected.idp, expected.sp)
  let assertionXml: string
  try {
    const { profile } = await saml.validatePostResponseAsync({ SAMLResponse: base64 })
    // No profile: a LogoutResponse or a NoPassive answer, neither of which signs anyone in.
    if (!profile?.getAssertionXml) throw new SamlResponseError('malformed', 'The SAML response carries no assertion that signs someone in.')
    // node-saml 5.1 (saml.js, processValidlySignedAssertionAsync): the Assertion it re-parsed from the bytes
    // xml-crypto's getSignedReferences() returned, the signed reference after its transforms; 5.0 read the
    // received document instead (CVE-2025-54419).
    assertionXml = profile.getAssertionXml()
  } catch (error) {
    throw fromNodeSamlError(error)
  }
  const assertion = checkAssertion(assertionXml, expected)
  return Object.freeze({
    issuer: assertion.issuer,
    nameId: assertion.nameId,
    nameIdFormat: assertion.nameIdFormat,
    email: emailOf(assertion.nameId, assertion.nameIdFormat, assertion.attributes),
    name: nameOf(assertion.attributes),
    attributes: Object.freeze(Object.fromEntries([...assertion.attributes].map(([name, values]) => [name, Object.freeze([...values])]))),
    assertionId: assertion.assertionId,
    inResponseTo: assertion.inResponseTo,
    notOnOrAfter: assertion.notOnOrAfter,
    sessionIndex: assertion.sessionIndex,
  })
}

function checkExpectations(expected: SamlResponseExpectations): void {
  if (!Number.isFinite(expected.nowMs) || !Number.isFinite(expected.skewMs) || expected.skewMs < 0) {
    throw new TypeError('verifySamlResponse: nowMs must be a time in ms and skewMs a duration of 0 ms or more')
  }
  if (expected.idp.certificates.length === 0) throw new TypeError('verifySamlResponse: the IdP has no signing certificate')
}

/** The base64 without its line breaks (what node-saml gets), and the XML it encodes. */
function decodeResponse(samlResponse: string): { base64: string; xml: string } {
  const malformed = (why: string): SamlResponseError => new SamlResponseError('malformed', `The SAMLResponse field ${why}.`)
  if (typeof samlResponse !== 'string' || samlResponse.length === 0) throw malformed('is empty')
  if (samlResponse.length > MAX_ENCODED_LENGTH) throw malformed(`is larger than ${MAX_RESPONSE_BYTES} bytes`)
  const base64 = samlResponse.replace(/[\r\n\t ]+/g, '')
  if (!BASE64.test(base64)) throw malformed('is not base64')
  const bytes = Buffer.from(base64, 'base64')
  if (bytes.length > MAX_RESPONSE_BYTES) throw malformed(`is larger than ${MAX_RESPONSE_BYTES} bytes`)
  // Fatal, and the byte order mark kept: node-saml decodes the same bytes again with Buffer#toString, and
  // both must read the same characters (toString would turn an invalid sequence into U+FFFD).
  let xml: string
  try {
    xml = UTF8.decode(bytes)
  } catch {
    throw malformed('is not UTF-8')
  }
  return { base64, xml }
}
