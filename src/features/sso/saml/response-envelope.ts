/**
 * Checks on the Response around the assertion, read from the received document before any signature is
 * checked. They can only refuse: nothing here is trusted for the identity (the Response is usually not
 * signed), which is read from the signed assertion alone (assertion.ts).
 */
import { SamlResponseError } from '../errors.js'
import type { SamlIdp, SamlServiceProvider } from './types.js'
import { attribute, childElements, descendants, loggableId, NS, onlyChild, parseStrictXml, textOnly } from './xml.js'

const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'

export interface EnvelopeExpectations {
  readonly idp: SamlIdp
  readonly sp: SamlServiceProvider
  readonly expectedRequestId: string | null
}

/**
 * Refuses a Response that is not one well-formed `samlp:Response` (no DOCTYPE), whose top-level status is
 * not Success, that carries an EncryptedAssertion, that holds anything but exactly one Assertion in the
 * whole document (a second one anywhere, in Extensions, Advice or a Signature's Object, is how signature
 * wrapping hides the signed one), or whose Destination, Issuer or InResponseTo (when present) are not ours.
 *
 * @see SAML 2.0 Core §3.2.2 (StatusResponseType), §3.3.3 (Response); SAML 2.0 Profiles §4.1.4.2, §4.1.4.3
 */
export function checkEnvelope(xml: string, expected: EnvelopeExpectations): void {
  const doc = parseStrictXml(xml)
  const response = doc?.documentElement
  if (!response || response.namespaceURI !== NS.protocol || response.localName !== 'Response') {
    throw new SamlResponseError('malformed', 'The SAML response is not a well-formed samlp:Response without a DOCTYPE.')
  }
  const responseId = loggableId(attribute(response, 'ID'))
  const refuse = (code: ConstructorParameters<typeof SamlResponseError>[0], why: string): SamlResponseError =>
    new SamlResponseError(code, `SAML response ${responseId} refused: ${why}.`)

  const status = onlyChild(response, NS.protocol, 'Status')
  const statusCode = status ? onlyChild(status, NS.protocol, 'StatusCode') : null
  if (!statusCode || attribute(statusCode, 'Value') !== SUCCESS) throw refuse('status', 'its status is not Success')
  if (descendants(doc, NS.assertion, 'EncryptedAssertion').length > 0) throw refuse('encrypted_assertion', 'its assertion is encrypted, which this service provider does not ask for')
  // By local name in any namespace, as node-saml selects them: an Assertion in another namespace beside
  // ours is also a way to make two readers look at two different elements.
  const assertions = descendants(doc, '*', 'Assertion')
  if (assertions.length !== 1 || childElements(response, NS.assertion, 'Assertion').length !== 1) {
    throw refuse('assertion_count', `it holds ${assertions.length} assertions, or its assertion is not a child of the Response`)
  }
  // Exclusive c14n drops comments, so the signature covers `alice@acme.example<!---->.evil.example` as if
  // the comment were not there, and the signed bytes then read `alice@acme.example.evil.example` where a
  // reader of the received document may see `alice@acme.example` (CVE-2017-11427 and its kin). No IdP
  // needs a comment inside an assertion: refused, so that both readings are never in play.
  if (hasComment(assertions[0] as Element)) throw refuse('malformed', 'its assertion holds a comment')
  const destination = attribute(response, 'Destination')
  if (destination !== null && destination !== expected.sp.acsUrl) throw refuse('destination', 'its Destination is not this service provider\'s ACS URL')
  const issuer = onlyChild(response, NS.assertion, 'Issuer')
  if (issuer === undefined || (issuer && textOnly(issuer) !== expected.idp.entityId)) throw refuse('issuer', 'its Issuer is not the connection\'s IdP')
  // Optional on the Response (the signed SubjectConfirmationData's is the one required), compared when present.
  const inResponseTo = attribute(response, 'InResponseTo') || null
  if (inResponseTo !== null) checkInResponseTo(inResponseTo, expected.expectedRequestId, refuse)
}

const COMMENT = 8

function hasComment(element: Element): boolean {
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === COMMENT || (node.nodeType === 1 && hasComment(node as Element))) return true
  }
  return false
}

/**
 * An IdP-initiated response (`expected` null) must answer no request: one that names a request the
 * caller is not expecting is refused as unsolicited, never accepted as IdP-initiated.
 */
export function checkInResponseTo(
  inResponseTo: string | null,
  expected: string | null,
  refuse: (code: 'in_response_to' | 'unsolicited', why: string) => Error,
): void {
  if (expected === null) {
    if (inResponseTo !== null) throw refuse('unsolicited', 'it answers a request although none was expected (IdP-initiated)')
  } else if (inResponseTo !== expected) {
    throw refuse('in_response_to', 'its InResponseTo is not the request this browser made')
  }
}
