/**
 * The built-in provider catalogue (src/providers/<id>.ts), every provider held to the same bar:
 *
 * - a fixture, test/providers/fixtures/<id>.json, written from the provider's documentation (its URL
 *   in `docs`), whose every case maps exactly: `profile(case.profile, case.tokens)` is `case.user`;
 * - usable bare: with `AUTH_<ID>_ID`, `_SECRET` (and `_ISSUER` when the issuer is not fixed) in the
 *   environment it resolves at init, and without the secret init fails naming `AUTH_<ID>_SECRET`;
 * - overrides win over the defaults and the environment, `authorization.params` merged key by key;
 * - `quirks`, one line for the table, and a discovery run (test/providers/discovery.test.ts) for
 *   every `oidc` provider, or `"discovery": false` with the reason;
 * - docs/providers.md is the table the modules generate (scripts/providers-table.ts).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from '@jest/globals'
import { InvalidConfigurationError } from 'portcullis'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import { envPrefix, type OAuthProvider } from '../../src/features/oauth/provider.js'
import {
  catalogueIds,
  catalogueRows,
  loadProviderModule,
  REGENERATE_COMMAND,
  renderProvidersMarkdown,
  TABLE_PATH,
  type ProviderModule,
} from '../../scripts/providers-table-lib.js'
import { isolateEnv } from '../support/env.js'
import { readFixture } from '../support/provider-fixtures.js'
import { SECRET } from '../support/flow.js'

const ids = catalogueIds()
const modules = new Map<string, ProviderModule>(await Promise.all(ids.map(async (id) => [id, await loadProviderModule(id)] as const)))
const extraEnv = [...modules.values()].flatMap((module) => (Array.isArray(module.extraEnv) ? (module.extraEnv as string[]) : []))
isolateEnv([...ids.flatMap((id) => ['ID', 'SECRET', 'ISSUER'].map((suffix) => `${envPrefix(id)}_${suffix}`)), ...extraEnv, 'AUTH_REDIRECT_PROXY_URL'])

const silentLogger = { error: () => {}, warn: () => {}, debug: () => {} }
const ENV_ISSUER = 'https://issuer.example.com/tenant-from-env'

/** Resolves `providers` as Portcullis() does at init, against process.env. */
function resolvedProvider(entry: ProviderModule['default'] | ReturnType<ProviderModule['default']>, id: string): OAuthProvider {
  const config = resolveConfig({ secret: SECRET, logger: silentLogger, providers: [entry] }, FEATURES)
  return config.providerById.get(id) as OAuthProvider
}

/** Puts the standard env variables of provider `id` in process.env (`without` leaves some out). */
function setEnv(id: string, needsIssuer: boolean, without: string[] = []): void {
  const prefix = envPrefix(id)
  const values: Record<string, string> = { [`${prefix}_ID`]: `${id}-env-client-id`, [`${prefix}_SECRET`]: `${id}-env-client-secret` }
  if (needsIssuer) values[`${prefix}_ISSUER`] = ENV_ISSUER
  for (const [name, value] of Object.entries(values)) if (!without.includes(name)) process.env[name] = value
}

it('finds the built-in providers (GitHub and Google at least) and nothing generic', () => {
  expect(ids).toEqual(expect.arrayContaining(['github', 'google']))
  for (const generic of ['oauth', 'oidc', 'credentials', 'email', 'nodemailer', 'passkey', 'passport', 'password', 'sso', 'overrides']) expect(ids).not.toContain(generic)
})

