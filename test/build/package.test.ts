/**
 * The package as npm ships it: `npm pack` on a copy of the working tree with no dist/ (as a fresh
 * clone has) must build it through `prepare` (which npm runs on pack and on an install from a git URL), and the tarball, installed into a new app, must run
 * from ESM and CommonJS and type-check from TypeScript apps compiled for Node (`nodenext`) and for
 * bundlers (`bundler`), with `strict` and `exactOptionalPropertyTypes` on (`tsc --init` turns it on),
 * by TypeScript 6 and by TypeScript 7 (the native compiler, what `npm install typescript` gives now).
 * Its source maps carry the sources, so a stack trace of the installed package reads as TypeScript;
 * its data file (the list of common passwords) ships beside the code that reads it.
 *
 * The tarball's own dependencies (openid-client, cookie, …) come from npm (the local cache first);
 * express, knex, better-sqlite3, TypeScript and the @types are linked from this checkout, which saves
 * compiling better-sqlite3 again.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url))
const env = { ...process.env, NODE_OPTIONS: '' }
const linked = ['express', 'knex', 'better-sqlite3', '@types', 'typescript', 'typescript7']

let dir: string
let app: string
let packed: { filename: string; files: { path: string }[] }

function run(file: string, args: string[], cwd = app) {
  return execFileSync(file, args, { cwd, encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] })
}

// The apps compiled for Node, with a file passing a wrong option; the app compiled for bundlers.
const NODENEXT = ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', 'consumer-esm.mts', 'consumer-cjs.cts', 'augment.mts', 'wrong.mts']
const BUNDLER = ['--module', 'esnext', '--moduleResolution', 'bundler', 'consumer-bundler.ts']
// The error the wrong option must give, at its line.
const WRONG_OPTION = /^wrong\.mts\(2,\d+\): error TS\d+: .*"cookie"/

/** The error lines of a tsc run's output (`file(line,column): error TS…`). */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => /^\S+\(\d+,\d+\): error/.test(line))
}

