/**
 * The DNS check of a domain: a TXT record `_portcullis-sso.<domain>` whose value is the domain's
 * token, asked through `node:dns` (the system's resolvers, or the provider's `dnsServers`). Only an
 * exact value counts: a record that merely contains the token, or one of another name, proves nothing.
 *
 * @see https://www.rfc-editor.org/rfc/rfc1035#section-3.3.14
 */
import { Resolver } from 'node:dns/promises'
import { timingSafeEqual } from 'node:crypto'

/** The name of the TXT record that verifies `domain`. */
export function verificationRecordName(domain: string): string {
  return `_portcullis-sso.${domain}`
}

/** The value the record must hold. */
export function verificationRecordValue(token: string): string {
  return `portcullis-sso-verification=${token}`
}

/** Whether `domain` publishes the record for `token`. A failed lookup is no record. */
export async function hasVerificationRecord(domain: string, token: string, servers: readonly string[] | undefined): Promise<boolean> {
  const resolver = new Resolver({ timeout: 5000, tries: 2 })
  if (servers) resolver.setServers([...servers])
  let records: string[][]
  try {
    records = await resolver.resolveTxt(verificationRecordName(domain))
  } catch {
    return false
  }
  const expected = Buffer.from(verificationRecordValue(token))
  // A TXT record may be split into strings of 255 bytes; its value is their concatenation.
  return records.some((parts) => {
    const value = Buffer.from(parts.join(''))
    return value.length === expected.length && timingSafeEqual(value, expected)
  })
}
