/**
 * The built `portcullis/client` as a page gets it: one self-contained browser module (nothing from
 * Node, no dependency) that stays small, reached through the package's `exports`, and whose error
 * codes are the server's.
 */
import { describe, expect, it, beforeAll } from '@jest/globals'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import type { ClientErrorCode } from 'portcullis'
import type { SignInErrorCode } from 'portcullis/client'

const root = fileURLToPath(new URL('../..', import.meta.url))

// Compile-time (npm run typecheck): the codes the client types are exactly the ones the server sends.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const sameCodes: Same<SignInErrorCode, ClientErrorCode> = true

/** Gzipped budget of the minified module: "a few KB" holds only if something says when it stops holding. */
const BUDGET_BYTES = 3 * 1024

describe('portcullis/client (built)', () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/client/index.js`)) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'ignore' })
  }, 120_000)

  it('bundles for the browser alone, with nothing left to import, within its size budget', async () => {
    // platform 'browser' and no externals: an import of node:* or of a package would fail the build or stay as an import.
    const result = await build({
      entryPoints: [`${root}dist/client/index.js`],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
      metafile: true,
    })
    const code = result.outputFiles[0]!.text
    const inputs = Object.keys(result.metafile.inputs)
    expect(inputs.every((input) => input.startsWith('dist/client/'))).toBe(true)
    expect(code).not.toMatch(/\bimport\s*[{(*"']|\brequire\(/)
    const gzipped = gzipSync(code, { level: 9 }).length
    expect(gzipped).toBeLessThan(BUDGET_BYTES)
  })

  it('is exported as portcullis/client, an ES module with its declarations', () => {
    const resolved = execFileSync(process.execPath, ['--input-type=module', '-e', "console.log(import.meta.resolve('portcullis/client'))"], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
    expect(resolved.trim()).toMatch(/\/dist\/client\/index\.js$/)
    expect(existsSync(`${root}dist/client/index.d.ts`)).toBe(true)
    expect(sameCodes).toBe(true)
  })
})
