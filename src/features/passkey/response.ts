/**
 * A posted WebAuthn response (`data`, the JSON the browser script or Auth.js's client sends), read
 * with care: a string of JSON or an object, in the shape `@simplewebauthn/server` takes, its
 * client data decoded so that a wrong challenge or origin is refused with its own code.
 *
 * @see https://www.w3.org/TR/webauthn-3/#dictionary-client-data
 */
import { timingSafeEqual } from 'node:crypto'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import type { PasskeyProvider } from './provider.js'
import { WebAuthnVerificationError } from './errors.js'
import type { PasskeyAction } from './challenge.js'

/** What the browser signed over: `type`, `challenge`, `origin`. */
interface ClientData {
  type: string
  challenge: string
  origin: string
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

/**
 * The response of `action`.
 * @throws WebAuthnVerificationError `response_invalid`
 */
export function readResponse(data: unknown, action: 'authenticate'): AuthenticationResponseJSON
export function readResponse(data: unknown, action: 'register'): RegistrationResponseJSON
export function readResponse(data: unknown, action: PasskeyAction): AuthenticationResponseJSON | RegistrationResponseJSON {
  let parsed: unknown = data
  if (typeof data === 'string') {
    try {
      parsed = JSON.parse(data)
    } catch {
      parsed = undefined
    }
  }
  const response = parsed as Partial<RegistrationResponseJSON & AuthenticationResponseJSON> | undefined
  const fields = action === 'register' ? ['clientDataJSON', 'attestationObject'] : ['clientDataJSON', 'authenticatorData', 'signature']
  const inner = response?.response as Record<string, unknown> | undefined
  if (
    !response ||
    typeof response !== 'object' ||
    !isBase64Url(response.id) ||
    response.type !== 'public-key' ||
    !inner ||
    typeof inner !== 'object' ||
    fields.some((field) => !isBase64Url(inner[field]))
  ) {
    throw new WebAuthnVerificationError('response_invalid', `The posted data is not a WebAuthn ${action === 'register' ? 'registration' : 'authentication'} response (JSON with id, type "public-key" and response.${fields.join(', response.')}).`)
  }
  // The library wants rawId; Auth.js's client and ours send it, other clients may not.
  return { clientExtensionResults: {}, ...response, rawId: typeof response.rawId === 'string' ? response.rawId : response.id } as AuthenticationResponseJSON | RegistrationResponseJSON
}

/**
 * Checks what the browser signed over: the ceremony's type, this browser's challenge, a configured
 * origin. `@simplewebauthn/server` checks them again; here each failure gets its own code.
 * @throws WebAuthnVerificationError `response_invalid`, `challenge_mismatch`, `origin_mismatch`
 */
export function checkClientData(response: { response: { clientDataJSON: string } }, action: PasskeyAction, challenge: string, provider: PasskeyProvider): void {
  const clientData = decodeClientData(response.response.clientDataJSON)
  const type = action === 'register' ? 'webauthn.create' : 'webauthn.get'
  if (clientData.type !== type) throw new WebAuthnVerificationError('response_invalid', `The response's client data is of type "${clientData.type}", not "${type}".`)
  if (!sameChallenge(clientData.challenge, challenge)) {
    throw new WebAuthnVerificationError(
      'challenge_mismatch',
      "The response signs another challenge than this browser's challenge cookie holds: it was made for another browser or tab (whose options replaced this one's), or copied from elsewhere.",
    )
  }
  if (!provider.origins.includes(clientData.origin)) {
    throw new WebAuthnVerificationError('origin_mismatch', `The browser signed the passkey response for ${clientData.origin}, not ${provider.origins.join(' or ')} (relayingParty.origin / AUTH_URL).`)
  }
}

// The challenge is single use and tied to this browser's sealed cookie; compared in constant time
// all the same, as every value that stands for a session or a sign-in is.
function sameChallenge(given: string, expected: string): boolean {
  const left = Buffer.from(given)
  const right = Buffer.from(expected)
  return left.length === right.length && timingSafeEqual(left, right)
}

function decodeClientData(encoded: string): ClientData {
  let clientData: Partial<ClientData> | undefined
  try {
    clientData = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Partial<ClientData>
  } catch {
    clientData = undefined
  }
  if (!clientData || typeof clientData.type !== 'string' || typeof clientData.challenge !== 'string' || typeof clientData.origin !== 'string') {
    throw new WebAuthnVerificationError('response_invalid', "The response's clientDataJSON is not the JSON a browser makes (type, challenge, origin).")
  }
  return clientData as ClientData
}

function isBase64Url(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= 16_384 && BASE64URL.test(value)
}

/** A credential id as stored (Auth.js's encoding: standard base64, padded), from any base64 spelling. */
export function storedCredentialId(id: string): string {
  return Buffer.from(id, 'base64').toString('base64')
}

/** A stored (base64) value as the base64url the browser and the library use. */
export function base64url(stored: string): string {
  return Buffer.from(stored, 'base64').toString('base64url')
}
