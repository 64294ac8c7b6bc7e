/**
 * Writes docs/providers.md, the table of built-in providers, from the provider modules themselves
 * (see providers-table-lib.ts). Run after adding or changing a provider:
 *
 *   npx tsx scripts/providers-table.ts      (npm run docs:providers)
 *
 * test/providers/catalogue.test.ts fails while the file differs from what this writes.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, relative } from 'node:path'
import { catalogueRows, renderProvidersMarkdown, ROOT, TABLE_PATH } from './providers-table-lib.js'

const rows = await catalogueRows()
mkdirSync(dirname(TABLE_PATH), { recursive: true })
writeFileSync(TABLE_PATH, renderProvidersMarkdown(rows))
console.log(`${relative(ROOT, TABLE_PATH)}: ${rows.length} providers.`)
