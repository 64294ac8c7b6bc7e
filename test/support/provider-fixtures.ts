/**
 * The fixtures of the provider catalogue (test/providers/fixtures/<id>.json): profile responses
 * written from each provider's documentation, the user each must map to, and how the provider is
 * signed in through discovery against the in-process IdP. The format is described in
 * test/providers/catalogue.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../scripts/providers-table-lib.js'

/** One documented response and the user it must map to. */
export interface ProfileCase {
  name: string
  /** Passed to the provider function. */
  options?: Record<string, unknown>
  /** The provider's documented response (values invented, shape from the docs). */
  profile: Record<string, unknown>
  tokens?: Record<string, unknown>
  /** What `profile(profile, tokens)` must return, exactly. */
  user: Record<string, unknown>
}

/** A sign-in through discovery against the in-process oidc-provider with the provider's issuer shape. */
export interface DiscoveryRun {
  /** The issuer's path, e.g. `/realms/test`. Default: none. */
  issuerPath?: string
  /** Passed to the provider function after `issuer`, `clientId`, `clientSecret`. */
  options?: Record<string, unknown>
  /** Provider-specific claims of the test account (released with the `openid` scope). */
  claims?: Record<string, unknown>
}

/** test/providers/fixtures/<id>.json */
export interface ProviderFixture {
  /** The documentation page the response shape is written from. */
  docs: string
  cases: ProfileCase[]
  /** `false` (with `why`) where a discovery run is not meaningful, e.g. for `oauth` providers. */
  discovery?: DiscoveryRun | false
  why?: string
}

export const FIXTURES_DIR = join(ROOT, 'test', 'providers', 'fixtures')

/** The fixture of provider `id`, or `undefined` when there is none. */
export function readFixture(id: string): ProviderFixture | undefined {
  const path = join(FIXTURES_DIR, `${id}.json`)
  if (!existsSync(path)) return undefined
  return JSON.parse(readFileSync(path, 'utf8')) as ProviderFixture
}