/** `tsc` of TypeScript 6 (`typescript`) or 7 (`typescript7`) on the app's files, with the options of `tsc --init`. */
function tsc(compiler: 'typescript' | 'typescript7', ...args: string[]) {
  const result = spawnSync(process.execPath, [join(app, 'node_modules', compiler, 'bin/tsc'), '--ignoreConfig', '--noEmit', '--strict', '--exactOptionalPropertyTypes', '--target', 'es2022', '--types', 'node', ...args], { cwd: app, encoding: 'utf8', env })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

describe('npm pack, installed into a new app', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-pack-'))
    // A clone without dist/: the files git knows (committed or not), tests left out.
    const clone = join(dir, 'clone')
    const files = run('git', ['ls-files', '-co', '--exclude-standard', '-z'], root).split('\0')
    for (const file of files) {
      if (!file || file.startsWith('test/') || file.startsWith('dist/') || !existsSync(join(root, file))) continue
      mkdirSync(dirname(join(clone, file)), { recursive: true })
      copyFileSync(join(root, file), join(clone, file))
    }
    symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir')
    packed = (JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], clone)) as (typeof packed)[])[0]!

    app = join(dir, 'app')
    mkdirSync(app)
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, version: '1.0.0' }))
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, packed.filename)])
    for (const name of linked) symlinkSync(join(root, 'node_modules', name), join(app, 'node_modules', name), 'dir')
    for (const file of readdirSync(fixtures)) cpSync(join(fixtures, file), join(app, file))
    writeFileSync(join(app, 'wrong.mts'), "import Portcullis from 'portcullis'\nPortcullis({ providers: [], session: { strategy: 'cookie' } })\n")
  }, 180_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('ships the build (made by prepare), the migrations and the README, and no TypeScript sources', () => {
    const paths = packed.files.map((file) => file.path)
    expect(paths).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/cjs/index.cjs', 'dist/jwt.js', 'dist/adapters/knex/index.js', 'dist/providers/github.js', 'README.md', 'package.json']))
    expect(paths.some((path) => path.startsWith('migrations/'))).toBe(true)
    // The list of common passwords is data, shipped beside the module that reads it, with its licence.
    expect(paths).toEqual(expect.arrayContaining(['dist/features/password/common-passwords.js', 'dist/features/password/common-passwords.txt', 'dist/features/password/common-passwords.LICENSE.txt']))
    expect(paths.filter((path) => path.startsWith('src/') || (path.endsWith('.ts') && !path.endsWith('.d.ts')))).toEqual([])
  })

  it('signs in from an ESM app and a CommonJS app, run by plain node', () => {
    expect(run(process.execPath, ['app.mjs'])).toContain('esm: signed in as Smoke')
    expect(run(process.execPath, ['app.cjs'])).toContain('cjs: signed in as Smoke')
  })

  it('refuses a common password from ESM and CommonJS, the list read from the installed package', () => {
    expect(run(process.execPath, ['password.mjs'])).toContain('esm password: common one refused (PasswordPolicyError common), passphrase accepted (1 mail)')
    expect(run(process.execPath, ['password.cjs'])).toContain('cjs password: common one refused (PasswordPolicyError common), passphrase accepted (1 mail)')
  })

  it('stores a user through portcullis/adapters/knex from ESM and CommonJS', () => {
    expect(run(process.execPath, ['adapter.mjs'])).toContain('esm adapter: stored Smoke')
    expect(run(process.execPath, ['adapter.cjs'])).toContain('cjs adapter: stored Smoke')
  })

  // One tsc run for the nodenext apps and a file with a wrong option (each tsc costs seconds of CPU):
  // the apps must have no error, the wrong option must have one, so the check can fail.
  let nodenext: { status: number | null; output: string } | undefined
  const nodenextRun = () => (nodenext ??= tsc('typescript', ...NODENEXT))

  it('type-checks ESM and CommonJS TypeScript apps with module nodenext, strict and exactOptionalPropertyTypes', () => {
    const errors = errorLines(nodenextRun().output).filter((line) => !line.startsWith('wrong.mts('))
    expect(errors).toEqual([])
  })

  it('type-checks a bundler app (moduleResolution bundler), the package declarations included, with exactOptionalPropertyTypes', () => {
    // No skipLibCheck: the package's own .d.ts files are checked under the app's options too.
    const result = tsc('typescript', ...BUNDLER)
    expect(result.output).toBe('')
    expect(result.status).toBe(0)
  })

  it('fails the type check of a wrong option, so the checks above can fail', () => {
    const result = nodenextRun()
    expect(result.status).not.toBe(0)
    expect(errorLines(result.output)).toContainEqual(expect.stringMatching(WRONG_OPTION))
  })

  it('type-checks the same apps with TypeScript 7, and fails the wrong option there too', () => {
    const nodenext7 = tsc('typescript7', ...NODENEXT)
    expect(errorLines(nodenext7.output)).toEqual([expect.stringMatching(WRONG_OPTION)])
    const bundler7 = tsc('typescript7', ...BUNDLER)
    expect(bundler7.output).toBe('')
    expect(bundler7.status).toBe(0)
  })

  it('prints a stack trace of the installed package as its TypeScript source, from the maps alone', () => {
    const result = spawnSync(process.execPath, ['--enable-source-maps', 'trace.mjs'], { cwd: app, encoding: 'utf8', env })
    expect(result.status).not.toBe(0)
    // The first frame: a .ts file of the package (not shipped), at a line and column.
    const frame = /\((\S*node_modules\/portcullis\/src\/(\S+\.ts)):(\d+):(\d+)\)/.exec(result.stderr)
    expect(frame).not.toBeNull()
    const [, , source, line] = frame!
    expect(existsSync(join(app, 'node_modules/portcullis/src'))).toBe(false)
    // Node prints that line of source above the error; it can only have it from sourcesContent.
    const sourceLine = readFileSync(join(root, 'src', source!), 'utf8').split('\n')[Number(line) - 1]!
    expect(sourceLine).toMatch(/throw/)
    expect(result.stderr).toContain(sourceLine.trim())
    expect(result.stderr).toContain('InvalidConfigurationError: Provider "broken"')
  })
})
