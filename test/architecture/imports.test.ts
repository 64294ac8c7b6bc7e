/**
 * The layout of `src/` stays one-way: no import circles (a circle means two modules that cannot be
 * understood, tested or loaded one without the other), the engines never call up into the route
 * actions or the HTTP glue, the core never imports a feature (src/features/<name>/), and a feature
 * imports another only when its declaration says it builds on it (`Feature.requires`).
 * docs/development.md maps the floors.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import { FEATURES } from '../../src/features/index.js'
import { importCircles, importGraph } from './imports.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const graph = importGraph(SRC)

/** The files of `from` that import a file of `to` (folders of src/, or top-level files without `.ts`). */
function arrows(from: string, to: string): string[] {
  const within = (file: string, place: string) => file === `${place}.ts` || file.startsWith(`${place}/`)
  return [...graph].flatMap(([file, targets]) => (within(file, from) ? targets.filter((target) => within(target, to)).map((target) => `${file} -> ${target}`) : []))
}

describe('src/ imports', () => {
  it('reads a graph of the whole tree (the check below is not vacuous)', () => {
    expect(graph.size).toBeGreaterThan(100)
    expect(graph.get('http/router.ts')).toContain('actions/signin.ts')
    // Type-only imports count: they are dependencies of the design.
    expect(graph.get('events.ts')).toContain('config/types.ts')
  })

  it('has no circle', () => {
    expect(importCircles(graph)).toEqual([])
  })

  it('finds a circle when there is one', () => {
    const withCircle = new Map(graph)
    withCircle.set('types.ts', [...(graph.get('types.ts') ?? []), 'providers/oauth.ts'])
    expect(importCircles(withCircle)).toContainEqual(expect.arrayContaining(['types.ts', 'providers/oauth.ts']))
  })

  /** The files on top that compose the features: the package's entry points. */
  const COMPOSITIONS = new Set(['index.ts', 'features/index.ts', 'adapters/knex/index.ts'])
  const featureOf = (file: string) => /^features\/([^/]+)\//.exec(file)?.[1]
  const isCore = (file: string) => !COMPOSITIONS.has(file) && !featureOf(file) && !file.startsWith('providers/')

  it('the core never imports a feature', () => {
    const found = [...graph].flatMap(([file, targets]) => (isCore(file) ? targets.filter((target) => featureOf(target)).map((target) => `${file} -> ${target}`) : []))
    expect(found).toEqual([])
  })

  it('a feature imports another only when it declares it in requires', () => {
    const requires = new Map(FEATURES.map((feature) => [feature.name, new Set(feature.requires ?? [])]))
    const found = [...graph].flatMap(([file, targets]) => {
      const own = featureOf(file)
      if (!own) return []
      return targets.filter((target) => {
        const other = featureOf(target)
        return other !== undefined && other !== own && !requires.get(own)?.has(other)
      }).map((target) => `${file} -> ${target}`)
    })
    expect(found).toEqual([])
  })

  it('finds a feature the core imports, and an undeclared one a feature imports (the checks above are not vacuous)', () => {
    expect(featureOf('features/passkey/routes/page.ts')).toBe('passkey')
    expect(isCore('http/router.ts')).toBe(true)
    expect(isCore('features/index.ts')).toBe(false)
    expect(FEATURES.find((feature) => feature.name === 'passkey')?.requires ?? []).not.toContain('two-factor')
    // The passkeys page asks whether the user has a further factor through the core, not two-factor's module.
    expect(graph.get('features/passkey/routes/page.ts')).toContain('sign-in/further-factor.ts')
  })

  it('registers every feature folder, under the folder name', () => {
    const folders = new Set([...graph.keys()].map(featureOf).filter((name): name is string => name !== undefined))
    expect([...folders].sort()).toEqual(FEATURES.map((feature) => feature.name).sort())
  })

  it.each([
    ['types', 'providers'],
    ['types', 'config'],
    ['errors', 'config'],
    // The engines (openid-client's, the WebAuthn ceremony's) return results to the routes that call them.
    ...['access-token', 'authorize', 'callback', 'checks', 'client', 'errors', 'refresh', 'refresh-grant', 'shared-refresh'].flatMap((file) => [
      [`features/oauth/${file}`, 'actions'],
      [`features/oauth/${file}`, 'http'],
    ]),
    ...['library', 'options', 'response', 'verify', 'challenge'].flatMap((file) => [
      [`features/passkey/${file}`, 'actions'],
      [`features/passkey/${file}`, 'http'],
    ]),
    ['session', 'actions'],
    ['security', 'actions'],
    ['actions', 'api'],
    ['http', 'api'],
    ['providers', 'config'],
  ])('%s/ never imports %s/', (from, to) => {
    expect(arrows(from, to)).toEqual([])
  })
})
