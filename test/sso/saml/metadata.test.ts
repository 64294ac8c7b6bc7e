/**
 * parseIdpMetadata on the metadata samlify publishes for its IdP, and the documents it must refuse;
 * serviceProviderMetadata as an IdP reads it.
 */
import { describe, expect, it } from '@jest/globals'
import { SsoError } from '../../../src/features/sso/errors.js'
import { parseIdpMetadata, serviceProviderMetadata } from '../../../src/features/sso/saml/index.js'
import { certificate, idpMetadata, IDP_ENTITY_ID, IDP_SSO_URL, SP } from './idp.js'

const der = (pem: string): string => pem.replace(/-----[A-Z ]+-----|\s+/g, '')

function refusal(xml: string, options?: { allowInsecure?: boolean }): SsoError {
  try {
    parseIdpMetadata(xml, options)
  } catch (error) {
    if (error instanceof SsoError) return error
    throw error
  }
  throw new Error('parseIdpMetadata accepted the document')
}

describe('parseIdpMetadata', () => {
  it('reads the entity id, the HTTP-Redirect SSO URL and the signing certificate of samlify\'s IdP metadata', () => {
    const idp = parseIdpMetadata(idpMetadata(['idp']))
    expect(idp).toEqual({ entityId: IDP_ENTITY_ID, ssoUrl: IDP_SSO_URL, certificates: [der(certificate('idp'))] })
    expect(Object.isFrozen(idp) && Object.isFrozen(idp.certificates)).toBe(true)
  })

  it('keeps every signing certificate (key rollover)', () => {
    expect(parseIdpMetadata(idpMetadata(['idp', 'idp-next'])).certificates).toEqual([der(certificate('idp')), der(certificate('idp-next'))])
  })

  it('refuses a document with a DOCTYPE, even one without entities', () => {
    const xml = idpMetadata(['idp'])
    const withDoctype = xml.replace(/^(<\?xml[^>]*\?>)?/, '$1<!DOCTYPE md:EntityDescriptor [<!ENTITY x "y">]>')
    expect(withDoctype).toContain('<!DOCTYPE')
    expect(refusal(withDoctype).code).toBe('invalid_metadata')
    expect(refusal(xml.replace(/^(<\?xml[^>]*\?>)?/, '$1<!DOCTYPE html>')).code).toBe('invalid_metadata')
  })

  it('refuses an http SingleSignOnService unless allowInsecure', () => {
    const xml = idpMetadata(['idp']).replaceAll(IDP_SSO_URL, 'http://idp.acme.example/saml/sso')
    expect(refusal(xml).message).toMatch(/not https/)
    expect(parseIdpMetadata(xml, { allowInsecure: true }).ssoUrl).toBe('http://idp.acme.example/saml/sso')
  })

  it('refuses metadata without a signing certificate', () => {
    const xml = idpMetadata(['idp']).replace(/<(\w+:)?KeyDescriptor[\s\S]*?<\/(\w+:)?KeyDescriptor>/g, '')
    expect(xml).not.toContain('X509Certificate')
    expect(refusal(xml).message).toMatch(/no signing certificate/)
  })

  it('refuses an encryption-only certificate as a signing certificate', () => {
    const xml = idpMetadata(['idp']).replace(/use="signing"/g, 'use="encryption"')
    expect(xml).toContain('use="encryption"')
    expect(refusal(xml).message).toMatch(/no signing certificate/)
  })

  it('refuses a certificate that is not X.509, and a document that is not XML', () => {
    expect(refusal(idpMetadata(['idp']).replace(/<(\w+:)?X509Certificate>[^<]+</, '<$1X509Certificate>AAAA<')).message).toMatch(/not an X.509/)
    expect(refusal('<md:EntityDescriptor').code).toBe('invalid_metadata')
  })
})

describe('serviceProviderMetadata', () => {
  it('publishes the entity id, the HTTP-POST ACS URL, and WantAssertionsSigned', async () => {
    const xml = await serviceProviderMetadata(SP)
    expect(xml).toContain(`entityID="${SP.entityId}"`)
    expect(xml).toMatch(new RegExp(`AssertionConsumerService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"[^>]*Location="${SP.acsUrl}"|AssertionConsumerService[^>]*Location="${SP.acsUrl}"[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"`))
    expect(xml).toContain('WantAssertionsSigned="true"')
    expect(xml).toContain('AuthnRequestsSigned="false"')
  })
})
