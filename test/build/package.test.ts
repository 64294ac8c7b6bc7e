/**
 * The package as npm ships it: `npm pack` on a copy of the working tree with no dist/ (as a fresh
 * clone has) must build it through `prepack` (an install from a git URL builds through `prepare`:
 * test/build/git-install.test.ts), and the tarball, installed into a new app, must run
 * from ESM and CommonJS and type-check from TypeScript apps compiled for Node (`nodenext`) and for
 * bundlers (`bundler`), with `strict` and `exactOptionalPropertyTypes` on (`tsc --init` turns it on),
 * by TypeScript 6 and by TypeScript 7 (the native compiler, what `npm install typescript` gives now),
 * the package's declarations included (no `skipLibCheck`), against @types/node 20, 22, 24 and 26.
 * Its manifest has no scripts and no development fields. Its source maps carry the sources, so a
 * stack trace of the installed package reads as TypeScript; its data file (the list of common
 * passwords) ships beside the code that reads it.
 *
 * The tarball's own dependencies (openid-client, cookie, …) come from npm (the local cache first);
 * express, knex, better-sqlite3, TypeScript and the @types are linked from this checkout, which saves
 * compiling better-sqlite3 again. The other @types/node majors are this checkout's npm aliases
 * (`@types/node24`, …), each given to tsc as the only `node` of a type root of its own.
 *
 * The type checks give the same diagnostics whatever Node runs tsc (a compiler's diagnostics depend
 * on the files and options, not on the runtime under it), so `.ci/run` runs them once, on the oldest
 * supported Node, and sets PORTCULLIS_NODE_INDEPENDENT=skip for the other versions, where they skip
 * with a line saying so; the rest of this file (pack, install, run, stack trace) runs on every version.
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
let clone: string
let app: string
let install: { status: number | null; stderr: string }
let packed: { filename: string; files: { path: string }[] }

function run(file: string, args: string[], cwd = app) {
  return execFileSync(file, args, { cwd, encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] })
}

// The apps compiled for Node, with a file passing a wrong option; the app compiled for bundlers.
const NODENEXT = ['--module', 'nodenext', '--moduleResolution', 'nodenext', 'consumer-esm.mts', 'consumer-cjs.cts', 'augment.mts', 'user-fields.mts', 'wrong.mts']
const BUNDLER = ['--module', 'esnext', '--moduleResolution', 'bundler', 'consumer-bundler.ts']
// The error the wrong option must give, at its line.
const WRONG_OPTION = /^wrong\.mts\(2,\d+\): error TS\d+: .*"cookie"/

/** The error lines of a tsc run's output (`file(line,column): error TS…`). */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => /^\S+\(\d+,\d+\): error/.test(line))
}

/** Each @types/node major the apps are checked against, and the package of this checkout that has it. */
const NODE_TYPES: Record<string, string> = { 20: '@types/node', 22: '@types/node22', 24: '@types/node24', 26: '@types/node26' }

