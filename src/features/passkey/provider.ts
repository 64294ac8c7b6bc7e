/**
 * Passkey providers at init: the relying party (RP ID, name, origins) from the options or `AUTH_URL`,
 * checked the way browsers will check it, the adapter's methods, and `@simplewebauthn/server` being
 * installed, each with an error that says what to change. Nothing here loads `@simplewebauthn/server`:
 * the passkey routes import it on first use (src/webauthn/), so reading sessions never does.
 *
 * @see https://www.w3.org/TR/webauthn-3/#rp-id
 */
import { createRequire } from 'node:module'
import { InvalidConfigurationError } from '../../errors.js'
import type { PasskeyConfig } from '../../providers/passkey.js'
import type { Adapter } from '../../types.js'

/** A configured passkey provider. */
export interface PasskeyProvider {
  readonly id: string
  readonly name: string
  readonly type: 'webauthn'
  /** The RP ID: a host name, the origins' own or a parent domain of theirs. */
  readonly rpID: string
  readonly rpName: string
  /** The origins a response may come from, e.g. `https://example.com`. */
  readonly origins: readonly string[]
  readonly userVerification: 'required' | 'preferred'
  readonly enableConditionalUI: boolean
  /** Milliseconds the browser waits for the user. */
  readonly timeout: number
}

/** The adapter methods passkey sign-in and registration call. */
export const PASSKEY_ADAPTER_METHODS = [
  'getUser',
  'getAccount',
  'linkAccount',
  'createAuthenticator',
  'getAuthenticator',
  'listAuthenticatorsByUserId',
  'updateAuthenticatorCounter',
  'createVerificationToken',
  'useVerificationToken',
] as const

/** An adapter with the methods passkeys need (checked at init). */
export type PasskeyAdapter = Adapter & Required<Pick<Adapter, (typeof PASSKEY_ADAPTER_METHODS)[number]>>

const PACKAGE = '@simplewebauthn/server'

/**
 * Resolves one passkey provider.
 *
 * @param url `AUTH_URL`, the default origin.
 * @throws InvalidConfigurationError naming the option (or variable) to set.
 */
export function resolvePasskeyProvider(input: PasskeyConfig, url: URL | undefined): PasskeyProvider {
  const where = `Passkey provider "${input.id}"`
  const fail = (message: string): never => {
    throw new InvalidConfigurationError(`${where}: ${message}`)
  }
  if (!webauthnServerInstalled()) fail(`${PACKAGE} is not installed. Run \`npm install ${PACKAGE}\` (version 14 or later): it checks the passkeys' signatures.`)
  const relayingParty = input.relayingParty ?? {}
  if (typeof relayingParty !== 'object') fail('relayingParty must be an object { id?, name?, origin? }.')
  const given = relayingParty.origin ?? url?.origin
  if (given === undefined) {
    fail('the site\'s origin is unknown, and passkeys are bound to it. Set AUTH_URL (e.g. AUTH_URL=https://example.com/api/auth), or pass relayingParty: { origin: \'https://example.com\' }.')
  }
  const list: readonly unknown[] = Array.isArray(given) ? given : [given]
  if (list.length === 0) fail('relayingParty.origin is an empty list; give the site\'s origin, e.g. \'https://example.com\'.')
  const origins = list.map((value) => originOf(fail, value))
  const rpID = relayingParty.id ?? new URL(origins[0]!).hostname
  if (typeof rpID !== 'string' || !/^[a-z0-9.-]+$/i.test(rpID) || rpID.startsWith('.') || rpID.endsWith('.')) {
    fail(`relayingParty.id must be a domain name such as "example.com"; got ${JSON.stringify(rpID)}.`)
  }
  if (/^[\d.]+$/.test(rpID) || rpID.includes(':')) fail(`the RP ID "${rpID}" is an IP address, which browsers refuse: serve the site on a name (localhost in development) and set AUTH_URL to it.`)
  for (const origin of origins) {
    const host = new URL(origin).hostname
    // Browsers accept an RP ID that is the origin's host or a registrable parent of it (WebAuthn §5.1.3).
    if (host !== rpID.toLowerCase() && !host.endsWith(`.${rpID.toLowerCase()}`)) {
      fail(`the RP ID "${rpID}" is not ${host} nor a parent domain of it, so browsers would refuse every passkey of ${origin}. Set relayingParty.id to "${host}" or a parent domain.`)
    }
  }
  const userVerification = input.userVerification ?? 'required'
  if (userVerification !== 'required' && userVerification !== 'preferred') fail(`userVerification must be "required" or "preferred"; got ${JSON.stringify(userVerification)}.`)
  const timeout = input.timeout ?? 60_000
  if (!Number.isInteger(timeout) || timeout < 1000) fail(`timeout must be a whole number of milliseconds, at least 1000; got ${String(timeout)}.`)
  const rpName = relayingParty.name ?? rpID
  if (typeof rpName !== 'string' || rpName.length === 0) fail('relayingParty.name must be a non-empty string.')
  return Object.freeze({
    id: input.id,
    name: typeof input.name === 'string' && input.name ? input.name : 'Passkey',
    type: 'webauthn',
    rpID: rpID.toLowerCase(),
    rpName,
    origins: Object.freeze(origins),
    userVerification,
    enableConditionalUI: input.enableConditionalUI !== false,
    timeout,
  })
}

/**
 * Passkeys store credentials and single-use challenges through the adapter.
 * @throws InvalidConfigurationError naming what is missing.
 */
export function assertPasskeyAdapter(providerId: string, adapter: Adapter | undefined): asserts adapter is PasskeyAdapter {
  if (!adapter) {
    throw new InvalidConfigurationError(
      `Passkey provider "${providerId}" needs an adapter: passkeys and their one-time challenges are stored in the database. Pass adapter: KnexAdapter(knex) from "portcullis/adapters/knex" and run its migrations (the Authenticator table).`,
    )
  }
  const missing = PASSKEY_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) {
    throw new InvalidConfigurationError(`Passkey provider "${providerId}" needs the adapter's ${missing.join(', ')}; this adapter lacks them (KnexAdapter has them all).`)
  }
}

/** Whether `@simplewebauthn/server` can be found from here, without loading it. */
function webauthnServerInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve(PACKAGE)
    return true
  } catch {
    return false
  }
}

/** An http(s) origin, as `URL.origin` writes it. */
function originOf(fail: (message: string) => never, value: unknown): string {
  let parsed: URL | undefined
  try {
    parsed = typeof value === 'string' ? new URL(value) : undefined
  } catch {
    parsed = undefined
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || (parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search || parsed.hash) {
    return fail(`relayingParty.origin must be an origin such as "https://example.com" (no path); got ${JSON.stringify(value)}.`)
  }
  const host = parsed.hostname
  // Browsers offer WebAuthn to secure contexts only: https, or http on a loopback name.
  if (parsed.protocol === 'http:' && host !== 'localhost' && !host.endsWith('.localhost')) {
    return fail(`the origin ${parsed.origin} is plain http, where browsers offer no passkeys (only https, or http://localhost in development).`)
  }
  return parsed.origin
}
