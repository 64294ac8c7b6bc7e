/**
 * What each feature declares (src/features/<name>/feature.ts) is true of the code: its adapter
 * methods are KnexAdapter's, its events and error types are ones Portcullis has, its routes are
 * the router's and nobody else's, a page is a GET and a CSRF-checked route a POST.
 */
import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from '@jest/globals'
import knexFactory from 'knex'
import { KnexAdapter } from '../../src/adapters/knex/index.js'
import { FEATURES } from '../../src/features/index.js'

const source = (path: string) => readFileSync(new URL(`../../src/${path}`, import.meta.url), 'utf8')

/** The core's file and each wing's of one name (`errors.ts`, `types.ts`): a wing declares its own entries there. */
const declaring = (file: string) => [file, ...FEATURES.map((feature) => `features/${feature.name}/${file}`).filter((path) => existsSync(new URL(`../../src/${path}`, import.meta.url)))]
/** The keys of interface `name` in those files, merged as TypeScript merges them. */
const keysOf = (file: string, name: string) =>
  new Set(declaring(file).flatMap((path) => [...source(path).matchAll(new RegExp(`interface ${name} \\{([\\s\\S]*?)\\n\\s*\\}`, 'g'))].flatMap((body) => [...(body[1] ?? '').matchAll(/^ {2,4}'?([\w*]+)'?\??:/gm)].map((match) => match[1]))))
/** The members of `ErrorType` (the keys of `ErrorTypes`). */
const ERROR_TYPES = keysOf('errors.ts', 'ErrorTypes')
/** The keys of `EventsOptions`. */
const EVENTS = keysOf('types.ts', 'EventsOptions')

describe('the features as declared', () => {
  it('read the lists they are checked against (the checks below are not vacuous)', () => {
    expect(ERROR_TYPES).toContain('TwoFactor')
    // A wing's own, declared in its folder.
    expect(ERROR_TYPES).toContain('WebAuthnVerificationError')
    expect(ERROR_TYPES).not.toContain('EmailNotVerified')
    expect(EVENTS).toContain('signIn')
    expect(EVENTS).toContain('passkeyAdded')
    expect(EVENTS).not.toContain('sessionReads')
    // An event a feature adds by module augmentation (features/account/types.ts).
    expect(EVENTS).toContain('userDeleted')
  })

  it.each(FEATURES.map((feature) => [feature.name, feature] as const))('%s: its adapter methods are KnexAdapter’s', async (_name, feature) => {
    const db = knexFactory({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    try {
      const adapter = KnexAdapter(db) as unknown as Record<string, unknown>
      expect((feature.adapterMethods ?? []).filter((method) => typeof adapter[method] !== 'function')).toEqual([])
    } finally {
      await db.destroy()
    }
  })

  it.each(FEATURES.map((feature) => [feature.name, feature] as const))('%s: its events and error types exist', (_name, feature) => {
    expect((feature.events ?? []).filter((name) => !EVENTS.has(name))).toEqual([])
    expect((feature.errors ?? []).filter((type) => !ERROR_TYPES.has(type))).toEqual([])
  })

  it('gives every route one feature, a page only on GET and a CSRF check only on POST', () => {
    const routes = FEATURES.flatMap((feature) => (feature.routes ?? []).map((route) => ({ ...route, feature: feature.name })))
    const keys = routes.map((route) => `${route.method} ${route.path}`)
    expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([])
    expect(routes.filter((route) => route.page && route.method !== 'GET').map((route) => route.path)).toEqual([])
    expect(routes.filter((route) => route.csrf && route.method !== 'POST').map((route) => route.path)).toEqual([])
    // Every POST route of a feature changes state, so each is declared CSRF-checked, or says what else
    // binds it to this browser's request (another site's answer, such as a SAML response: `boundBy`).
    expect(routes.filter((route) => route.method === 'POST' && !route.csrf && !route.boundBy).map((route) => route.path)).toEqual([])
    expect(routes.filter((route) => route.boundBy !== undefined && (route.csrf || route.method !== 'POST')).map((route) => route.path)).toEqual([])
  })

  it('names its folder, and routes the core does not serve itself', () => {
    const core = ['/providers', '/csrf', '/signin', '/signout', '/error', '/verify-request', '/session']
    for (const feature of FEATURES) {
      expect(source(`features/${feature.name}/feature.ts`)).toContain(`name: '${feature.name}'`)
      expect((feature.routes ?? []).filter((route) => core.includes(route.path)).map((route) => route.path)).toEqual([])
    }
  })
})
