/**
 * The fields of the signed assertion, read from the bytes node-saml verified (the canonical form of the
 * referenced Assertion, never the received document), and the checks the Web SSO profile puts on them.
 */
import { SamlResponseError, type SamlResponseCode } from '../errors.js'
import { checkInResponseTo } from './response-envelope.js'
import type { SamlIdp, SamlServiceProvider } from './types.js'
import { attribute, childElements, loggableId, NS, onlyChild, parseStrictXml, textOnly } from './xml.js'

const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
/** xs:dateTime in UTC, as SAML 2.0 Core §1.3.3 requires ("no time zone component" but the Z). */
const UTC_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

export interface AssertionExpectations {
  readonly idp: SamlIdp
  readonly sp: SamlServiceProvider
  readonly expectedRequestId: string | null
  readonly nowMs: number
  readonly skewMs: number
}

/** What the verified assertion says, once every check on it has passed. */
export interface CheckedAssertion {
  readonly assertionId: string
  readonly issuer: string
  readonly nameId: string
  readonly nameIdFormat: string | null
  readonly inResponseTo: string | null
  readonly notOnOrAfter: number
  readonly sessionIndex: string | null
  readonly attributes: ReadonlyMap<string, readonly string[]>
}

/**
 * Reads and checks the signed assertion: Issuer, NameID, a bearer SubjectConfirmation (Recipient, time
 * window, InResponseTo), Conditions (time window, AudienceRestriction), an AuthnStatement.
 *
 * @see SAML 2.0 Profiles §4.1.4.2, §4.1.4.3 (Web SSO response rules); SAML 2.0 Core §2.3.3, §2.4, §2.5, §2.7
 */
export function checkAssertion(verifiedXml: string, expected: AssertionExpectations): CheckedAssertion {
  const assertion = parseStrictXml(verifiedXml)?.documentElement
  if (!assertion || assertion.namespaceURI !== NS.assertion || assertion.localName !== 'Assertion') {
    throw new SamlResponseError('malformed', 'The signed part of the SAML response is not a saml:Assertion.')
  }
  const assertionId = attribute(assertion, 'ID') ?? ''
  const refuse = (code: SamlResponseCode, why: string): SamlResponseError => new SamlResponseError(code, `SAML assertion ${loggableId(assertionId)} refused: ${why}.`)
  if (!assertionId || attribute(assertion, 'Version') !== '2.0') throw refuse('malformed', 'it has no ID or is not version 2.0')

  const issuerElement = onlyChild(assertion, NS.assertion, 'Issuer')
  const issuer = issuerElement ? textOnly(issuerElement) : null
  if (issuer !== expected.idp.entityId) throw refuse('issuer', 'its Issuer is not the connection\'s IdP')
  const subject = onlyChild(assertion, NS.assertion, 'Subject')
  if (!subject) throw refuse('no_name_id', 'it has no Subject')
  const { nameId, nameIdFormat } = readNameId(subject, refuse)
  const confirmation = checkBearerConfirmation(subject, expected, refuse)
  const conditionsEnd = checkConditions(assertion, expected, refuse)
  const authn = childElements(assertion, NS.assertion, 'AuthnStatement')
  if (authn.length === 0) throw refuse('malformed', 'it has no AuthnStatement')
  return {
    assertionId,
    issuer,
    nameId,
    nameIdFormat,
    inResponseTo: confirmation.inResponseTo,
    notOnOrAfter: conditionsEnd === null ? confirmation.notOnOrAfter : Math.min(conditionsEnd, confirmation.notOnOrAfter),
    sessionIndex: attribute(authn[0] as Element, 'SessionIndex'),
    attributes: readAttributes(assertion),
  }
}

type Refuse = (code: SamlResponseCode, why: string) => SamlResponseError

function readNameId(subject: Element, refuse: Refuse): { nameId: string; nameIdFormat: string | null } {
  const element = onlyChild(subject, NS.assertion, 'NameID')
  if (element === undefined) throw refuse('malformed', 'its Subject has several NameIDs')
  if (element === null) throw refuse('no_name_id', 'its Subject has no NameID (an EncryptedID is not decrypted)')
  const nameId = textOnly(element)
  // A comment, processing instruction or element inside the NameID: refused, never read in part.
  if (nameId === null) throw refuse('malformed', 'its NameID holds something other than text')
  if (nameId.trim() === '') throw refuse('no_name_id', 'its NameID is empty')
  return { nameId, nameIdFormat: attribute(element, 'Format') }
}

/**
 * The first bearer SubjectConfirmationData that passes every rule; when none does, the failure of the
 * first one (so that the log says which rule the IdP's answer broke).
 */
