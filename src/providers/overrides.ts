/**
 * How a built-in provider takes the app's overrides (`GitHub({ clientId, ... })`): shallowly over
 * the defaults, the app's values winning, except `authorization`, whose `params` merge key by key
 * (so adding `prompt` keeps the default `scope`) and whose string form replaces only the URL. An
 * explicit `undefined` (e.g. `clientId: process.env.UNSET`) keeps the default.
 */
import type { OAuthConfig } from './oauth.js'
import type { OIDCConfig } from './oidc.js'

type Authorization = OAuthConfig['authorization']

/** `defaults` with `overrides` applied; the type stays the built-in's. */
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
