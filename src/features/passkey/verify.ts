/**
 * Verifies a passkey response with `@simplewebauthn/server` (signature, RP ID, origin, user
 * verification, the challenge) after our own checks of the challenge and the origin
 * (response.ts), and enforces the signature counter.
 *
 * The counter: an authenticator that counts (a security key, a device-bound passkey) must report
 * more than last time, else the response comes from a clone of it and is refused; synced passkeys
 * report 0 every time and are not checked (WebAuthn §6.1.1). The new value is stored with a
 * compare-and-set on the old one, so of two concurrent sign-ins with the same counter value (a
 * clone used at the same moment as the original) only one passes.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-sign-counter
 */
import type { PasskeyAdapter, PasskeyProvider } from './provider.js'
import { WebAuthnVerificationError } from './errors.js'
import { describeError } from '../../events.js'
import type { AdapterAccount, AdapterUser } from '../../types.js'
import type { AdapterAuthenticator } from './types.js'
import { loadSimpleWebAuthn } from './library.js'
import { transportsOf } from './options.js'
import { base64url, checkClientData, readResponse, storedCredentialId } from './response.js'

/** A verified sign-in: the passkey, its account and its user. */
export interface VerifiedPasskeySignIn {
  authenticator: AdapterAuthenticator
  account: AdapterAccount
  user: AdapterUser
  /**
   * The authenticator verified the user (PIN, biometrics: the UV flag). False only with
   * `userVerification: 'preferred'`: then the passkey proved the device alone, one factor.
   */
  userVerified: boolean
}

/**
 * Verifies a sign-in response against `challenge` and stores the passkey's new counter.
 * @throws WebAuthnVerificationError (see its codes); AdapterError
 */
export async function verifyPasskeySignIn(adapter: PasskeyAdapter, provider: PasskeyProvider, data: unknown, challenge: string): Promise<VerifiedPasskeySignIn> {
  const response = readResponse(data, 'authenticate')
  checkClientData(response, 'authenticate', challenge, provider)
  const credentialID = storedCredentialId(response.id)
  const authenticator = await adapter.getAuthenticator(credentialID)
  if (!authenticator) throw new WebAuthnVerificationError('unknown_credential', 'No stored passkey has the credential id of the response: it was removed, or belongs to another site or database.')

  const { verifyAuthenticationResponse } = await loadSimpleWebAuthn()
  let newCounter: number
  let userVerified: boolean
  try {
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: [...provider.origins],
      expectedRPID: provider.rpID,
      // Counter 0 to the library: the counter rule is enforced below, with its own code, against the
      // same stored value the compare-and-set expects.
      credential: { id: base64url(authenticator.credentialID), publicKey: new Uint8Array(Buffer.from(authenticator.credentialPublicKey, 'base64')), counter: 0, transports: transportsOf(authenticator) },
      requireUserVerification: provider.userVerification === 'required',
    })
    if (!verification.verified) throw new Error('the response could not be verified')
    newCounter = verification.authenticationInfo.newCounter
    userVerified = verification.authenticationInfo.userVerified
  } catch (error) {
    throw new WebAuthnVerificationError('verification_failed', `The passkey sign-in response was refused: ${describeError(error)}`, { cause: error })
  }
  // A passkey that never counted (synced passkeys keep 0) may go on at 0; one that counted must count up.
  if (authenticator.counter > 0 && newCounter <= authenticator.counter) {
    throw new WebAuthnVerificationError(
      'counter_replayed',
      `The passkey's signature counter went from ${authenticator.counter} to ${newCounter}: the response comes from a cloned authenticator (or a replay), so it is refused. If the user lost no device, remove this passkey.`,
    )
  }
  const stored = await adapter.updateAuthenticatorCounter(authenticator.credentialID, newCounter, { expect: authenticator.counter })
  if (stored === null) throw new WebAuthnVerificationError('counter_conflict', 'Another sign-in with this passkey stored its counter at the same moment: one of two concurrent uses of one authenticator (a clone) is refused.')

  const account = await adapter.getAccount(authenticator.providerAccountId, provider.id)
  const user = account ? await adapter.getUser(account.userId) : null
  if (!account || !user) throw new WebAuthnVerificationError('unknown_credential', `The passkey has no "${provider.id}" account or user any more (providerAccountId ${authenticator.providerAccountId}).`)
  return { authenticator: { ...authenticator, counter: newCounter }, account, user, userVerified }
}

/**
 * Verifies a registration response against `challenge`: the passkey to store for `userId`.
 * @throws WebAuthnVerificationError (see its codes); AdapterError
 */
export async function verifyPasskeyRegistration(adapter: PasskeyAdapter, provider: PasskeyProvider, data: unknown, challenge: string, userId: string): Promise<AdapterAuthenticator> {
  const response = readResponse(data, 'register')
  checkClientData(response, 'register', challenge, provider)
  const { verifyRegistrationResponse } = await loadSimpleWebAuthn()
  let info
  try {
    const verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: [...provider.origins],
      expectedRPID: provider.rpID,
      requireUserVerification: provider.userVerification === 'required',
    })
    if (!verification.verified) throw new Error('the response could not be verified')
    info = verification.registrationInfo
  } catch (error) {
    throw new WebAuthnVerificationError('verification_failed', `The passkey registration response was refused: ${describeError(error)}`, { cause: error })
  }
  const credentialID = storedCredentialId(info.credential.id)
  if (await adapter.getAuthenticator(credentialID)) throw new WebAuthnVerificationError('credential_exists', 'This passkey is registered already.')
  const transports = response.response.transports ?? info.credential.transports ?? []
  return {
    credentialID,
    userId,
    // Auth.js's link: the passkey's account has the credential id as its id.
    providerAccountId: credentialID,
    credentialPublicKey: Buffer.from(info.credential.publicKey).toString('base64'),
    counter: info.credential.counter,
    credentialDeviceType: info.credentialDeviceType,
    credentialBackedUp: info.credentialBackedUp,
    transports: transports.length > 0 ? transports.join(',') : null,
  }
}
