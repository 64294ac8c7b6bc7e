/**
 * Sign in with Apple, an OpenID Provider (`https://appleid.apple.com`) with three quirks:
 *
 * - With the `name` or `email` scope, Apple answers with `response_mode=form_post`: the callback
 *   arrives as a cross-site POST, which the engine turns into a same-site GET to read its cookies.
 * - The user's name is sent once, on the first sign-in, as a `user` JSON field of that POST, never
 *   in the ID token. Keep it then (with a database adapter the user row keeps it); later sign-ins
 *   have `name: null`. The e-mail address always comes from the validated ID token.
 * - The client secret is a JWT (ES256) you sign with a key from your Apple developer account. Give
 *   the key (`teamId`, `keyId`, `privateKey`, or `AUTH_APPLE_TEAM_ID`, `AUTH_APPLE_KEY_ID`,
 *   `AUTH_APPLE_PRIVATE_KEY`) and the provider signs a short-lived secret when one is needed; or give
 *   a secret you signed yourself as `AUTH_APPLE_SECRET` (Apple accepts at most six months: you must
 *   renew it).
 *
 * @example
 * ```ts
 * import Portcullis from 'portcullis'
 * import Apple from 'portcullis/providers/apple'
 *
 * // AUTH_APPLE_ID=com.example.web (the Services ID), AUTH_APPLE_TEAM_ID=ABCDE12345,
 * // AUTH_APPLE_KEY_ID=XYZ987WVU6, AUTH_APPLE_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\n..." (the .p8 file).
 * // Register https://<your-site>/api/auth/callback/apple as a Return URL of the Services ID
 * // (Apple requires https, also in development).
 * const { handlers, auth } = Portcullis({ providers: [Apple] })
 * ```
 * @see https://developer.apple.com/documentation/sign_in_with_apple/sign_in_with_apple_rest_api
 * @see https://developer.apple.com/documentation/accountorganizationaldatasharing/creating-a-client-secret
 * @see https://developer.apple.com/documentation/sign_in_with_apple/request_an_authorization_to_the_sign_in_with_apple_server
 * @see https://developer.apple.com/documentation/authenticationservices/authenticating-users-with-sign-in-with-apple
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto'
import { InvalidConfigurationError } from '../errors.js'
import type { ClientSecretFunction, UserinfoContext } from './oauth.js'
import type { OIDCConfig, OIDCUserConfig } from './oidc.js'
import { assertOptions, standardClaimsUser, withOverrides } from './overrides.js'

/** For the providers table (docs/providers.md). */
export const quirks = 'form_post; the name only on the first sign-in (user field); client secret is an ES256 JWT signed from a key'

/** Env variables read beyond `AUTH_APPLE_ID` and `AUTH_APPLE_SECRET`: the key that signs the client secret. */
export const extraEnv = ['AUTH_APPLE_TEAM_ID', 'AUTH_APPLE_KEY_ID', 'AUTH_APPLE_PRIVATE_KEY'] as const

const APPLE_ISSUER = 'https://appleid.apple.com'
/** How long a generated client secret is valid; Apple accepts up to 15777000 s (six months). */
const SECRET_LIFETIME_SECONDS = 60 * 60
/** A cached secret is replaced when it has less than this left, so none expires mid-request. */
const SECRET_RENEW_MARGIN_SECONDS = 5 * 60
/** Apple's documented maximum lifetime of a client secret. */
export const APPLE_MAX_SECRET_LIFETIME_SECONDS = 15_777_000

/**
 * The name Apple sends in the `user` form field on the first sign-in (names only: the field's
 * `email` is ignored, the ID token's is validated).
 * @see https://developer.apple.com/documentation/sign_in_with_apple/request_an_authorization_to_the_sign_in_with_apple_server#3262045
 */
export interface AppleUserName {
  firstName?: string
  lastName?: string
}

/**
 * The claims of Apple's ID token, plus `user` when Apple sent the name (first sign-in only).
 * @see https://developer.apple.com/documentation/sign_in_with_apple/authenticating-users-with-sign-in-with-apple#Retrieve-the-users-information-from-Apple-ID-servers
 */
export interface AppleProfile {
  /** `https://appleid.apple.com` */
  iss: string
  /** Your Services ID (the client id). */
  aud: string
  /** The user's stable id for your team: use this as the key. */
  sub: string
  iat: number
  exp: number
  nonce?: string
  nonce_supported?: boolean
  /** With the `email` scope: the user's address, or a private relay address (`...@privaterelay.appleid.com`). */
  email?: string
  /** Apple sends `true` or the string `"true"`. */
  email_verified?: boolean | 'true' | 'false'
  is_private_email?: boolean | 'true' | 'false'
  /** 0 unsupported, 1 unknown, 2 likely real. */
  real_user_status?: 0 | 1 | 2
  transfer_sub?: string
  at_hash?: string
  auth_time?: number
  c_hash?: string
  /** From the callback's `user` field, first sign-in only. */
  user?: { name: AppleUserName }
  [claim: string]: unknown
}

