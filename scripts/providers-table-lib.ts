/**
 * The provider catalogue as data: which modules of src/providers are built-in providers, what each
 * one is (id, name, type, default scopes, env variables, quirks), read from the modules themselves,
 * and the Markdown table of docs/providers.md. Shared by scripts/providers-table.ts, which writes
 * the file, and test/providers/catalogue.test.ts, which fails when the file is out of date.
 *
 * A provider module contributes:
 * - its default export, called bare (`Provider()`), as the resolver calls it for `providers: [Provider]`;
 * - `export const quirks: string`, one short line ('' when none);
 * - optionally `export const extraEnv: readonly string[]`, env variables it reads beyond the standard
 *   `AUTH_<ID>_ID|SECRET|ISSUER` (e.g. Apple's key material).
 */
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { envPrefix } from '../src/features/oauth/provider.js'
import type { OAuthConfig } from '../src/providers/oauth.js'
import type { OIDCConfig } from '../src/providers/oidc.js'

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
/** Where the provider modules live. */
export const PROVIDERS_DIR = join(ROOT, 'src', 'providers')
/** The generated document. */
export const TABLE_PATH = join(ROOT, 'docs', 'providers.md')
/** How to regenerate it (named in the test's failure). */
export const REGENERATE_COMMAND = 'npx tsx scripts/providers-table.ts (npm run docs:providers)'

/** Modules of src/providers that are building blocks, not built-in providers. */
export const GENERIC_MODULES: readonly string[] = ['oauth', 'oidc', 'credentials', 'email', 'email-code', 'nodemailer', 'passkey', 'passport', 'password', 'sso', 'overrides']

/** A built-in provider module as it is imported. */
export interface ProviderModule {
  default: (options?: Record<string, unknown>) => OAuthConfig | OIDCConfig
  quirks?: unknown
  extraEnv?: unknown
}

/** One row of the table. */
export interface ProviderRow {
  /** The module's file name, which is also the provider id. */
  id: string
  name: string
  type: 'oauth' | 'oidc'
  /** `authorization.params.scope` of the bare provider ('' when it sets none). */
  scopes: string
  /** Env variables the provider reads: `AUTH_<ID>_ID`, `_SECRET` (unless public), `_ISSUER` (when no fixed issuer), extras. */
  env: string[]
  quirks: string
}

/** The ids (file names) of every built-in provider module, sorted. */
export function catalogueIds(): string[] {
  return readdirSync(PROVIDERS_DIR)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => file.slice(0, -'.ts'.length))
    .filter((id) => !GENERIC_MODULES.includes(id))
    .sort()
}

/** Imports one provider module (from the sources: the table describes the code in this checkout). */
export async function loadProviderModule(id: string): Promise<ProviderModule> {
  return (await import(pathToFileURL(join(PROVIDERS_DIR, `${id}.ts`)).href)) as ProviderModule
}

/** The standard env variables of a provider called bare, plus its `extraEnv`. */
export function envVariables(config: OAuthConfig | OIDCConfig, extraEnv: unknown = []): string[] {
  const prefix = envPrefix(config.id)
  const variables = [`${prefix}_ID`]
  if (config.client?.token_endpoint_auth_method !== 'none') variables.push(`${prefix}_SECRET`)
  if (config.type === 'oidc' && config.issuer === undefined) variables.push(`${prefix}_ISSUER`)
  if (Array.isArray(extraEnv)) variables.push(...extraEnv.filter((name): name is string => typeof name === 'string'))
  return variables
}

/** The table row of a module, from the provider it returns when called bare. */
export function providerRow(id: string, module: ProviderModule): ProviderRow {
  const config = module.default()
  const authorization = config.authorization
  const scope = typeof authorization === 'object' ? authorization.params?.scope : undefined
  return {
    id,
    name: config.name,
    type: config.type,
    scopes: typeof scope === 'string' ? scope : '',
    env: envVariables(config, module.extraEnv),
    quirks: typeof module.quirks === 'string' ? module.quirks : '',
  }
}

/** Every row, in id order. */
export async function catalogueRows(): Promise<ProviderRow[]> {
  const rows: ProviderRow[] = []
  for (const id of catalogueIds()) rows.push(providerRow(id, await loadProviderModule(id)))
  return rows
}

const code = (text: string) => (text ? `\`${text}\`` : '')
/** Table cells may not hold `|` or line breaks. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ')

/** docs/providers.md for `rows`. */
export function renderProvidersMarkdown(rows: readonly ProviderRow[]): string {
  const lines = [
    '# Built-in OAuth and OpenID Connect providers',
    '',
    '<!-- Generated from src/providers by scripts/providers-table.ts: do not edit by hand. -->',
    '<!-- Regenerate with `npm run docs:providers`; test/providers/catalogue.test.ts checks it. -->',
    '',
    `${rows.length} providers. Import one as \`portcullis/providers/<id>\` and list it bare (\`providers: [GitHub]\`, configured from`,
    'the environment) or called with overrides (`GitHub({ clientId, authorization: { params: { prompt: \'consent\' } } })`).',
    'Register `https://<your-site>/api/auth/callback/<id>` as the redirect URI at the provider. Each module\'s JSDoc',
    'documents its options, profile type and quirks in full.',
    '',
    '- **Type** `oidc`: an OpenID Provider: endpoints discovered from the issuer, ID token validated. `oauth`: OAuth 2 with explicit endpoints.',
    '- **Environment variables**: read when the option is not passed; `AUTH_<ID>_ISSUER` is listed where the issuer differs per',
    '  tenant or deployment.',
    '',
    '| Provider | id | Type | Default scopes | Environment variables | Quirks |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) =>
      `| ${[cell(row.name), code(row.id), row.type, code(cell(row.scopes)), row.env.map(code).join(' '), cell(row.quirks)].join(' | ')} |`,
    ),
    '',
  ]
  return lines.join('\n')
}
