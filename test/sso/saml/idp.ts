/**
 * A real SAML identity provider in process (samlify), for the engine's tests: its metadata, and signed
 * login responses whose every field a test may override, or edit before or after samlify signs them.
 * The fixtures' key pairs sign: `idp` (the connection's), `idp-next` (its rollover successor), `attacker`.
 */
import { existsSync, readFileSync } from 'node:fs'
import { inflateRawSync } from 'node:zlib'
import { DOMParser } from '@xmldom/xmldom'
import samlify from 'samlify'
import type { SamlServiceProvider } from '../../../src/features/sso/saml/index.js'

// samlify refuses to parse without a schema validator; it is the IdP here, not the code under test.
samlify.setSchemaValidator({ validate: async () => 'skipped' })

export type IdpKey = 'idp' | 'idp-next' | 'attacker'

// Found from the repository's root, so that the bench's bundle of this file (.bench/) reads them too.
const FIXTURES = (() => {
  let dir = new URL('.', import.meta.url)
  while (!existsSync(new URL('package.json', dir))) {
    const parent = new URL('..', dir)
    if (parent.href === dir.href) throw new Error('test/sso/saml/idp.ts: no package.json above it')
    dir = parent
  }
  return new URL('test/sso/fixtures/', dir)
})()
const fixture = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8')
export const certificate = (key: IdpKey): string => fixture(`${key}-cert.pem`)
const privateKey = (key: IdpKey): string => fixture(`${key}-key.pem`)

const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
export const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'

/** The frozen clock of the tests: responses are issued at NOW, and verified at NOW unless a test says otherwise. */
export const NOW = Date.parse('2026-12-08T12:00:00.000Z')
export const IDP_ENTITY_ID = 'https://idp.acme.example/saml/metadata'
export const IDP_SSO_URL = 'https://idp.acme.example/saml/sso'
const IDP_SERVICES = {
  nameIDFormat: [EMAIL_FORMAT],
  singleSignOnService: [
    { Binding: REDIRECT, Location: IDP_SSO_URL },
    { Binding: POST, Location: IDP_SSO_URL },
  ],
  singleLogoutService: [{ Binding: REDIRECT, Location: 'https://idp.acme.example/saml/slo' }],
}
export const SP: SamlServiceProvider = Object.freeze({ entityId: 'https://app.example/api/auth/saml-metadata/acme', acsUrl: 'https://app.example/api/auth/saml-acs/acme' })

/**
 * The placeholders of the response template, each overridable; `null` leaves the attribute or element out
 * (samlify's replaceTagsByValue drops an attribute or element whose value is null).
 */
export interface ResponseFields {
  ID: string
  IssueInstant: string
  Destination: string | null
  InResponseTo: string | null
  Issuer: string | null
  StatusCode: string
  AssertionID: string
  AssertionIssuer: string
  NameIDFormat: string | null
  NameID: string
  SubjectNotBefore: string | null
  SubjectNotOnOrAfter: string | null
  Recipient: string | null
  SubjectInResponseTo: string | null
  ConditionsNotBefore: string | null
  ConditionsNotOnOrAfter: string | null
  Audience: string
  SessionIndex: string
}

const ATTRIBUTES = '@@ATTRIBUTES@@'
const TEMPLATE =
  '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="{ID}" Version="2.0" IssueInstant="{IssueInstant}" Destination="{Destination}" InResponseTo="{InResponseTo}">' +
  '<saml:Issuer>{Issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="{StatusCode}"/></samlp:Status>' +
  '<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="{AssertionID}" Version="2.0" IssueInstant="{IssueInstant}">' +
  '<saml:Issuer>{AssertionIssuer}</saml:Issuer>' +
  '<saml:Subject><saml:NameID Format="{NameIDFormat}">{NameID}</saml:NameID>' +
  '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotBefore="{SubjectNotBefore}" NotOnOrAfter="{SubjectNotOnOrAfter}" Recipient="{Recipient}" InResponseTo="{SubjectInResponseTo}"/></saml:SubjectConfirmation></saml:Subject>' +
  '<saml:Conditions NotBefore="{ConditionsNotBefore}" NotOnOrAfter="{ConditionsNotOnOrAfter}"><saml:AudienceRestriction><saml:Audience>{Audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>' +
  '<saml:AuthnStatement AuthnInstant="{IssueInstant}" SessionIndex="{SessionIndex}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>' +
  `${ATTRIBUTES}</saml:Assertion></samlp:Response>`

let counter = 0
const iso = (ms: number): string => new Date(ms).toISOString()