/** The key that signs the client secret (Certificates, Identifiers & Profiles → Keys). */
export interface AppleSigningKey {
  /** Your 10-character Team ID (top right of the developer account). Env: `AUTH_APPLE_TEAM_ID`. */
  teamId: string
  /** The key's 10-character Key ID. Env: `AUTH_APPLE_KEY_ID`. */
  keyId: string
  /**
   * The `.p8` file's contents (PKCS #8 PEM; in an env file, `\n` escapes are accepted), or a
   * KeyObject. Env: `AUTH_APPLE_PRIVATE_KEY`.
   */
  privateKey: string | KeyObject
}

/** Overrides of the Apple provider, plus the key that signs the client secret. */
export interface AppleUserConfig extends OIDCUserConfig<AppleProfile>, Partial<AppleSigningKey> {}

/**
 * The Apple provider.
 *
 * Defaults: scope `openid name email` with `response_mode=form_post`; `client_secret_post`; PKCE and
 * nonce; no userinfo endpoint (Apple has none): the profile is the ID token's claims plus the name
 * from the `user` field of the first sign-in. `email` is mapped only when Apple says it is verified.
 *
 * The client secret, first found wins: `clientSecret` passed; the signing key (`teamId`, `keyId`,
 * `privateKey` passed, else `AUTH_APPLE_TEAM_ID`, `AUTH_APPLE_KEY_ID`, `AUTH_APPLE_PRIVATE_KEY`),
 * from which a secret valid one hour is signed and renewed as it runs out; `AUTH_APPLE_SECRET`.
 *
 * @param options Overrides, shallowly merged over the defaults (yours win), except
 *   `authorization.params`, merged key by key.
 * @throws InvalidConfigurationError when only part of the signing key is given, or the key is not
 *   an EC P-256 private key.
 * @example
 * ```ts
 * Apple({ teamId: 'ABCDE12345', keyId: 'XYZ987WVU6', privateKey: readFileSync('AuthKey_XYZ987WVU6.p8', 'utf8') })
 * ```
 */
export default function Apple(options: AppleUserConfig = {}): OIDCConfig<AppleProfile> {
  assertOptions('Apple', options)
  const { teamId, keyId, privateKey, ...overrides } = options
  const defaults: OIDCConfig<AppleProfile> = {
    id: 'apple',
    name: 'Apple',
    type: 'oidc',
    issuer: APPLE_ISSUER,
    authorization: { params: { scope: 'openid name email', response_mode: 'form_post' } },
    client: { token_endpoint_auth_method: 'client_secret_post' },
    // Apple has no userinfo endpoint; the name comes with the callback, once.
    userinfo: { request: appleUserFromCallback },
    profile: (profile) => standardClaimsUser(profile, {
      name: displayName(profile.user?.name),
      // Apple sends email_verified as a boolean or the string "true".
      emailVerified: profile.email_verified === true || profile.email_verified === 'true',
      image: null,
    }),
  }
  if (overrides.clientSecret === undefined) {
    const key = signingKey({ teamId, keyId, privateKey })
    if (key) defaults.clientSecret = cachedClientSecret(key)
  }
  return withOverrides(defaults, overrides)
}

/**
 * Signs an Apple client secret: a JWT (ES256, header `kid`) with `iss` the team id, `sub` the client
 * (Services) id, `aud` `https://appleid.apple.com`, `iat` now and `exp` `expiresIn` seconds later.
 * For a secret to store as `AUTH_APPLE_SECRET` (renew it before it expires); the provider signs
 * its own when given the key.
 *
 * @param input The signing key (`teamId`, `keyId`, `privateKey`) and the `clientId`.
 * @param input.expiresIn Seconds, at most 15777000 (six months). Default one hour.
 * @param input.now Seconds since the epoch. Default: the clock.
 * @see https://developer.apple.com/documentation/accountorganizationaldatasharing/creating-a-client-secret
 * @example
 * ```ts
 * const secret = createAppleClientSecret({ teamId, keyId, privateKey, clientId: 'com.example.web', expiresIn: 180 * 24 * 3600 })
 * ```
 */
