/**
 * What every built-in provider shares, so that its own file holds only what is its own: the check
 * of the options it is called with, how it takes the app's overrides, and the mapping of the OpenID
 * Connect standard claims to the user.
 *
 * Internal (the package's exports close `portcullis/providers/overrides`); the built-ins import it.
 */
import type { OAuthConfig } from './oauth.js'
import type { OIDCConfig } from './oidc.js'

type Authorization = OAuthConfig['authorization']

/**
 * Throws the `TypeError` every built-in gives when called with options that are not an object
 * (`GitHub(null)`). A function of its own rather than part of {@link withOverrides}: several
 * built-ins take their own fields out of the options (`domain`, `tenantId`, `userPoolId`) before
 * they build the defaults, and the check must come first.
 *
 * @param name The provider function as the app calls it (`'MicrosoftEntraID'`): the message names it.
 * @param options What the app passed.
 * @example
 * ```ts
 * assertOptions('Keycloak', options) // TypeError: Keycloak(options): options must be an object.
 * ```
 */
export function assertOptions(name: string, options: unknown): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${name}(options): options must be an object.`)
}

/**
 * How a built-in provider takes the app's overrides (`GitHub({ clientId, ... })`): shallowly over
 * the defaults, the app's values winning, except `authorization`, whose `params` merge key by key
 * (so adding `prompt` keeps the default `scope`) and whose string form replaces only the URL. An
 * explicit `undefined` (e.g. `clientId: process.env.UNSET`) keeps the default.
 *
 * @returns `defaults` with `overrides` applied; the type stays the built-in's.
 */
export function withOverrides<C extends OAuthConfig<never> | OIDCConfig<never>>(defaults: C, overrides: Partial<Omit<C, 'type'>>): C {
  const given = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)) as Partial<C>
  return { ...defaults, ...given, authorization: mergeAuthorization(defaults.authorization, given.authorization), type: defaults.type }
}

function mergeAuthorization(defaults: Authorization, given: Authorization): Authorization {
  if (given === undefined) return defaults
  const base = typeof defaults === 'string' ? { url: defaults } : (defaults ?? {})
  const over = typeof given === 'string' ? { url: given } : given
  return { ...base, ...over, url: over.url ?? base.url, params: { ...base.params, ...over.params } }
}

/**
 * The standard claims {@link standardClaimsUser} reads.
 * @see https://openid.net/specs/openid-connect-core-1_0.html#StandardClaims
 */
export interface StandardClaims {
  sub: string
  name?: string | null
  preferred_username?: string | null
  email?: string | null
  email_verified?: unknown
  picture?: string | null
}

/**
 * What a built-in's `profile()` returns. `emailVerified` is `true` only on the provider's word (a
 * claim or an API that gives only verified addresses): the core drops an address not marked so.
 * A type, not an interface, so that it fits `User` and its index signature.
 */
export type BuiltInUser = {
  id: string
  name: string | null
  email: string | null
  emailVerified: boolean
  image: string | null
}

/**
 * The user of an OpenID Connect profile: `id` the `sub`, `name` the `name` (else
 * `preferred_username`), `email`, `emailVerified` only when `email_verified` is the boolean `true`,
 * `image` the `picture`; absent claims become `null`. `quirks` replace the fields where a provider
 * differs; each provider documents its mapping, quirks included, in its own file.
 *
 * @param profile The ID token's claims, completed from userinfo.
 * @param quirks The fields this provider maps its own way, e.g. `{ image: null }` where it has no picture claim.
 * @example
 * ```ts
 * profile: (profile) => standardClaimsUser(profile, { name: profile.name ?? profile.nickname ?? null })
 * ```
 * @see https://openid.net/specs/openid-connect-core-1_0.html#StandardClaims
 */
export function standardClaimsUser(profile: StandardClaims, quirks: Partial<BuiltInUser> = {}): BuiltInUser {
  return {
    id: profile.sub,
    name: profile.name ?? profile.preferred_username ?? null,
    email: profile.email ?? null,
    emailVerified: profile.email_verified === true,
    image: profile.picture ?? null,
    ...quirks,
  }
}
