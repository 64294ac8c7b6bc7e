/**
 * verifySamlResponse under attack: each case is a response an attacker can make (from nothing, from a
 * response the IdP signed for them, or with their own key), and each asserts the check that refuses it by
 * its SamlResponseError code.
 */
import { describe, expect, it } from '@jest/globals'
import { SamlResponseError, type SamlResponseCode } from '../../../src/features/sso/errors.js'
import { parseIdpMetadata, verifySamlResponse, type SamlIdentity } from '../../../src/features/sso/saml/index.js'
import { idpMetadata, idpResponseXml, NOW, SP, toBase64, type ResponseOptions } from './idp.js'

const idp = parseIdpMetadata(idpMetadata(['idp']))
const SKEW_MS = 60_000

interface Expect {
  readonly expectedRequestId?: string | null
  readonly nowMs?: number
}

const verify = (xml: string, { expectedRequestId = null, nowMs = NOW }: Expect = {}): Promise<SamlIdentity> =>
  verifySamlResponse(toBase64(xml), { idp, sp: SP, expectedRequestId, nowMs, skewMs: SKEW_MS })

/** The code of the refusal; fails the test when the response is accepted or the error is another kind. */
async function refusal(xml: string, expectations: Expect = {}): Promise<SamlResponseCode> {
  return codeOf(verify(xml, expectations))
}

async function codeOf(verification: Promise<unknown>): Promise<SamlResponseCode> {
  let accepted: unknown
  try {
    accepted = await verification
  } catch (error) {
    if (!(error instanceof SamlResponseError)) throw error
    return error.code
  }
  throw new Error(`The response was accepted: ${JSON.stringify(accepted)}`)
}

const signed = (options: ResponseOptions = {}): Promise<string> => idpResponseXml(options)
const ASSERTION = /<saml:Assertion[\s\S]*<\/saml:Assertion>/
const assertionOf = (xml: string): string => (xml.match(ASSERTION) as RegExpMatchArray)[0]
const withoutSignatures = (xml: string): string => xml.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/g, '')
/** An edit that must hit: a test whose edit silently did nothing would pass for the wrong reason. */
function edit(xml: string, from: string | RegExp, to: string): string {
  const edited = xml.replace(from, to)
  if (edited === xml) throw new Error(`The edit ${String(from)} changed nothing`)
  return edited
}

