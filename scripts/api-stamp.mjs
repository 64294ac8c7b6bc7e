#!/usr/bin/env node
// The API reference's stamp (docs/api-stamp.json): hashes of what typedoc reads (src/, its config,
// the tsconfigs, the versions of typedoc, its markdown plugin and TypeScript) and of what it wrote
// (docs/api/). `npm run docs` writes it after typedoc (postdocs); test/docs/api-reference.test.ts
// regenerates the reference only when either hash differs from the stamp.
//   node scripts/api-stamp.mjs          writes the stamp
//   import { apiStamp } from it         computes { inputs, outputs } now
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
export const STAMP_FILE = join(root, 'docs/api-stamp.json')

function hashFiles(files) {
  const hash = createHash('sha256')
  for (const file of files.sort()) hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0')
  return hash.digest('hex')
}

function filesUnder(dir, keep = () => true) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter(keep)
}

const version = (name) => JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version

/** The hashes of the reference's inputs and outputs as they are now. */
export function apiStamp() {
  const inputs = [...filesUnder(join(root, 'src'), (file) => file.endsWith('.ts')), ...['typedoc.json', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map((file) => join(root, file))]
  return {
    inputs: createHash('sha256').update(hashFiles(inputs)).update(['typedoc', 'typedoc-plugin-markdown', 'typescript'].map((name) => `${name}@${version(name)}`).join(',')).digest('hex'),
    outputs: hashFiles(filesUnder(join(root, 'docs/api'))),
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(STAMP_FILE, `${JSON.stringify(apiStamp(), null, 2)}\n`)
}
