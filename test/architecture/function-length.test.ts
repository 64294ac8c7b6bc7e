/**
 * No function in `src/` is longer than about a screen (80 lines), so each can be read whole. A longer
 * one needs a reason, written in a comment right above it that starts `Long:`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from '@jest/globals'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))
const MAX_LINES = 80

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? tsFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
}

/** `file:line (n lines)` of each function body longer than `max` lines without a `Long:` note. */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - start + 1
      const noted = ts.getLeadingCommentRanges(text, node.getFullStart())?.some((range) => /^\/[/*]\s*Long:/.test(text.slice(range.pos, range.end)))
      if (lines > max && !noted) found.push(`${file.slice(SRC.length)}:${start + 1} (${lines} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('function length in src/', () => {
  it(`finds a function longer than ${MAX_LINES} lines (the check is not vacuous)`, () => {
    const body = Array.from({ length: MAX_LINES + 5 }, (_, i) => `  const a${i} = ${i}`).join('\n')
    expect(longFunctions(`${SRC}x.ts`, `function long() {\n${body}\n}`, MAX_LINES)).toEqual([`x.ts:1 (${MAX_LINES + 7} lines)`])
    expect(longFunctions(`${SRC}x.ts`, `// Long: a table.\nfunction long() {\n${body}\n}`, MAX_LINES)).toEqual([])
  })

  it(`has none longer than ${MAX_LINES} lines without a note`, () => {
    const long = tsFiles(SRC).flatMap((file) => longFunctions(file, readFileSync(file, 'utf8'), MAX_LINES))
    expect(long).toEqual([])
  })
})