describe.each(ids)('%s', (id) => {
  const module = modules.get(id)!
  const fixture = readFixture(id)
  const bare = () => module.default()
  const publicClient = () => bare().client?.token_endpoint_auth_method === 'none'
  const needsIssuer = () => bare().type === 'oidc' && bare().issuer === undefined

  it('has a fixture written from the provider documentation, with at least one case', () => {
    expect(fixture).toBeDefined()
    expect(fixture!.docs).toMatch(/^https:\/\/\S+$/)
    expect(Array.isArray(fixture!.cases) && fixture!.cases.length).toBeGreaterThan(0)
  })

  it('exports a provider function whose bare call has this id, a name and a type, and a one-line quirks string', () => {
    expect(typeof module.default).toBe('function')
    const config = bare()
    expect(config.id).toBe(id)
    expect(typeof config.name).toBe('string')
    expect(config.name.length).toBeGreaterThan(0)
    expect(['oauth', 'oidc']).toContain(config.type)
    expect(typeof module.quirks).toBe('string')
    expect(module.quirks).not.toMatch(/[|\n]/)
    // A user's options are never mutated, and two calls share nothing mutable.
    expect(module.default()).not.toBe(config)
  })

  it('maps every documented response of the fixture to exactly the user it names', async () => {
    for (const testCase of fixture?.cases ?? []) {
      const config = module.default(testCase.options ?? {})
      expect(typeof config.profile).toBe('function')
      const user = await config.profile!(structuredClone(testCase.profile), structuredClone(testCase.tokens ?? {}))
      // The case's name in the failure says which documented response broke.
      expect({ case: testCase.name, user }).toStrictEqual({ case: testCase.name, user: testCase.user })
      expect(typeof user.id).toBe('string')
    }
  })

  it('resolves bare at init from the environment', () => {
    setEnv(id, needsIssuer())
    const provider = resolvedProvider(module.default, id)
    const prefix = envPrefix(id)
    expect(provider.clientId).toBe(process.env[`${prefix}_ID`])
    if (!publicClient()) expect(provider.clientSecret).toBeDefined()
    if (needsIssuer()) expect(provider.issuer).toBe(ENV_ISSUER)
    if (provider.type === 'oidc') expect(provider.issuer).toMatch(/^https:\/\//)
    else {
      expect(provider.authorization.url).toMatch(/^https:\/\//)
      expect(provider.token.url ?? provider.token.request).toBeDefined()
    }
  })

  it('fails at init without its secret, naming the env variable to set', () => {
    setEnv(id, needsIssuer(), [`${envPrefix(id)}_SECRET`])
    if (publicClient()) {
      expect(resolvedProvider(module.default, id).clientSecret).toBeUndefined()
      return
    }
    expect(() => resolvedProvider(module.default, id)).toThrow(InvalidConfigurationError)
    expect(() => resolvedProvider(module.default, id)).toThrow(`${envPrefix(id)}_SECRET`)
  })

  it('fails at init without its client id, naming the env variable to set', () => {
    setEnv(id, needsIssuer(), [`${envPrefix(id)}_ID`])
    expect(() => resolvedProvider(module.default, id)).toThrow(`${envPrefix(id)}_ID`)
  })

  it('lets overrides win over defaults and environment, merging authorization params key by key', () => {
    setEnv(id, needsIssuer())
    const defaults = resolvedProvider(module.default, id)
    const overridden = resolvedProvider(module.default({ clientId: 'override-client-id', authorization: { params: { prompt: 'login' } } }), id)
    expect(overridden.clientId).toBe('override-client-id')
    expect(overridden.authorization.url).toBe(defaults.authorization.url)
    expect(overridden.authorization.params).toEqual({ ...defaults.authorization.params, prompt: 'login' })
    if (defaults.authorization.params.scope !== undefined) expect(overridden.authorization.params.scope).toBe(defaults.authorization.params.scope)
  })

  it('is exercised through discovery when it is an OpenID provider, or says why not', () => {
    if (fixture?.discovery === undefined || fixture.discovery === false) {
      // Every oidc provider is run once through discovery unless its fixture explains why that means nothing.
      if (bare().type === 'oidc') expect(fixture?.why).toEqual(expect.stringMatching(/\S/))
      return
    }
    expect(typeof fixture.discovery).toBe('object')
  })
})

it(`docs/providers.md is the table the code generates (regenerate: ${REGENERATE_COMMAND})`, async () => {
  const generated = renderProvidersMarkdown(await catalogueRows())
  let written = ''
  try {
    written = readFileSync(TABLE_PATH, 'utf8')
  } catch {
    // Missing: the comparison below fails and names the command.
  }
  if (written !== generated) throw new Error(`docs/providers.md is out of date with src/providers: run ${REGENERATE_COMMAND}.`)
})
