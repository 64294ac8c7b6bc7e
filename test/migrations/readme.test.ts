/**
 * migrations/README.md against the migrations it describes: the names it lists at the top, the
 * paragraph it gives each migration after the first, and the counts its Knex CLI lines show are
 * those of the folder's files and of `migrationSource()`. (It once said "Batch 1 run: 4
 * migrations" when there were seven.)
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import { migrationSource } from 'portcullis/adapters/knex'

const folder = fileURLToPath(new URL('../../migrations/', import.meta.url))
const readme = readFileSync(join(folder, 'README.md'), 'utf8')
const files = readdirSync(folder).filter((name) => name.endsWith('.js')).sort()
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'eleventh', 'twelfth', 'thirteenth', 'fourteenth', 'fifteenth', 'sixteenth', 'seventeenth', 'eighteenth']

describe('migrations/README.md', () => {
  it('has the same migrations as the folder and migrationSource()', async () => {
    const source = migrationSource()
    const names = (await source.getMigrations([])).map((migration) => source.getMigrationName(migration))
    expect(files.length).toBeGreaterThanOrEqual(7)
    expect(names).toEqual(files)
  })

  it('lists every migration, in order, in its opening paragraph', () => {
    const opening = readme.slice(0, readme.indexOf('\n\n', readme.indexOf('record the same migration names')))
    expect([...opening.matchAll(/`(\d{14}_portcullis_\w+\.js)`/g)].map((match) => match[1])).toEqual(files)
  })

  it('describes each migration after the first in a paragraph of its own, named by its place and file', () => {
    const described = [...readme.matchAll(/^The (\w+) migration \(`([^`]+)`\)/gm)].map(([, ordinal, file]) => ({ ordinal, file }))
    expect(described).toEqual(files.slice(1).map((file, index) => ({ ordinal: ORDINALS[index + 1], file })))
  })

  it('shows the Knex CLI running, listing and rolling back as many migrations as there are', () => {
    const counts = [...readme.matchAll(/^npx knex migrate:\w+ +# .*?(\d+) migrations/gm)].map((match) => Number(match[1]))
    expect(counts).toEqual([files.length, files.length, files.length])
    expect(readme).toContain(`# Batch 1 run: ${files.length} migrations`)
    expect(readme).toContain(`# Batch 1 rolled back: ${files.length} migrations`)
  })
})
