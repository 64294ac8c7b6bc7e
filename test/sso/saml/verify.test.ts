/**
 * verifySamlResponse against a real samlify IdP: a valid SP-initiated response, the AuthnRequest's ID
 * round-tripping through the IdP, an IdP-initiated one, key rollover, the clock and its skew.
 */
import { describe, expect, it } from '@jest/globals'
import { authnRequestUrl, parseIdpMetadata, verifySamlResponse, type SamlIdp } from '../../../src/features/sso/saml/index.js'
import { authnRequestOf, idpMetadata, idpResponseXml, IDP_ENTITY_ID, IDP_SSO_URL, NOW, SP, toBase64 } from './idp.js'

const idp: SamlIdp = parseIdpMetadata(idpMetadata(['idp']))
const expected = (expectedRequestId: string | null, overrides: { idp?: SamlIdp; nowMs?: number } = {}) => ({
  idp: overrides.idp ?? idp,
  sp: SP,
  expectedRequestId,
  nowMs: overrides.nowMs ?? NOW,
  skewMs: 60_000,
})

describe('verifySamlResponse', () => {
  it('verifies an SP-initiated response to the AuthnRequest of authnRequestUrl and yields its identity', async () => {
    const { url, requestId } = await authnRequestUrl(idp, SP, 'state-1')
    const request = authnRequestOf(url)
    expect(url.startsWith(`${IDP_SSO_URL}?`)).toBe(true)
    expect(request).toEqual({ id: requestId, destination: IDP_SSO_URL, issuer: SP.entityId, acsUrl: SP.acsUrl, relayState: 'state-1' })

    const xml = await idpResponseXml({ fields: { InResponseTo: request.id, SubjectInResponseTo: request.id, AssertionID: '_a-sp-initiated' } })
    const identity = await verifySamlResponse(toBase64(xml), expected(requestId))
    expect(identity).toEqual({
      issuer: IDP_ENTITY_ID,
      nameId: 'alice@acme.example',
      nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      email: 'alice@acme.example',
      name: 'Alice Liddell',
      attributes: { mail: ['alice@acme.example'], displayName: ['Alice Liddell'] },
      assertionId: '_a-sp-initiated',
      inResponseTo: requestId,
      notOnOrAfter: NOW + 5 * 60_000,
      sessionIndex: expect.stringMatching(/^_session/),
    })
    expect(Object.isFrozen(identity) && Object.isFrozen(identity.attributes)).toBe(true)
  })

  it('verifies an IdP-initiated response when no request is expected', async () => {
    const identity = await verifySamlResponse(toBase64(await idpResponseXml()), expected(null))
    expect(identity.nameId).toBe('alice@acme.example')
    expect(identity.inResponseTo).toBeNull()
  })

  it('accepts an empty InResponseTo as answering no request (samlify\'s IdP-initiated template)', async () => {
    const xml = await idpResponseXml({ fields: { InResponseTo: '', SubjectInResponseTo: '' } })
    expect((await verifySamlResponse(toBase64(xml), expected(null))).inResponseTo).toBeNull()
  })

  it('verifies a response signed with the next key when the metadata lists both certificates (key rollover)', async () => {
    const rollover = parseIdpMetadata(idpMetadata(['idp', 'idp-next']))
    expect(rollover.certificates).toHaveLength(2)
    for (const key of ['idp', 'idp-next'] as const) {
      const identity = await verifySamlResponse(toBase64(await idpResponseXml({ key })), expected(null, { idp: rollover }))
      expect(identity.nameId).toBe('alice@acme.example')
    }
  })

  it('verifies a response whose Response and Assertion are both signed', async () => {
    const identity = await verifySamlResponse(toBase64(await idpResponseXml({ signResponse: true })), expected(null))
    expect(identity.nameId).toBe('alice@acme.example')
  })

  it('accepts a response inside the clock skew on either side', async () => {
    const xml = await idpResponseXml()
    // Five minutes plus 59 s after issue (skew 60 s), and 59 s before the Conditions' NotBefore.
    await expect(verifySamlResponse(toBase64(xml), expected(null, { nowMs: NOW + 5 * 60_000 + 59_000 }))).resolves.toMatchObject({ nameId: 'alice@acme.example' })
    await expect(verifySamlResponse(toBase64(xml), expected(null, { nowMs: NOW - 60_000 - 59_000 }))).resolves.toMatchObject({ nameId: 'alice@acme.example' })
  })

  it('accepts the base64 field with line breaks, as some IdPs post it', async () => {
    const base64 = toBase64(await idpResponseXml()).replace(/(.{76})/g, '$1\r\n')
    await expect(verifySamlResponse(base64, expected(null))).resolves.toMatchObject({ nameId: 'alice@acme.example' })
  })
})
