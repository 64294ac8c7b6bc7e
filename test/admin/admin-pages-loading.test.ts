/**
 * The admin pages load on their first request, never with the session read: what `Portcullis()`
 * loads of the admin wing (feature.ts and its static imports, transitively) holds none of its
 * routes/ or pages/, which the route declarations import with `import()`.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
// Static `import … from` and `export … from` only: `import()` is what loads later.
const STATIC = /(?:\bimport\s+(?:type\s+)?(?:[\w*{}\s,]+?\s+from\s+)?|\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s+)['"](\.{1,2}\/[^'"]+)['"]/g

/** The files (relative to src/) that loading `start` loads, `start` included. */
function staticClosure(start: string): Set<string> {
  const seen = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    const source = readFileSync(join(SRC, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '')
    for (const match of source.matchAll(STATIC)) visit(relative(SRC, resolve(SRC, dirname(file), match[1]!.replace(/\.js$/, '.ts'))))
  }
  visit(start)
  return seen
}

describe('the admin wing at init', () => {
  const loaded = [...staticClosure('features/admin/feature.ts')]

  it('reads the imports (the check below is not vacuous)', () => {
    expect(loaded).toContain('features/admin/api/context.ts')
    expect(loaded).toContain('features/admin/instance.ts')
    expect([...staticClosure('features/admin/routes/user.ts')]).toContain('features/admin/pages/user.ts')
  })

  it('loads none of its routes or pages', () => {
    expect(loaded.filter((file) => /^features\/admin\/(routes|pages)\//.test(file))).toEqual([])
  })
})