/** The @types/node packages a `tsc --listFiles` run read files of (one, or the switch did not take). */
function nodeTypesRead(output: string): string[] {
  return [...new Set([...output.matchAll(/node_modules\/(@types\/node\d*)\//g)].map((match) => match[1]!))]
}

/** Fields only the repository uses (scripts/pack-manifest.mjs strips them from the packed package.json). */
const DEVELOPMENT_FIELDS = ['scripts', 'devDependencies', 'allowScripts', 'overrides']

/** `tsc` of TypeScript 6 (`typescript`) or 7 (`typescript7`) on the app's files, with the options of `tsc --init`. */
function tsc(compiler: 'typescript' | 'typescript7', ...args: string[]) {
  const result = spawnSync(process.execPath, [join(app, 'node_modules', compiler, 'bin/tsc'), '--ignoreConfig', '--noEmit', '--strict', '--exactOptionalPropertyTypes', '--target', 'es2022', '--types', 'node', ...args], { cwd: app, encoding: 'utf8', env })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

// Checks whose outcome does not depend on the Node running them (see above): skipped where .ci/run ran them already.
const nodeIndependent = process.env.PORTCULLIS_NODE_INDEPENDENT === 'skip' ? it.skip : it
if (process.env.PORTCULLIS_NODE_INDEPENDENT === 'skip') {
  process.stderr.write(`\ntest/build/package.test.ts: the type checks skipped on ${process.version} (PORTCULLIS_NODE_INDEPENDENT=skip: they ran on the oldest Node)\n`)
}

describe('npm pack, installed into a new app', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-pack-'))
    // A clone without dist/: the files git knows (committed or not), tests left out.
    clone = join(dir, 'clone')
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
    // With scripts allowed, as an app installs it: npm warns here of a dependency's install scripts.
    install = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, packed.filename)], { cwd: app, encoding: 'utf8', env })
    for (const name of linked) symlinkSync(join(root, 'node_modules', name), join(app, 'node_modules', name), 'dir')
    // types/<major>/node: a type root whose only package is that major's @types/node.
    for (const [major, types] of Object.entries(NODE_TYPES)) {
      mkdirSync(join(app, 'types', major), { recursive: true })
      symlinkSync(join(root, 'node_modules', types), join(app, 'types', major, 'node'), 'dir')
    }
    for (const file of readdirSync(fixtures)) cpSync(join(fixtures, file), join(app, file))
    writeFileSync(join(app, 'wrong.mts'), "import Portcullis from 'portcullis'\nPortcullis({ providers: [], session: { strategy: 'cookie' } })\n")
  }, 180_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('ships the build (made by prepack), the migrations and the README, and no TypeScript sources', () => {
    const paths = packed.files.map((file) => file.path)
    expect(paths).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/cjs/index.cjs', 'dist/jwt.js', 'dist/adapters/knex/index.js', 'dist/providers/github.js', 'README.md', 'package.json']))
    expect(paths.some((path) => path.startsWith('migrations/'))).toBe(true)
    // The list of common passwords is data, shipped beside the module that reads it, with its licence.
    expect(paths).toEqual(expect.arrayContaining(['dist/features/password/common-passwords.js', 'dist/features/password/common-passwords.txt', 'dist/features/password/common-passwords.LICENSE.txt']))
    expect(paths.filter((path) => path.startsWith('src/') || (path.endsWith('.ts') && !path.endsWith('.d.ts')))).toEqual([])
  })

  it('ships a package.json without lifecycle scripts or development fields, and leaves the repository its own', () => {
    const shipped = JSON.parse(run('tar', ['-xzOf', join(dir, packed.filename), 'package/package.json'], dir)) as Record<string, unknown>
    const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, unknown>
    expect(Object.keys(own)).toEqual(expect.arrayContaining(DEVELOPMENT_FIELDS))
    for (const field of DEVELOPMENT_FIELDS) expect(shipped).not.toHaveProperty(field)
    // Everything else as the repository has it: exports, dependencies, peers, engines, …
    expect(shipped).toEqual(Object.fromEntries(Object.entries(own).filter(([field]) => !DEVELOPMENT_FIELDS.includes(field))))
    // npm 11 warns of a package's prepare/install scripts not yet approved: none to warn of.
    expect(install.status).toBe(0)
    expect(install.stderr).not.toMatch(/install-scripts|portcullis@/)
    // postpack put the repository's package.json back, byte for byte, and took its copy away.
    expect(readFileSync(join(clone, 'package.json'), 'utf8')).toBe(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(existsSync(join(clone, 'package.json.pack-backup'))).toBe(false)
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

  nodeIndependent('type-checks ESM and CommonJS TypeScript apps with module nodenext, strict and exactOptionalPropertyTypes, the package declarations included', () => {
    const errors = errorLines(nodenextRun().output).filter((line) => !line.startsWith('wrong.mts('))
    expect(errors).toEqual([])
  })

  nodeIndependent('type-checks a bundler app (moduleResolution bundler), the package declarations included, with exactOptionalPropertyTypes', () => {
    // No skipLibCheck: the package's own .d.ts files are checked under the app's options too.
    const result = tsc('typescript', ...BUNDLER)
    expect(result.output).toBe('')
    expect(result.status).toBe(0)
  })

  nodeIndependent('fails the type check of a wrong option, so the checks above can fail', () => {
    const result = nodenextRun()
    expect(result.status).not.toBe(0)
    expect(errorLines(result.output)).toContainEqual(expect.stringMatching(WRONG_OPTION))
  })

  // An app's build fails inside a package whose declarations name what one @types/node major has
  // and another has not (keys.d.ts's `Decipher`, `Decipheriv` since 24): each major, no skipLibCheck.
  nodeIndependent.each(Object.keys(NODE_TYPES))('type-checks the same apps with TypeScript 7 against @types/node %s, and fails the wrong option there too', (major) => {
    const version = (JSON.parse(readFileSync(join(root, 'node_modules', NODE_TYPES[major]!, 'package.json'), 'utf8')) as { version: string }).version
    expect(version.split('.')[0]).toBe(major)
    const typeRoot = ['--typeRoots', join('types', major), '--listFiles']
    // Every diagnostic line, located or not (a missing type root has no file).
    const diagnostics = (output: string) => output.split('\n').filter((line) => /error TS\d+/.test(line))
    // What tsc printed besides --listFiles's absolute paths: nothing, for an app without errors.
    const printed = (output: string) => output.split('\n').filter((line) => line !== '' && !line.startsWith('/'))
    const nodenext7 = tsc('typescript7', ...typeRoot, ...NODENEXT)
    expect(diagnostics(nodenext7.output)).toEqual([expect.stringMatching(WRONG_OPTION)])
    expect(nodeTypesRead(nodenext7.output)).toEqual([NODE_TYPES[major]])
    const bundler7 = tsc('typescript7', ...typeRoot, ...BUNDLER)
    expect(printed(bundler7.output)).toEqual([])
    expect(bundler7.status).toBe(0)
    expect(nodeTypesRead(bundler7.output)).toEqual([NODE_TYPES[major]])
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
