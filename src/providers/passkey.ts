/**
 * Passkeys (WebAuthn): sign in with a credential the browser, the phone or a security key keeps,
 * checked by `@simplewebauthn/server`. A signed-in user registers passkeys on the built-in passkeys
 * page (`/api/auth/passkeys`); the sign-in page offers them in the e-mail field's autofill
 * (conditional UI) and behind a "Sign in with a passkey" button. See docs/passkeys.md.
 *
 * Needs an adapter with the authenticator methods (`KnexAdapter` has them, after the
 * `portcullis_authenticator` migration), `@simplewebauthn/server` installed, and the site's URL:
 * `AUTH_URL`, or `relayingParty.origin`. Init says which is missing.
 *
 * @example
 * ```ts
 * import Passkey from 'portcullis/providers/passkey'
 *
 * Passkey({ relayingParty: { name: 'Example' } }) // RP ID and origin from AUTH_URL
 * ```
 * @see https://www.w3.org/TR/webauthn-3/
 * @see https://authjs.dev/getting-started/authentication/webauthn
 */

/** The relying party (the site) the passkeys belong to. Each field defaults from `AUTH_URL`. */
export interface RelayingPartyOptions {
  /**
   * The RP ID: the site's domain (`example.com`), or a parent domain of it, so that passkeys work on
   * its subdomains. Default: the host name of `origin`.
   */
  id?: string | undefined
  /** Shown by the browser when a passkey is created. Default: the RP ID. */
  name?: string | undefined
  /**
   * The origin(s) the browser signs for, e.g. `https://example.com`: a response from any other
   * origin is refused. Default: the origin of `AUTH_URL`.
   */
  origin?: string | readonly string[] | undefined
}

/** Options of `Passkey(...)`. */
export interface PasskeyOptions {
  /** Provider id, used in URLs (`/callback/<id>`, `/webauthn-options/<id>`). Default `passkey`. */
  id?: string | undefined
  /** Shown on buttons. Default `Passkey`. */
  name?: string | undefined
  relayingParty?: RelayingPartyOptions | undefined
  /**
   * `required` (default): the authenticator must verify the user (a PIN, a fingerprint), so the
   * passkey alone is a full sign-in. `preferred` also accepts a security key that only proves presence.
   */
  userVerification?: 'required' | 'preferred' | undefined
  /**
   * Offer passkeys in the autofill of the sign-in page's e-mail (or username) field, where the
   * browser supports it. Default `true`.
   */
  enableConditionalUI?: boolean | undefined
  /** Milliseconds the browser gives the user to answer. Default 60000. */
  timeout?: number | undefined
}

/** A passkey provider as written in the config. */
export interface PasskeyConfig {
  readonly id: string
  readonly name: string
  readonly type: 'webauthn'
  readonly relayingParty?: RelayingPartyOptions | undefined
  readonly userVerification?: 'required' | 'preferred' | undefined
  readonly enableConditionalUI?: boolean | undefined
  readonly timeout?: number | undefined
}

/**
 * Creates the passkey provider.
 *
 * @param options Its id and name, the relying party, user verification, conditional UI.
 * @example
 * ```ts
 * import Passkey from 'portcullis/providers/passkey'
 *
 * Passkey({ relayingParty: { id: 'example.com', name: 'Example', origin: 'https://www.example.com' } })
 * ```
 */
export default function Passkey(options: PasskeyOptions = {}): PasskeyConfig {
  return Object.freeze({
    id: options.id ?? 'passkey',
    name: options.name ?? 'Passkey',
    type: 'webauthn',
    relayingParty: options.relayingParty,
    userVerification: options.userVerification,
    enableConditionalUI: options.enableConditionalUI,
    timeout: options.timeout,
  })
}
