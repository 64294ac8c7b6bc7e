/**
 * Installing from a git URL, as the getting-started guide offers before the package is on the
 * registry: npm clones the repository, installs its dev dependencies, runs `prepare` (the build)
 * and packs it. Here the repository is a bare clone of this checkout's HEAD behind a
 * `git+file://` URL, so nothing leaves the machine; the dev dependencies come from npm's cache.
 *
 * It takes about four minutes (the dev dependencies' install), so `npm test` skips it unless
 * PORTCULLIS_GIT_INSTALL=1; `.ci/run` runs it after the suite. It tests HEAD: commit first.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'

const root = fileURLToPath(new URL('../..', import.meta.url))
const env = { ...process.env, NODE_OPTIONS: '' }
const enabled = process.env.PORTCULLIS_GIT_INSTALL === '1'

if (!enabled) process.stderr.write('\ntest/build/git-install.test.ts: skipped (about 4 minutes); PORTCULLIS_GIT_INSTALL=1 runs it, as .ci/run does\n')

const suite = enabled ? describe : describe.skip

suite('npm install from a git URL', () => {
  let dir: string
  let app: string

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-git-'))
    const repository = join(dir, 'portcullis.git')
    execFileSync('git', ['clone', '--quiet', '--bare', root, repository], { env })
    app = join(dir, 'app')
    mkdirSync(app)
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, version: '1.0.0' }))
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', `git+file://${repository}`], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] })
  }, 600_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('installs the built package (prepare ran) and it loads from ESM and CommonJS', () => {
    expect(readdirSync(join(app, 'node_modules/portcullis')).sort()).toEqual(expect.arrayContaining(['dist', 'migrations', 'package.json']))
    const esm = execFileSync(process.execPath, ['--input-type=module', '-e', "const { default: Portcullis } = await import('portcullis'); console.log(typeof Portcullis)"], { cwd: app, env, encoding: 'utf8' })
    const cjs = execFileSync(process.execPath, ['-e', "const m = require('portcullis'); console.log(typeof (m.default ?? m))"], { cwd: app, env, encoding: 'utf8' })
    expect({ esm: esm.trim(), cjs: cjs.trim() }).toEqual({ esm: 'function', cjs: 'function' })
  })
})
