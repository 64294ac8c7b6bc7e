/**
 * The options of a passkey ceremony, as `navigator.credentials.get()` / `.create()` take them
 * (in their JSON form): made by `@simplewebauthn/server` around a challenge of ours.
 *
 * - Sign-in: discoverable credentials (no `allowCredentials`), so the browser offers every passkey
 *   it has for the site, in a dialog or in the autofill of a username field (conditional UI).
 * - Registration: a resident key (a passkey, not a second-factor-only credential), the user's
 *   current passkeys excluded so one authenticator is not registered twice.
 *
 * @see https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialrequestoptionsjson
 */
import { createHmac } from 'node:crypto'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { PasskeyProvider } from './provider.js'
import type { ResolvedConfig } from '../../config/types.js'
import type { AdapterUser } from '../../types.js'
import type { AdapterAuthenticator } from './types.js'
import { loadSimpleWebAuthn } from './library.js'
import { base64url } from './response.js'

/** The options of a sign-in with `challenge` (base64url). */
export async function authenticationOptions(provider: PasskeyProvider, challenge: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const { generateAuthenticationOptions } = await loadSimpleWebAuthn()
  return generateAuthenticationOptions({
    rpID: provider.rpID,
    challenge: Buffer.from(challenge, 'base64url'),
    timeout: provider.timeout,
    userVerification: provider.userVerification,
  })
}

/** The options of a registration for `user`, who has the passkeys `existing`. */
export async function registrationOptions(
  config: ResolvedConfig,
  provider: PasskeyProvider,
  challenge: string,
  user: AdapterUser,
  existing: readonly AdapterAuthenticator[],
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { generateRegistrationOptions } = await loadSimpleWebAuthn()
  return generateRegistrationOptions({
    rpName: provider.rpName,
    rpID: provider.rpID,
    userName: user.email ?? user.name ?? user.id,
    userDisplayName: user.name ?? user.email ?? '',
    userID: userHandle(config, user.id),
    challenge: Buffer.from(challenge, 'base64url'),
    timeout: provider.timeout,
    attestationType: 'none',
    excludeCredentials: existing.map((authenticator) => ({ id: base64url(authenticator.credentialID), transports: transportsOf(authenticator) })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: provider.userVerification },
  })
}

/**
 * The user handle the authenticator keeps with the passkey: the same for every passkey of one user
 * (so a password manager files them under one account), and not the user id itself, which the
 * WebAuthn spec asks not to reveal. Nothing looks users up by it: the credential id finds the passkey.
 * @see https://www.w3.org/TR/webauthn-3/#sctn-user-handle-privacy
 */
function userHandle(config: ResolvedConfig, userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHmac('sha256', config.secrets[0]!).update(`portcullis webauthn user handle\0${userId}`).digest())
}

/** The stored transports (`internal,hybrid`) as a list; undefined when unknown. */
export function transportsOf(authenticator: AdapterAuthenticator): AuthenticatorTransportName[] | undefined {
  return authenticator.transports ? (authenticator.transports.split(',').filter(Boolean) as AuthenticatorTransportName[]) : undefined
}

/** The transports WebAuthn names. */
export type AuthenticatorTransportName = 'ble' | 'cable' | 'hybrid' | 'internal' | 'nfc' | 'smart-card' | 'usb'