function checkBearerConfirmation(subject: Element, expected: AssertionExpectations, refuse: Refuse): { inResponseTo: string | null; notOnOrAfter: number } {
  const bearers = childElements(subject, NS.assertion, 'SubjectConfirmation').filter((c) => attribute(c, 'Method') === BEARER)
  if (bearers.length === 0) throw refuse('subject_confirmation', 'it has no bearer SubjectConfirmation')
  let firstFailure: SamlResponseError | null = null
  for (const bearer of bearers) {
    try {
      return checkConfirmationData(bearer, expected, refuse)
    } catch (error) {
      if (!(error instanceof SamlResponseError)) throw error
      firstFailure ??= error
    }
  }
  throw firstFailure as SamlResponseError
}

function checkConfirmationData(bearer: Element, expected: AssertionExpectations, refuse: Refuse): { inResponseTo: string | null; notOnOrAfter: number } {
  const data = onlyChild(bearer, NS.assertion, 'SubjectConfirmationData')
  if (!data) throw refuse('subject_confirmation', 'its bearer SubjectConfirmation has no (or several) SubjectConfirmationData')
  if (attribute(data, 'Recipient') !== expected.sp.acsUrl) throw refuse('recipient', 'its SubjectConfirmationData Recipient is not this service provider\'s ACS URL')
  const notOnOrAfter = instant(attribute(data, 'NotOnOrAfter'), refuse)
  if (notOnOrAfter === null) throw refuse('subject_confirmation', 'its SubjectConfirmationData has no NotOnOrAfter')
  checkWindow(instant(attribute(data, 'NotBefore'), refuse), notOnOrAfter, expected, refuse)
  // Empty is absent: samlify's template writes InResponseTo="" in an IdP-initiated response.
  const inResponseTo = attribute(data, 'InResponseTo') || null
  checkInResponseTo(inResponseTo, expected.expectedRequestId, refuse)
  return { inResponseTo, notOnOrAfter }
}

/** The Conditions' NotOnOrAfter (null when it has none), after checking its window and its audiences. */
function checkConditions(assertion: Element, expected: AssertionExpectations, refuse: Refuse): number | null {
  const conditions = onlyChild(assertion, NS.assertion, 'Conditions')
  if (conditions === undefined) throw refuse('malformed', 'it has several Conditions')
  // Profiles §4.1.4.2: the assertion MUST have an AudienceRestriction naming this service provider.
  if (conditions === null) throw refuse('audience', 'it has no Conditions, so no AudienceRestriction')
  const notOnOrAfter = instant(attribute(conditions, 'NotOnOrAfter'), refuse)
  checkWindow(instant(attribute(conditions, 'NotBefore'), refuse), notOnOrAfter, expected, refuse)
  const restrictions = childElements(conditions, NS.assertion, 'AudienceRestriction')
  if (restrictions.length === 0) throw refuse('audience', 'it has no AudienceRestriction')
  // Core §2.5.1.4: the assertion is addressed to us only if every AudienceRestriction names us.
  for (const restriction of restrictions) {
    const audiences = childElements(restriction, NS.assertion, 'Audience').map(textOnly)
    if (!audiences.includes(expected.sp.entityId)) throw refuse('audience', 'an AudienceRestriction does not name this service provider')
  }
  return notOnOrAfter
}

function checkWindow(notBefore: number | null, notOnOrAfter: number | null, expected: AssertionExpectations, refuse: Refuse): void {
  if (notBefore !== null && expected.nowMs + expected.skewMs < notBefore) throw refuse('not_yet_valid', 'it is not valid yet')
  if (notOnOrAfter !== null && expected.nowMs - expected.skewMs >= notOnOrAfter) throw refuse('expired', 'it is no longer valid')
}

function instant(value: string | null, refuse: Refuse): number | null {
  if (value === null) return null
  const ms = UTC_DATE_TIME.test(value) ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) throw refuse('malformed', 'one of its times is not an xs:dateTime in UTC')
  return ms
}

/** Each Attribute's text values by Name (values with markup inside are left out), several statements merged. */
function readAttributes(assertion: Element): ReadonlyMap<string, readonly string[]> {
  const attributes = new Map<string, string[]>()
  for (const statement of childElements(assertion, NS.assertion, 'AttributeStatement')) {
    for (const element of childElements(statement, NS.assertion, 'Attribute')) {
      const name = attribute(element, 'Name')
      if (!name) continue
      const values = childElements(element, NS.assertion, 'AttributeValue').map(textOnly).filter((value): value is string => value !== null)
      attributes.set(name, [...(attributes.get(name) ?? []), ...values])
    }
  }
  return attributes
}
