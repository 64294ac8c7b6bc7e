/**
 * The engine's own XML reading, for the parts node-saml does not hand back: metadata, and the fields of a
 * signed assertion node-saml has already verified. One strict parser (no DOCTYPE, no recovery from an
 * error), elements found by namespace and local name, and text that must be only text.
 */
import { DOMParser } from '@xmldom/xmldom'

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const

/** Node types (DOM Level 1) the readers tell apart. */
const ELEMENT = 1
const TEXT = 3
const CDATA = 4

/**
 * The document of `xml`, or `null` when it is not well-formed or declares a DOCTYPE. A DOCTYPE is the door
 * to entity expansion (billion laughs, external entities); neither metadata nor a SAML message needs one
 * (SAML 2.0 Core §1.3: "SAML messages MUST NOT contain a DTD"; the same holds for metadata here).
 */
export function parseStrictXml(xml: string): Document | null {
  if (/<!DOCTYPE/i.test(xml)) return null
  let failed = false
  const fail = (): void => {
    failed = true
  }
  let doc: Document
  try {
    doc = new DOMParser({ errorHandler: { warning: () => {}, error: fail, fatalError: fail } }).parseFromString(xml, 'text/xml') as unknown as Document
  } catch {
    return null
  }
  if (failed || !doc?.documentElement || doc.doctype) return null
  return doc
}

/** The child elements of `parent` named `localName` in `namespace`, in document order (children only, no deeper). */
export function childElements(parent: Node, namespace: string, localName: string): Element[] {
  const found: Element[] = []
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === ELEMENT && (node as Element).namespaceURI === namespace && (node as Element).localName === localName) found.push(node as Element)
  }
  return found
}

/** The one child element so named, `null` when there is none, `undefined` when there are several. */
export function onlyChild(parent: Node, namespace: string, localName: string): Element | null | undefined {
  const found = childElements(parent, namespace, localName)
  return found.length === 0 ? null : found.length === 1 ? found[0] : undefined
}

/** Every element so named anywhere under `root` (its descendants, `root` itself included). */
export function descendants(root: Document | Element, namespace: string, localName: string): Element[] {
  return Array.from(root.getElementsByTagNameNS(namespace, localName))
}

/**
 * The text of an element whose children are all text (or CDATA), `null` if any child is something else.
 * A comment or a processing instruction inside an identifier is how one value is made to read as
 * another (`alice@acme.example<!---->.evil.example`): such a value is refused, never read in part.
 */
export function textOnly(element: Element): string | null {
  let text = ''
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType !== TEXT && node.nodeType !== CDATA) return null
    text += (node as CharacterData).data
  }
  return text
}

/** An attribute's value, `null` when it is absent (an empty value stays the empty string). */
export function attribute(element: Element, name: string): string | null {
  return element.hasAttribute(name) ? element.getAttribute(name) : null
}

/** An xs:ID as it may go into a log line: the IdP's IDs help an operator find its own log; anything else is left out. */
const LOGGABLE_ID = /^[A-Za-z_][\w.-]{0,127}$/

/** `id` to name in an error message, or a placeholder when it is absent or is not a plain xs:ID (log injection). */
export function loggableId(id: string | null): string {
  if (id === null || id === '') return '(no ID)'
  return LOGGABLE_ID.test(id) ? id : '(an ID that is not an xs:ID)'
}
