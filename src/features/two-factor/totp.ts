/**
 * TOTP codes (RFC 6238) on `otpauth`: the parameters every authenticator app supports (HMAC-SHA-1, six
 * digits, 30-second steps, a 160-bit secret), the `otpauth://` URI and its QR code (an SVG drawn on
 * the server by `qrcode`), and the sealing of the secret at rest. Loaded with the second factor's
 * routes, never on the session-read path.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6238
 * @see https://github.com/google/google-authenticator/wiki/Key-Uri-Format
 */
import { Secret, TOTP } from 'otpauth'
import QRCode from 'qrcode'
import { decryptJwe, encryptJwe } from '../../session/jwe.js'
import { keyRingFor } from '../../session/keys.js'

/** Seconds per time step. */
export const PERIOD = 30
const DIGITS = 6
const ALGORITHM = 'SHA1'
/** Steps accepted on either side of the current one: RFC 6238 §5.2's one step of clock drift and network delay. */
const WINDOW = 1

const ring = keyRingFor('portcullis.totp-secret')

/** A new random secret, base32 (what apps take when typed in). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32
}

/** The time step of `timestampMs`. */
export function stepAt(timestampMs: number): number {
  return Math.floor(timestampMs / 1000 / PERIOD)
}

/**
 * The time step whose code `code` is, within one step of `timestampMs`; null when it is none of
 * them. The comparison is constant-time (otpauth's).
 */
export function matchingStep(secret: string, code: string, timestampMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null
  const delta = TOTP.validate({ token: code, secret: Secret.fromBase32(secret), algorithm: ALGORITHM, digits: DIGITS, period: PERIOD, timestamp: timestampMs, window: WINDOW })
  return delta === null ? null : stepAt(timestampMs) + delta
}

/** The code of `secret` at `timestampMs` (for tests and the example's docs). */
export function totpCode(secret: string, timestampMs: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: ALGORITHM, digits: DIGITS, period: PERIOD, timestamp: timestampMs })
}

/** The `otpauth://totp/…` URI an app reads from the QR code. */
export function totpUri(secret: string, issuer: string, label: string): string {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), algorithm: ALGORITHM, digits: DIGITS, period: PERIOD }).toString()
}

/** The QR code of `uri` as an SVG element (no script, no external reference). */
export async function qrCodeSvg(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  // An <svg> element to put in a page (qrcode's string form has no XML declaration), with an accessible name.
  return svg.replace('<svg ', '<svg role="img" aria-label="QR code of the authenticator app secret" ')
}

/** The secret as stored: encrypted with a key derived from the secret (`AUTH_SECRET`), so a database dump does not hold it. */
export function sealTotpSecret(secrets: readonly string[], secret: string): string {
  return encryptJwe(secret, ring(secrets).current)
}

/** The stored secret opened with any configured secret (rotation); null when none opens it. */
export function openTotpSecret(secrets: readonly string[], sealed: string): string | null {
  return decryptJwe(sealed, ring(secrets))
}

/**
 * Whether `sealed` was sealed with the current (first) secret: its protected header is the current
 * key's, which names the key by its thumbprint (`kid`). Any other opens only with an older secret,
 * and is sealed again on its next use so that the older one can be dropped.
 */
export function sealedWithCurrentSecret(secrets: readonly string[], sealed: string): boolean {
  return sealed.startsWith(`${ring(secrets).current.protectedHeader}.`)
}
