/**
 * The passkey wing's public types, and what it adds to the shared ones: the adapter's credential
 * methods and the passkey events (TypeScript declaration merging, so `Adapter` and `EventsOptions`
 * name no feature of their own; `src/index.ts` re-exports this module).
 */
import type { PasskeyConfig } from '../../providers/passkey.js'
import type { Awaitable, CookieOption } from '../../types.js'

/**
 * A WebAuthn credential (a passkey) of a user: Auth.js's `AdapterAuthenticator`, the same fields,
 * column names and encodings, so an Auth.js app and a Portcullis app can share the table.
 * @see https://www.w3.org/TR/webauthn-3/#authenticator
 */
export interface AdapterAuthenticator {
  /** The credential id, base64 (standard alphabet, padded, as Auth.js stores it). Unique. */
  credentialID: string
  userId: string
  /** The id of the user's `webauthn` account this credential signs in to (Auth.js: the credential id). */
  providerAccountId: string
  /** The credential's public key (COSE), base64. */
  credentialPublicKey: string
  /** The signature counter the authenticator last reported. */
  counter: number
  /** `singleDevice` or `multiDevice`. */
  credentialDeviceType: string
  /** Whether the credential is backed up (synced). */
  credentialBackedUp: boolean
  /** The transports, comma-separated (`usb,nfc`); `null` when unknown. */
  transports?: string | null
}

/** One of the user's passkeys, as `listPasskeys()` and the passkeys page show it (never its public key). */
export interface PasskeyInfo {
  /** The credential id (base64, as stored): pass it to `removePasskey()`. Not a secret. */
  id: string
  /** `multiDevice` for a synced passkey (a password manager, iCloud Keychain), `singleDevice` for one bound to a device or a security key. */
  deviceType: 'singleDevice' | 'multiDevice' | (string & {})
  /** Whether the passkey is backed up (synced). */
  backedUp: boolean
  /** How the browser reaches it: `internal`, `hybrid`, `usb`, `nfc`, `ble`; `[]` when unknown. */
  transports: string[]
}

declare module '../../types.js' {
  interface Adapter {
    /** Stores a new credential and returns it; throws when one with its `credentialID` exists. */
    createAuthenticator?(authenticator: AdapterAuthenticator): Promise<AdapterAuthenticator>
    /** The credential with this id, or `null`. */
    getAuthenticator?(credentialID: string): Promise<AdapterAuthenticator | null>
    /** The user's credentials; `[]` when there are none (or no such user). */
    listAuthenticatorsByUserId?(userId: string): Promise<AdapterAuthenticator[]>
    /**
     * Stores the credential's new signature counter and returns the credential; throws when there is
     * none (Auth.js's contract). With `expect`, a compare-and-set: the counter changes only if it still
     * holds `expect`, atomically (of two concurrent sign-ins with one cloned authenticator, one wins),
     * and `null` is returned when it does not. The passkey sign-in passes it; an adapter that ignores
     * it still works, without that guarantee.
     */
    updateAuthenticatorCounter?(credentialID: string, newCounter: number, options?: { expect?: number | undefined }): Promise<AdapterAuthenticator | null>
    /** Deletes the credential and returns it; `null` when there was none. Not in Auth.js's set (`removePasskey()` needs it). */
    deleteAuthenticator?(credentialID: string): Promise<AdapterAuthenticator | null>
  }

  interface CookiesOptions {
    /**
     * The sealed WebAuthn challenge of a passkey sign-in or registration (`authjs.challenge`, Auth.js's
     * name), valid 5 minutes, used once.
     */
    webauthnChallenge: CookieOption
  }

  interface EventsOptions {
    /** A passkey was registered for the signed-in user (after `linkAccount`, which fires for it too). */
    passkeyAdded?: ((message: { userId: string; passkey: PasskeyInfo }) => Awaitable<void>) | undefined
    /** A passkey was removed (`removePasskey()` or `POST /passkeys/remove`). */
    passkeyRemoved?: ((message: { userId: string; passkey: PasskeyInfo }) => Awaitable<void>) | undefined
  }
}

declare module '../../config/types.js' {
  interface ProviderConfigs {
    passkey: PasskeyConfig
  }
}
