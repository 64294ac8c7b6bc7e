/** Reading an identity provider's SAML metadata into the `SamlIdp` a connection keeps. */
import { X509Certificate } from 'node:crypto'
import { SsoError } from '../errors.js'
import type { SamlIdp } from './types.js'
import { attribute, childElements, NS, parseStrictXml, textOnly } from './xml.js'

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'

/** Options of `parseIdpMetadata`. */
export interface IdpMetadataOptions {
  /** Accept an `http:` SingleSignOnService (a local development IdP only: the AuthnRequest and the user's session then travel in clear). */
  readonly allowInsecure?: boolean
}

/**
 * The entity id, the single sign-on URL and the signing certificates of an IdP's metadata.
 *
 * The SSO URL is the HTTP-Redirect SingleSignOnService's location (the HTTP-POST one when there is no
 * redirect). The certificates are every KeyDescriptor's for `use="signing"` or without a `use`, as
 * base64 DER; several are kept so that a response signed with any of them verifies (key rollover).
 *
 * @param xml the metadata document (an EntityDescriptor, or an EntitiesDescriptor holding exactly one IdP)
 * @throws SsoError `invalid_metadata` when the document has a DOCTYPE, no IdP EntityDescriptor, no entityID,
 *   no usable SingleSignOnService, an SSO URL that is not https (unless `allowInsecure`), or no signing certificate
 * @example
 * const idp = parseIdpMetadata(await (await fetch(metadataUrl)).text())
 * @see SAML 2.0 Metadata §2.3.2 (EntityDescriptor), §2.4.1.1 (KeyDescriptor), §2.4.3 (IDPSSODescriptor)
 */
export function parseIdpMetadata(xml: string, options: IdpMetadataOptions = {}): SamlIdp {
  const doc = parseStrictXml(xml)
  if (!doc) throw invalid('it is not well-formed XML without a DOCTYPE')
  const entity = idpEntity(doc.documentElement)
  const entityId = attribute(entity, 'entityID')
  if (!entityId) throw invalid('its EntityDescriptor has no entityID')
  const descriptors = childElements(entity, NS.metadata, 'IDPSSODescriptor')
  if (descriptors.length !== 1) throw invalid('it does not have exactly one IDPSSODescriptor')
  const descriptor = descriptors[0] as Element
  return Object.freeze({
    entityId,
    ssoUrl: ssoUrl(descriptor, options.allowInsecure === true),
    certificates: Object.freeze(signingCertificates(descriptor)),
  })
}

function invalid(why: string): SsoError {
  return new SsoError('invalid_metadata', `The SAML metadata cannot be used: ${why}.`)
}

/** The root EntityDescriptor, or the only one with an IDPSSODescriptor inside a root EntitiesDescriptor. */
function idpEntity(root: Element): Element {
  if (root.namespaceURI === NS.metadata && root.localName === 'EntityDescriptor') return root
  if (root.namespaceURI === NS.metadata && root.localName === 'EntitiesDescriptor') {
    const idps = childElements(root, NS.metadata, 'EntityDescriptor').filter((entity) => childElements(entity, NS.metadata, 'IDPSSODescriptor').length > 0)
    if (idps.length === 1) return idps[0] as Element
    throw invalid(`its EntitiesDescriptor holds ${idps.length} identity providers, not one`)
  }
  throw invalid('it has no EntityDescriptor')
}

function ssoUrl(descriptor: Element, allowInsecure: boolean): string {
  const services = childElements(descriptor, NS.metadata, 'SingleSignOnService')
  const service = services.find((s) => attribute(s, 'Binding') === REDIRECT_BINDING) ?? services.find((s) => attribute(s, 'Binding') === POST_BINDING)
  const location = service ? attribute(service, 'Location') : null
  if (!location) throw invalid('it has no HTTP-Redirect or HTTP-POST SingleSignOnService with a Location')
  let url: URL
  try {
    url = new URL(location)
  } catch {
    throw invalid('its SingleSignOnService Location is not a URL')
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && allowInsecure)) return url.href
  throw invalid('its SingleSignOnService Location is not https (allowInsecure accepts http for a local development IdP)')
}

/** Base64 DER of each signing certificate, each checked to be an X.509 certificate, without duplicates. */
function signingCertificates(descriptor: Element): string[] {
  const certificates = new Set<string>()
  for (const key of childElements(descriptor, NS.metadata, 'KeyDescriptor')) {
    const use = attribute(key, 'use')
    if (use !== null && use !== 'signing') continue
    for (const info of childElements(key, NS.dsig, 'KeyInfo')) {
      for (const data of childElements(info, NS.dsig, 'X509Data')) {
        for (const cert of childElements(data, NS.dsig, 'X509Certificate')) certificates.add(certificateDer(cert))
      }
    }
  }
  if (certificates.size === 0) throw invalid('it has no signing certificate (KeyDescriptor use="signing" or without use)')
  return [...certificates]
}

function certificateDer(element: Element): string {
  const base64 = (textOnly(element) ?? '').replace(/\s+/g, '')
  try {
    new X509Certificate(Buffer.from(base64, 'base64'))
  } catch {
    throw invalid('one of its signing certificates is not an X.509 certificate')
  }
  return base64
}
