/**
 * A software passkey authenticator for suites that run without a browser: it answers the options of
 * GET /webauthn-options as a platform authenticator would (ES256 on P-256, "none" attestation, user
 * present and verified), so registration and sign-in go through `@simplewebauthn/server`'s real
 * verification. The browser suite (test/passkey/browser.test.ts) does the same with Chromium's
 * virtual authenticator; this one is for the server's own branches, seconds cheaper each.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data
 * @see https://www.w3.org/TR/webauthn-3/#sctn-none-attestation
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { isoCBOR } from '@simplewebauthn/server/helpers'
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'

interface Credential {
  id: Buffer
  privateKey: KeyObject
  publicKey: KeyObject
  userHandle: string
  counter: number
}

const FLAG_USER_PRESENT = 0x01
const FLAG_USER_VERIFIED = 0x04
const FLAG_ATTESTED_DATA = 0x40

/** What `isoCBOR.encode` takes (its type is tiny-cbor's, not re-exported). */
type CBOR = Parameters<typeof isoCBOR.encode>[0]

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()
const base64url = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url')

export class SoftwareAuthenticator {
  readonly credentials: Credential[] = []
  /**
   * Whether each assertion counts up the credential's signature counter. Synced passkeys (iCloud
   * Keychain, Google Password Manager) keep it at 0: set false to answer as they do.
   */
  countsSignatures = true
  /** Whether the authenticator says it verified the user (PIN, biometrics): the UV flag. */
  verifiesUser = true
  /** The transports a registration reports; undefined leaves them out, as some browsers do. */
  transports: RegistrationResponseJSON['response']['transports'] = ['internal']

  /** @param origin The page's origin, as a browser would write it into the client data. */
  constructor(private readonly origin: string) {}

  /**
   * A new credential for `options` (GET /webauthn-options?action=register), or `again` registered once
   * more (what an authenticator ignoring `excludeCredentials` would send).
   */
  register(options: PublicKeyCredentialCreationOptionsJSON, again?: Credential): RegistrationResponseJSON {
    const credential: Credential = again ?? { id: randomBytes(16), ...generateKeyPairSync('ec', { namedCurve: 'P-256' }), userHandle: options.user.id, counter: 0 }
    if (!again) this.credentials.push(credential)
    const jwk = credential.publicKey.export({ format: 'jwk' })
    // COSE_Key (RFC 9053): kty EC2, alg ES256, crv P-256, x, y.
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, 'base64url')],
      [-3, Buffer.from(jwk.y!, 'base64url')],
    ])
    const length = Buffer.alloc(2)
    length.writeUInt16BE(credential.id.length)
    const attested = Buffer.concat([Buffer.alloc(16), length, credential.id, Buffer.from(isoCBOR.encode(coseKey))])
    const authData = this.authenticatorData(options.rp.id!, this.flags() | FLAG_ATTESTED_DATA, 0, attested)
    const attestation = new Map<string, CBOR>([
      ['fmt', 'none'],
      ['attStmt', new Map<string, CBOR>()],
      ['authData', authData],
    ])
    const attestationObject = isoCBOR.encode(attestation)
    return {
      id: base64url(credential.id),
      rawId: base64url(credential.id),
      type: 'public-key',
      response: { clientDataJSON: this.clientData('webauthn.create', options.challenge), attestationObject: base64url(attestationObject), transports: this.transports },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }

  /** An assertion by the last registered credential (or `credential`) for `options` (action=authenticate). */
  authenticate(options: PublicKeyCredentialRequestOptionsJSON, credential = this.credentials.at(-1)!): AuthenticationResponseJSON {
    if (this.countsSignatures) credential.counter += 1
    const authData = this.authenticatorData(options.rpId!, this.flags(), credential.counter)
    const clientDataJSON = this.clientData('webauthn.get', options.challenge)
    const signature = sign('sha256', Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))]), credential.privateKey)
    return {
      id: base64url(credential.id),
      rawId: base64url(credential.id),
      type: 'public-key',
      response: { clientDataJSON, authenticatorData: base64url(authData), signature: base64url(signature), userHandle: credential.userHandle },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }

  private flags(): number {
    return this.verifiesUser ? FLAG_USER_PRESENT | FLAG_USER_VERIFIED : FLAG_USER_PRESENT
  }

  private authenticatorData(rpID: string, flags: number, counter: number, attested = Buffer.alloc(0)): Buffer {
    const signCount = Buffer.alloc(4)
    signCount.writeUInt32BE(counter)
    return Buffer.concat([sha256(rpID), Buffer.from([flags]), signCount, attested])
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): string {
    return base64url(Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false })))
  }
}