/** The fields of a valid IdP-initiated response to `SP` for alice, issued at NOW and valid five minutes. */
export function defaultFields(): ResponseFields {
  counter += 1
  return {
    ID: `_response${counter}`,
    IssueInstant: iso(NOW),
    Destination: SP.acsUrl,
    InResponseTo: null,
    Issuer: IDP_ENTITY_ID,
    StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
    AssertionID: `_assertion${counter}`,
    AssertionIssuer: IDP_ENTITY_ID,
    NameIDFormat: EMAIL_FORMAT,
    NameID: 'alice@acme.example',
    SubjectNotBefore: null,
    SubjectNotOnOrAfter: iso(NOW + 5 * 60_000),
    Recipient: SP.acsUrl,
    SubjectInResponseTo: null,
    ConditionsNotBefore: iso(NOW - 60_000),
    ConditionsNotOnOrAfter: iso(NOW + 5 * 60_000),
    Audience: SP.entityId,
    SessionIndex: `_session${counter}`,
  }
}

export interface ResponseOptions {
  /** Whose key signs (default `idp`). */
  readonly key?: IdpKey
  /** Sign the Assertion (default true). */
  readonly signAssertion?: boolean
  /** Sign the Response as well (default false). */
  readonly signResponse?: boolean
  readonly fields?: Partial<ResponseFields>
  /** AttributeStatement values by Name (default: alice's mail and displayName). */
  readonly attributes?: Readonly<Record<string, string>>
  /** An edit of the rendered XML before samlify signs it (the IdP itself signs what this returns). */
  readonly beforeSigning?: (xml: string) => string
}

/** The XML of a login response made by the samlify IdP; `toBase64` it for the form field. */
export async function idpResponseXml(options: ResponseOptions = {}): Promise<string> {
  const fields: ResponseFields = { ...defaultFields(), ...options.fields }
  const attributes = options.attributes ?? { mail: 'alice@acme.example', displayName: 'Alice Liddell' }
  const signAssertion = options.signAssertion ?? true
  const signResponse = options.signResponse ?? false
  const render = (template: string): string => {
    const xml = samlify.SamlLib.replaceTagsByValue(template, fields as unknown as Record<string, string>).replace(ATTRIBUTES, attributeStatement(attributes))
    return options.beforeSigning ? options.beforeSigning(xml) : xml
  }
  if (!signAssertion && !signResponse) return render(TEMPLATE)
  const idp = identityProvider(options.key ?? 'idp')
  const sp = samlify.ServiceProvider({
    entityID: SP.entityId,
    assertionConsumerService: [{ Binding: POST, Location: SP.acsUrl }],
    wantAssertionsSigned: signAssertion,
    wantMessageSigned: signResponse,
  })
  const { context } = await idp.createLoginResponse(sp, { extract: {} }, 'post', {}, (template: string) => ({ id: fields.ID, context: render(template) }))
  return Buffer.from(context, 'base64').toString('utf8')
}

export const toBase64 = (xml: string): string => Buffer.from(xml, 'utf8').toString('base64')

/** A samlify IdP that signs with `key`, answering with this file's template. */
export function identityProvider(key: IdpKey = 'idp') {
  return samlify.IdentityProvider({
    entityID: IDP_ENTITY_ID,
    privateKey: privateKey(key),
    signingCert: certificate(key),
    ...IDP_SERVICES,
    loginResponseTemplate: { context: TEMPLATE, attributes: [] },
  })
}

/** samlify's metadata of the IdP, listing the certificates of `keys` as signing keys (several: rollover). */
export function idpMetadata(keys: readonly IdpKey[] = ['idp']): string {
  return samlify
    .IdentityProvider({
      entityID: IDP_ENTITY_ID,
      signingCert: keys.length === 1 ? certificate(keys[0] as IdpKey) : keys.map(certificate),
      ...IDP_SERVICES,
    })
    .getMetadata()
}

function attributeStatement(attributes: Readonly<Record<string, string>>): string {
  const entries = Object.entries(attributes)
  if (entries.length === 0) return ''
  const escape = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')
  const values = entries.map(([name, value]) => `<saml:Attribute Name="${escape(name)}"><saml:AttributeValue>${escape(value)}</saml:AttributeValue></saml:Attribute>`)
  return `<saml:AttributeStatement>${values.join('')}</saml:AttributeStatement>`
}

/** The AuthnRequest in an HTTP-Redirect URL (Bindings §3.4.4.1: base64 of the raw DEFLATE of the XML), as the IdP reads it. */
export function authnRequestOf(url: string): { id: string; destination: string | null; issuer: string | null; acsUrl: string | null; relayState: string | null } {
  const query = new URL(url).searchParams
  const xml = inflateRawSync(Buffer.from(query.get('SAMLRequest') ?? '', 'base64')).toString('utf8')
  const request = new DOMParser().parseFromString(xml, 'text/xml').documentElement
  if (!request || request.localName !== 'AuthnRequest') throw new Error('The redirect URL carries no AuthnRequest.')
  const issuer = request.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]
  return {
    id: request.getAttribute('ID') ?? '',
    destination: request.getAttribute('Destination'),
    issuer: issuer?.textContent ?? null,
    acsUrl: request.getAttribute('AssertionConsumerServiceURL'),
    relayState: query.get('RelayState'),
  }
}