export function createAppleClientSecret(input: AppleSigningKey & { clientId: string; expiresIn?: number; now?: number }): string {
  const expiresIn = input.expiresIn ?? SECRET_LIFETIME_SECONDS
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > APPLE_MAX_SECRET_LIFETIME_SECONDS) {
    throw new TypeError(`createAppleClientSecret: expiresIn must be a whole number of seconds from 1 to ${APPLE_MAX_SECRET_LIFETIME_SECONDS} (Apple's limit); got ${String(expiresIn)}.`)
  }
  if (typeof input.clientId !== 'string' || !input.clientId) throw new TypeError('createAppleClientSecret: clientId (the Services ID) is required.')
  const key = typeof input.privateKey === 'string' ? parsePrivateKey(input.privateKey, 'privateKey') : input.privateKey
  const iat = input.now ?? Math.floor(Date.now() / 1000)
  const header = { alg: 'ES256', kid: input.keyId }
  const payload = { iss: input.teamId, iat, exp: iat + expiresIn, aud: APPLE_ISSUER, sub: input.clientId }
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`
  // JWS wants the raw r || s signature (RFC 7518 §3.4), not DER.
  const signature = sign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' })
  return `${signingInput}.${signature.toString('base64url')}`
}

type ParsedSigningKey = { teamId: string; keyId: string; privateKey: KeyObject }

/** The signing key from the options, else the env; `undefined` when neither gives any of it. */
function signingKey(given: Partial<AppleSigningKey>): ParsedSigningKey | undefined {
  const fromOptions = given.teamId !== undefined || given.keyId !== undefined || given.privateKey !== undefined
  const source = fromOptions
    ? { teamId: given.teamId, keyId: given.keyId, privateKey: given.privateKey, names: ['teamId', 'keyId', 'privateKey'] }
    : { teamId: process.env.AUTH_APPLE_TEAM_ID, keyId: process.env.AUTH_APPLE_KEY_ID, privateKey: process.env.AUTH_APPLE_PRIVATE_KEY, names: [...extraEnv] }
  const values = [source.teamId, source.keyId, source.privateKey]
  if (values.every((value) => value === undefined || value === '')) return undefined
  const missing = source.names.filter((_, index) => values[index] === undefined || values[index] === '')
  if (missing.length > 0) {
    throw new InvalidConfigurationError(`Provider "apple": the client secret is signed with your key, which needs ${source.names.join(', ')}; ${missing.join(', ')} missing.`)
  }
  if (typeof source.teamId !== 'string' || typeof source.keyId !== 'string') throw new TypeError('Apple(options): teamId and keyId must be strings.')
  const privateKey = typeof source.privateKey === 'string' ? parsePrivateKey(source.privateKey, source.names[2]!) : source.privateKey!
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new InvalidConfigurationError(`Provider "apple": ${source.names[2]} must be the EC P-256 private key of your .p8 file.`)
  }
  return { teamId: source.teamId, keyId: source.keyId, privateKey }
}

function parsePrivateKey(pem: string, name: string): KeyObject {
  try {
    // Env files often hold the PEM on one line with `\n` escapes.
    return createPrivateKey(pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem)
  } catch {
    throw new InvalidConfigurationError(`Provider "apple": ${name} is not a private key in PEM form; give the contents of the AuthKey_<key id>.p8 file.`)
  }
}

/** A secret signed on first use and again when it has less than the margin left. */
function cachedClientSecret(key: ParsedSigningKey): ClientSecretFunction {
  let cached: { secret: string; clientId: string; expiresAt: number } | undefined
  return ({ clientId }) => {
    const now = Math.floor(Date.now() / 1000)
    if (!cached || cached.clientId !== clientId || cached.expiresAt - now < SECRET_RENEW_MARGIN_SECONDS) {
      cached = { secret: createAppleClientSecret({ ...key, clientId, now }), clientId, expiresAt: now + SECRET_LIFETIME_SECONDS }
    }
    return cached.secret
  }
}

const MAX_NAME_LENGTH = 200

/**
 * The name from the `user` field Apple posts on the first sign-in:
 * `{"name":{"firstName":"…","lastName":"…"},"email":"…"}`. Anyone can post this field, so it is
 * read defensively: bounded, strings only, names only.
 */
function appleUserFromCallback({ params }: UserinfoContext): Pick<AppleProfile, 'user'> {
  const raw = params.get('user')
  if (!raw || raw.length > 4096) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return {}
  }
  const name = (parsed as { name?: unknown } | null)?.name
  if (!name || typeof name !== 'object') return {}
  const part = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim().slice(0, MAX_NAME_LENGTH) : undefined)
  const firstName = part((name as AppleUserName).firstName)
  const lastName = part((name as AppleUserName).lastName)
  if (!firstName && !lastName) return {}
  return { user: { name: { ...(firstName && { firstName }), ...(lastName && { lastName }) } } }
}

function displayName(name: AppleUserName | undefined): string | null {
  const full = [name?.firstName, name?.lastName].filter(Boolean).join(' ')
  return full || null
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url')
}