describe('verifySamlResponse refuses', () => {
  describe('a response without the IdP\'s signature over the assertion', () => {
    it('an assertion signed by nobody', async () => {
      expect(await refusal(await idpResponseXml({ signAssertion: false, signResponse: false }))).toBe('signature')
      expect(await refusal(withoutSignatures(await signed()))).toBe('signature')
    })

    it('an assertion re-signed with the attacker\'s key after changing the NameID', async () => {
      const xml = await idpResponseXml({ key: 'attacker', fields: { NameID: 'ceo@acme.example' }, attributes: { mail: 'ceo@acme.example' } })
      expect(xml).toContain('<ds:SignatureValue>')
      expect(await refusal(xml)).toBe('signature')
    })

    it('an assertion signed with the next key before the connection\'s metadata lists it', async () => {
      expect(await refusal(await idpResponseXml({ key: 'idp-next' }))).toBe('signature')
    })

    it('a signed Response around an unsigned assertion', async () => {
      const xml = await idpResponseXml({ signAssertion: false, signResponse: true })
      expect(assertionOf(xml)).not.toContain('<ds:Signature')
      expect(xml).toContain('<ds:Signature')
      expect(await refusal(xml)).toBe('signature')
    })

    it('a signed assertion whose NameID was changed after signing', async () => {
      expect(await refusal(edit(await signed(), '>alice@acme.example</saml:NameID>', '>ceo@acme.example</saml:NameID>'))).toBe('signature')
    })
  })

  describe('an assertion addressed to someone else', () => {
    it('an Audience that is another service provider', async () => {
      expect(await refusal(await signed({ fields: { Audience: 'https://other-app.example/saml/metadata' } }))).toBe('audience')
    })

    it('a Destination that is another ACS URL', async () => {
      expect(await refusal(await signed({ fields: { Destination: 'https://other-app.example/saml/acs' } }))).toBe('destination')
    })

    it('a Recipient that is another ACS URL', async () => {
      expect(await refusal(await signed({ fields: { Recipient: 'https://other-app.example/saml/acs' } }))).toBe('recipient')
    })

    it('an Issuer that is another IdP, on the assertion or on the Response', async () => {
      expect(await refusal(await signed({ fields: { AssertionIssuer: 'https://idp.evil.example/saml' } }))).toBe('issuer')
      expect(await refusal(await signed({ fields: { Issuer: 'https://idp.evil.example/saml' } }))).toBe('issuer')
    })
  })

  describe('a response to another request', () => {
    const expectedRequestId = '_request-of-this-browser'

    it('an InResponseTo that is another request, on the Response or only in the signed SubjectConfirmationData', async () => {
      const other = '_request-of-another-browser'
      expect(await refusal(await signed({ fields: { InResponseTo: other, SubjectInResponseTo: other } }), { expectedRequestId })).toBe('in_response_to')
      expect(await refusal(await signed({ fields: { InResponseTo: null, SubjectInResponseTo: other } }), { expectedRequestId })).toBe('in_response_to')
    })

    it('an unsolicited response where this browser expects the answer to its request', async () => {
      expect(await refusal(await signed(), { expectedRequestId })).toBe('in_response_to')
    })

    it('a response to a request when none is expected (the IdP-initiated path)', async () => {
      const id = '_request-of-another-browser'
      expect(await refusal(await signed({ fields: { InResponseTo: id, SubjectInResponseTo: id } }))).toBe('unsolicited')
      expect(await refusal(await signed({ fields: { InResponseTo: null, SubjectInResponseTo: id } }))).toBe('unsolicited')
    })
  })

  describe('an assertion outside its time window, beyond the skew', () => {
    it('an expired assertion (NotOnOrAfter past by more than the skew)', async () => {
      const xml = await signed()
      expect(await refusal(xml, { nowMs: NOW + 5 * 60_000 + SKEW_MS })).toBe('expired')
      // The SubjectConfirmationData's own end, earlier than the Conditions'.
      expect(await refusal(await signed({ fields: { SubjectNotOnOrAfter: new Date(NOW - SKEW_MS - 1).toISOString() } }))).toBe('expired')
    })

    it('an assertion not valid yet (NotBefore ahead by more than the skew)', async () => {
      expect(await refusal(await signed(), { nowMs: NOW - 60_000 - SKEW_MS - 1 })).toBe('not_yet_valid')
      expect(await refusal(await signed({ fields: { SubjectNotBefore: new Date(NOW + SKEW_MS + 1).toISOString() } }))).toBe('not_yet_valid')
    })

    it('but accepts one inside the skew', async () => {
      const xml = await signed()
      await expect(verify(xml, { nowMs: NOW + 5 * 60_000 + SKEW_MS - 1 })).resolves.toMatchObject({ nameId: 'alice@acme.example' })
      await expect(verify(xml, { nowMs: NOW - 60_000 - SKEW_MS })).resolves.toMatchObject({ nameId: 'alice@acme.example' })
    })
  })

  describe('signature wrapping (CVE-2025-29774/29775 style)', () => {
    /** An unsigned assertion for the attacker's chosen identity, with the signed one's ID changed. */
    const evil = (signedAssertion: string): string =>
      withoutSignatures(signedAssertion).replace(/ID="[^"]+"/, 'ID="_evil"').replace('>alice@acme.example</saml:NameID>', '>ceo@acme.example</saml:NameID>')

    it('the signed assertion moved into the Response\'s Extensions, an unsigned one at its place', async () => {
      const xml = await signed()
      const assertion = assertionOf(xml)
      const wrapped = edit(xml, assertion, `${evil(assertion)}`).replace('<samlp:Status>', `<samlp:Extensions>${assertion}</samlp:Extensions><samlp:Status>`)
      expect(wrapped.match(/<saml:Assertion /g)).toHaveLength(2)
      expect(await refusal(wrapped)).toBe('assertion_count')
    })

    it('the signed assertion moved into a ds:Object of the unsigned one\'s copied Signature', async () => {
      const xml = await signed()
      const assertion = assertionOf(xml)
      const signature = (assertion.match(/<ds:Signature[\s\S]*?<\/ds:Signature>/) as RegExpMatchArray)[0]
      const withObject = signature.replace('</ds:Signature>', `<ds:Object>${assertion}</ds:Object></ds:Signature>`)
      const unsigned = evil(assertion).replace('</saml:Issuer>', `</saml:Issuer>${withObject}`)
      expect(await refusal(edit(xml, assertion, unsigned))).toBe('assertion_count')
    })

    it('an unsigned assertion in another namespace beside the signed one', async () => {
      const xml = await signed()
      const assertion = assertionOf(xml)
      const foreign = evil(assertion).replaceAll('saml:', 'x:').replace('xmlns:x="urn:oasis:names:tc:SAML:2.0:assertion"', 'xmlns:x="urn:example:not-saml"')
      expect(await refusal(edit(xml, assertion, `${foreign}${assertion}`))).toBe('assertion_count')
    })
  })

  describe('an identity that the received document and the signed bytes tell differently (CVE-2025-54419 shape)', () => {
    it('reads the identity from the signed bytes: a forged Subject where the signature does not reach (its own ds:Object)', async () => {
      const xml = await signed()
      const forged = '<ds:Object><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">ceo@acme.example</saml:NameID></saml:Subject><saml:AttributeStatement><saml:Attribute Name="mail"><saml:AttributeValue>ceo@acme.example</saml:AttributeValue></saml:Attribute></saml:AttributeStatement></ds:Object>'
      // In the assertion's own Signature, which the enveloped-signature transform leaves out of the digest:
      // the signature still verifies, and a reader of the received document meets this NameID first.
      const tampered = edit(xml, /(<saml:Assertion[\s\S]*?)<\/ds:Signature>/, `$1${forged}</ds:Signature>`)
      const identity = await verify(tampered)
      expect(identity).toMatchObject({ nameId: 'alice@acme.example', email: 'alice@acme.example', attributes: { mail: ['alice@acme.example'], displayName: ['Alice Liddell'] } })
    })
  })

  describe('markup inside the NameID', () => {
    const injected = 'alice@acme.example<!---->.evil.example'

    it('a comment inserted after signing (exclusive c14n leaves comments out of the digest)', async () => {
      const xml = edit(await signed({ fields: { NameID: 'alice@acme.example.evil.example' } }), '>alice@acme.example.evil.example</saml:NameID>', `>${injected}</saml:NameID>`)
      expect(await refusal(xml)).toBe('malformed')
    })

    it('a comment the IdP signed', async () => {
      const xml = await signed({ beforeSigning: (unsigned) => edit(unsigned, '>alice@acme.example</saml:NameID>', `>${injected}</saml:NameID>`) })
      expect(xml).toContain(injected)
      expect(await refusal(xml)).toBe('malformed')
    })

    it('a processing instruction inserted after signing (c14n keeps it: the digest breaks)', async () => {
      const xml = edit(await signed({ fields: { NameID: 'alice@acme.example.evil.example' } }), '>alice@acme.example.evil.example</saml:NameID>', '>alice@acme.example<?evil ?>.evil.example</saml:NameID>')
      expect(await refusal(xml)).toBe('signature')
    })

    it('a processing instruction the IdP signed (read from the signed bytes, where it is kept)', async () => {
      const xml = await signed({ beforeSigning: (unsigned) => edit(unsigned, '>alice@acme.example</saml:NameID>', '>alice@acme.example<?evil ?>.evil.example</saml:NameID>') })
      expect(await refusal(xml)).toBe('malformed')
    })
  })

  describe('a document the engine does not read', () => {
    it('a DOCTYPE with an entity, placed before or inside a signed response', async () => {
      const xml = await signed()
      const doctype = '<!DOCTYPE samlp:Response [<!ENTITY who "ceo@acme.example">]>'
      expect(await refusal(`${doctype}${xml}`)).toBe('malformed')
      expect(await refusal(`<?xml version="1.0"?>${doctype}${edit(xml, '>alice@acme.example</saml:NameID>', '>&who;</saml:NameID>')}`)).toBe('malformed')
    })

    it('a successful Response without an assertion, or with the signed one twice', async () => {
      const xml = await signed()
      expect(await refusal(edit(xml, assertionOf(xml), ''))).toBe('assertion_count')
      expect(await refusal(edit(xml, assertionOf(xml), `${assertionOf(xml)}${assertionOf(xml)}`))).toBe('assertion_count')
    })

    it('an EncryptedAssertion', async () => {
      const xml = await signed()
      const encrypted =
        '<saml:EncryptedAssertion><xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" Type="http://www.w3.org/2001/04/xmlenc#Element"><xenc:CipherData><xenc:CipherValue>AAAA</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData></saml:EncryptedAssertion>'
      expect(await refusal(edit(xml, assertionOf(xml), encrypted))).toBe('encrypted_assertion')
    })

    it('a status other than Success, with or without an assertion', async () => {
      const denied = 'urn:oasis:names:tc:SAML:2.0:status:Requester'
      const xml = await signed({ fields: { StatusCode: denied } })
      expect(await refusal(xml)).toBe('status')
      expect(await refusal(edit(xml, assertionOf(xml), ''))).toBe('status')
    })

    it('a field that is not base64, or larger than 256 KiB', async () => {
      await expect(codeOf(verifySamlResponse('PHNhbWxwOlJlc3BvbnNl*', { idp, sp: SP, expectedRequestId: null, nowMs: NOW, skewMs: SKEW_MS }))).resolves.toBe('malformed')
      const large = edit(await signed(), '</samlp:Response>', `<!--${'x'.repeat(256 * 1024)}--></samlp:Response>`)
      expect(await refusal(large)).toBe('malformed')
    })
  })
})

describe('verifySamlResponse\'s refusals', () => {
  it('say which check failed without quoting the response (only a well-formed Response or Assertion ID)', async () => {
    const forged = 'ceo@acme.example'
    const attempts = [
      await signed({ fields: { Audience: forged } }),
      await signed({ fields: { AssertionIssuer: forged, Issuer: null } }),
      await signed({ fields: { Destination: `https://${forged}/acs` } }),
      await signed({ fields: { InResponseTo: forged, SubjectInResponseTo: forged } }),
      edit(await signed(), '>alice@acme.example</saml:NameID>', `>${forged}</saml:NameID>`),
      // A line break in the (unsigned) Response ID: a forged log line if it were quoted.
      edit(await signed({ fields: { Destination: 'https://other-app.example/acs' } }), /ID="_response/, `ID="&#10;${forged} signed in&#10;_response`),
    ]
    for (const xml of attempts) {
      const error = await verify(xml).then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(SamlResponseError)
      const { message } = error as SamlResponseError
      expect(message).not.toContain(forged)
      expect(message).not.toMatch(/[<\n]/)
    }
  })
})
