/** The e-mail address and the display name in a verified assertion, under the names IdPs commonly send them. */

const EMAIL_NAME_ID = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'
const EMAIL = ['email', 'mail', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress', 'urn:oid:0.9.2342.19200300.100.1.3']
const NAME = [
  'displayName',
  'http://schemas.microsoft.com/identity/claims/displayname',
  'urn:oid:2.16.840.1.113730.3.1.241',
  'name',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
]
const GIVEN_NAME = ['givenName', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname', 'urn:oid:2.5.4.42']
const SURNAME = ['surname', 'sn', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname', 'urn:oid:2.5.4.4']

type Attributes = ReadonlyMap<string, readonly string[]>

/**
 * The NameID when its format is emailAddress, else the first address-like value of the usual mail
 * attributes (eduPerson/LDAP `mail`, its OID, the WS-Federation claim), else `null`.
 * @see SAML 2.0 Core §8.3.2 (emailAddress NameID format)
 */
export function emailOf(nameId: string, nameIdFormat: string | null, attributes: Attributes): string | null {
  if (nameIdFormat === EMAIL_NAME_ID && nameId.includes('@')) return nameId.trim()
  return first(attributes, EMAIL, (value) => value.includes('@'))
}

/** The display name attribute, else the given name and surname joined, else `null`. */
export function nameOf(attributes: Attributes): string | null {
  const name = first(attributes, NAME)
  if (name) return name
  const parts = [first(attributes, GIVEN_NAME), first(attributes, SURNAME)].filter((part) => part !== null)
  return parts.length > 0 ? parts.join(' ') : null
}

function first(attributes: Attributes, names: readonly string[], usable: (value: string) => boolean = () => true): string | null {
  for (const name of names) {
    for (const value of attributes.get(name) ?? []) {
      const trimmed = value.trim()
      if (trimmed !== '' && usable(trimmed)) return trimmed
    }
  }
  return null
}
