/**
 * The API reference in docs/api/ is what `npm run docs` (typedoc with typedoc-plugin-markdown, typedoc.json)
 * writes from the TSDoc today: this regenerates it into a temporary folder and fails on any file that differs,
 * is missing or is extra, so a changed export or comment cannot leave the checked-in reference stale.
 *
 * typedoc takes ~15 s of CPU, so it runs only when something it reads or wrote changed since `npm run docs`:
 * docs/api-stamp.json (written by `npm run docs`) holds hashes of its inputs (src/, the configs, the
 * versions of typedoc, its plugin and TypeScript) and of docs/api/. When both match, the reference is what
 * typedoc wrote from these very inputs; when either differs (a changed comment, a hand-edited page, a new
 * typedoc), it is regenerated and compared.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
// @ts-expect-error: a plain ESM script without declarations
import { apiStamp, STAMP_FILE } from '../../scripts/api-stamp.mjs'

const root = fileURLToPath(new URL('../..', import.meta.url))
const checkedIn = join(root, 'docs/api')

async function filesUnder(dir: string): Promise<Map<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const files = new Map<string, string>()
  for (const entry of entries) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files.set(relative(dir, path), await readFile(path, 'utf8'))
  }
  return files
}

/** True when docs/api is what typedoc wrote from the current inputs (docs/api-stamp.json matches both hashes). */
async function stampMatches(): Promise<boolean> {
  const stamp = JSON.parse(await readFile(STAMP_FILE, 'utf8').catch(() => '{}')) as { inputs?: string; outputs?: string }
  const now = (apiStamp as () => { inputs: string; outputs: string })()
  return stamp.inputs === now.inputs && stamp.outputs === now.outputs
}

describe('API reference (docs/api)', () => {
  let out: string | undefined
  beforeAll(async () => {
    if (await stampMatches()) return
    out = await mkdtemp(join(tmpdir(), 'portcullis-api-'))
    // typedoc takes ~15 s of CPU; on a loaded 2-core machine a minute or more of wall time.
    execFileSync(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--out', out, '--logLevel', 'Error'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    })
  }, 240_000)
  afterAll(async () => {
    if (out) await rm(out, { recursive: true, force: true })
  })

  it('is what `npm run docs` writes from the current TSDoc (run it and commit docs/api when this fails)', async () => {
    // Unchanged inputs and outputs since typedoc wrote them: nothing to regenerate.
    if (out === undefined) return
    const [expected, actual] = await Promise.all([filesUnder(out), filesUnder(checkedIn)])
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort())
    const stale = [...expected].filter(([file, text]) => actual.get(file) !== text).map(([file]) => file)
    expect(stale).toEqual([])
  })

  it('documents every public entry point of package.json `exports`', async () => {
    const index = await readFile(join(checkedIn, 'README.md'), 'utf8')
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }
    const providers = (await readdir(join(root, 'src/providers'))).filter((file) => file.endsWith('.ts') && file !== 'overrides.ts')
    const modules = ['index', 'jwt', 'adapters/knex', 'client', ...providers.map((file) => `providers/${file.slice(0, -3)}`)]
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './adapters/knex', './client', './jwt', './package.json', './providers/*', './providers/overrides'].sort())
    for (const name of modules) expect(index).toContain(`[${name}](${name}/README.md)`)
  })
})
