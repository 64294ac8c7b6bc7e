/**
 * The layout of `src/` stays one-way: no import circles (a circle means two modules that cannot be
 * understood, tested or loaded one without the other), and the engines never call up into the
 * route actions or the HTTP glue. The README's Development section maps the floors.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
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

  it.each([
    ['types', 'providers'],
    ['types', 'config'],
    ['errors', 'config'],
    ['oauth', 'actions'],
    ['oauth', 'http'],
    ['webauthn', 'actions'],
    ['webauthn', 'http'],
    ['session', 'actions'],
    ['security', 'actions'],
    ['actions', 'api'],
    ['http', 'api'],
    ['providers', 'config'],
  ])('%s/ never imports %s/', (from, to) => {
    expect(arrows(from, to)).toEqual([])
  })
})
