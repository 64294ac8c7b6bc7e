/**
 * The default `normalizeIdentifier` of e-mail providers: one address, in one canonical form, and
 * nothing that a mail library or an SMTP server could read as a second recipient or a header.
 *
 * The address ends up in a `To:` header and an SMTP `RCPT TO`. RFC 5322 lets an address list hide
 * in one string (`a@b, c@d`, `"a@b" <c@d>`, `a@b (comment)`, `group: a@b;`), and a CR LF starts a
 * new header (`a@b\r\nBcc: c@d`). Rather than parse that grammar, the normaliser allows only what
 * a plain mailbox needs and refuses every character that grammar gives a meaning to.
 *
 * @see https://www.rfc-editor.org/rfc/rfc5322#section-3.4 Address specification
 * @see https://www.rfc-editor.org/rfc/rfc5321#section-4.5.3.1 Size limits (64 / 254)
 */
import { domainToASCII } from 'node:url'

/** Longest input looked at; a longer one is refused before any Unicode work. */
const MAX_INPUT_LENGTH = 320
/** RFC 5321 §4.5.3.1.1: at most 64 octets before the `@`. */
const MAX_LOCAL_LENGTH = 64
/** RFC 5321 §4.5.3.1.3 (a 256-octet path, less its angle brackets). */
const MAX_ADDRESS_LENGTH = 254

// Letters, digits and combining marks of any script (internationalised addresses, RFC 6531), and
// the RFC 5322 `atext` punctuation. Not allowed: `"` `(` `)` `,` `:` `;` `<` `>` `[` `]` `\` `@`,
// whitespace, control and format characters (zero-width, bidi overrides): the characters that
// quote, comment, group or separate addresses, or that hide text.
const LOCAL_PART = /^[\p{L}\p{N}\p{M}!#$%&'*+/=?^_`{|}~.-]+$/u
// Labels of letters, digits, marks and hyphens, separated by single dots. IP literals (`[1.2.3.4]`)
// are refused: no one signs in at one.
const DOMAIN = /^[\p{L}\p{N}\p{M}](?:[\p{L}\p{N}\p{M}-]*[\p{L}\p{N}\p{M}])?(?:\.[\p{L}\p{N}\p{M}](?:[\p{L}\p{N}\p{M}-]*[\p{L}\p{N}\p{M}])?)*$/u

/**
 * Why an address was refused (kept out of the client's view; the log gets it at debug level).
 */
export class InvalidEmailAddressError extends TypeError {
  constructor(reason: string) {
    super(`Not a valid e-mail address: ${reason}.`)
    this.name = 'InvalidEmailAddressError'
  }
}

/**
 * Normalises what the user typed into one e-mail address, or throws.
 *
 * 1. Unicode NFKC first, so compatibility look-alikes become the character they imitate and are
 *    judged as such: a full-width `＠` or `，`, a small `﹫`, a `․` (one-dot leader).
 * 2. Trimmed, lower-cased.
 * 3. Exactly one `@`, a non-empty local part of allowed characters (see above; no leading,
 *    trailing or doubled dot), a domain of dot-separated labels that IDNA accepts.
 *
 * Look-alike letters of other scripts (a Cyrillic `а` for a Latin `a`) are letters: the address is
 * a different mailbox, delivered to as typed, and cannot reach a second recipient.
 *
 * @param input The `email` field of the sign-in form.
 * @returns The address, e.g. `ada@example.com`.
 * @throws InvalidEmailAddressError when it is not one plain address.
 * @example
 * normalizeEmailAddress('  Ada@Example.COM ') // 'ada@example.com'
 * normalizeEmailAddress('a@b.example, c@d.example') // throws
 */
export function normalizeEmailAddress(input: unknown): string {
  if (typeof input !== 'string' || input.length === 0) throw new InvalidEmailAddressError('the address is missing')
  if (input.length > MAX_INPUT_LENGTH) throw new InvalidEmailAddressError('the address is too long')
  const address = input.normalize('NFKC').trim().toLowerCase()
  const parts = address.split('@')
  if (parts.length !== 2) throw new InvalidEmailAddressError('an address has exactly one "@"')
  const [local, domain] = parts as [string, string]
  if (!local || !domain) throw new InvalidEmailAddressError('the part before or after "@" is empty')
  if (local.length > MAX_LOCAL_LENGTH || address.length > MAX_ADDRESS_LENGTH) throw new InvalidEmailAddressError('the address is too long')
  if (!LOCAL_PART.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    throw new InvalidEmailAddressError('the part before "@" has a character that is not allowed')
  }
  // IDNA rejects what the pattern lets through but no DNS name can be (e.g. disallowed code points).
  if (!DOMAIN.test(domain) || domainToASCII(domain) === '') throw new InvalidEmailAddressError('the domain is not a host name')
  return address
}
