/**
 * Every TypeScript code block of the README (and of docs/, once there) type-checks as a reader's app
 * would compile it: `strict`, `exactOptionalPropertyTypes` (which `tsc --init` turns on), against
 * the built declarations, with TypeScript 7 (what `npm install typescript` gives now; the packed
 * package's apps are checked with 6 and 7 in test/build/package.test.ts). A block is a module of its own; what it may use without importing is
 * only the app around it (test/docs/snippet-context.d.ts), never a name from a package: an error
 * class a snippet uses must be imported by the snippet. The examples' TypeScript (examples/) is
 * checked in the same program, with the same options.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The Markdown files whose snippets are checked. */
function documents(): string[] {
  const found = [join(root, 'README.md')]
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      // docs/api is generated from the TSDoc, whose examples are fragments of a call.
      if (entry.isDirectory()) entry.name !== 'api' && walk(join(dir, entry.name))
      else if (entry.name.endsWith('.md')) found.push(join(dir, entry.name))
    }
  }
  if (existsSync(join(root, 'docs'))) walk(join(root, 'docs'))
  return found
}

/** The examples' TypeScript files. */
function examples(): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue
      if (entry.isDirectory()) walk(join(dir, entry.name))
      else if (/\.(m|c)?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(join(dir, entry.name))
    }
  }
  walk(join(root, 'examples'))
  return found
}

/** The blocks marked `<!-- fragment -->`, as `file:line`: few, and each a piece of an app the docs show whole elsewhere. */
const FRAGMENTS = ['docs/getting-started.md:45']
const fragments: string[] = []

interface Snippet {
  /** `README.md:68`: the file and the line of the opening fence. */
  where: string
  code: string
}

function snippets(file: string): Snippet[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const found: Snippet[] = []
  let open: { line: number; body: string[] } | undefined
  lines.forEach((line, index) => {
    // A block after `<!-- fragment -->` is a piece of a larger one (FRAGMENTS): not compiled alone.
    if (!open && /^```(ts|typescript)\s*$/.test(line) && lines[index - 1]?.trim() !== '<!-- fragment -->') open = { line: index + 1, body: [] }
    else if (!open && /^```(ts|typescript)\s*$/.test(line)) fragments.push(`${relative(root, file)}:${index + 1}`)
    else if (open && /^```\s*$/.test(line)) {
      found.push({ where: `${relative(root, file)}:${open.line}`, code: open.body.join('\n') })
      open = undefined
    } else open?.body.push(line)
  })
  return found
}

describe('TypeScript snippets of the docs, and the examples', () => {
  let dir: string
  const all = documents().flatMap(snippets)

  it('skips only the blocks listed as fragments, and checks the rest', () => {
    expect(fragments).toEqual(FRAGMENTS)
    expect(all.length).toBeGreaterThan(20)
  })
  const fileOf = new Map<string, string>()
  let output = ''

  beforeAll(() => {
    // Inside node_modules/.cache, so that packages (express, knex) resolve from this checkout.
    mkdirSync(join(root, 'node_modules/.cache'), { recursive: true })
    dir = mkdtempSync(join(root, 'node_modules/.cache/portcullis-snippets-'))
    all.forEach((snippet, index) => {
      const name = `snippet-${index}.ts`
      fileOf.set(name, snippet.where)
      // `export {}` makes each block a module, as a file of an app is.
      writeFileSync(join(dir, name), `${snippet.code}\nexport {}\n`)
    })
    const dist = join(root, 'dist')
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          // The built declarations, as an installed package gives them.
          paths: { portcullis: [join(dist, 'index.d.ts')], 'portcullis/*': [join(dist, '*.d.ts'), join(dist, '*/index.d.ts')] },
        },
        files: [fileURLToPath(new URL('./snippet-context.d.ts', import.meta.url)), ...fileOf.keys(), ...examples()],
      }),
    )
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript7/bin/tsc'), '-p', dir], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
    // Name each error by the Markdown line it comes from.
    output = `${tsc.stdout}${tsc.stderr}`.replace(/\S*(snippet-\d+\.ts)\((\d+),\d+\)/g, (_, name: string, line: string) => {
      const [file, start] = fileOf.get(name)!.split(':')
      return `${file}:${Number(start) + Number(line)}`
    })
  }, 120_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('finds the snippets and the examples', () => {
    expect(all.length).toBeGreaterThan(10)
    expect(examples()).toContain(join(root, 'examples/express/app.ts'))
  })

  it('type-checks every snippet and example with strict and exactOptionalPropertyTypes', () => {
    expect(output.trim()).toBe('')
  })
})
