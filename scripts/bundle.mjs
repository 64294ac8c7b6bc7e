// The JavaScript of dist/ (all but the browser module dist/client/): the package's entry points built
// from src/ by esbuild, with the code they share in dist/chunks/. Importing Portcullis opens 18 files
// instead of the 120 modules tsc writes, which Node's ESM loader took about 40 ms more to load (the
// package and five providers: 44 ms against 82 on Node 20, 58 against 116 on Node 24). Every module
// a route imports on first use (`await import(...)`: OpenID Connect, e-mail, passwords, the second
// factor) is an entry point too, so it stays out of the import until then, under its own path.
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/** The source file (`src/…ts`) of a path in dist/ (`./dist/…js`). */
const sourceOf = (path) => path.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')

/**
 * package.json's `exports` as `[name, target]` pairs, each pattern (`./providers/*`) expanded to every
 * source module of its folder, less the names the map lists itself (those it closes with `null` are
 * internal modules such as providers/overrides). The bundle has one entry point per such module, so
 * the same pairs hold for dist/ once built (scripts/build.mjs writes the CommonJS wrappers from them).
 */
export function expandPatterns(exports, root = new URL('../', import.meta.url)) {
  const entries = []
  for (const [entry, target] of Object.entries(exports)) {
    if (!entry.includes('*')) {
      entries.push([entry, target])
      continue
    }
    const pattern = sourceOf(target.import)
    const folder = pattern.slice(0, pattern.lastIndexOf('/') + 1)
    for (const file of readdirSync(new URL(folder, root))) {
      if (!file.endsWith('.ts')) continue
      const name = file.slice(0, -'.ts'.length)
      const concrete = entry.replace('*', name)
      if (concrete in exports) continue
      entries.push([concrete, Object.fromEntries(Object.entries(target).map(([key, path]) => [key, path.replace('*', name)]))])
    }
  }
  return entries
}

/**
 * The modules an app imports by name: the expanded `exports` that have an `import` (the browser
 * module, built by tsc, has none); and the migration files' helper (migrations/*.js import it).
 */
function publicEntryPoints(root) {
  const { exports } = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'))
  const imported = expandPatterns(exports, root).filter(([, target]) => typeof target?.import === 'string')
  return ['src/adapters/knex/migrations.ts', ...imported.map(([, target]) => sourceOf(target.import))]
}

/**
 * Builds the server entry points into `outdir` (dist/ by default). `plugins` lets a bench build a
 * changed copy the same way (bench/signin-steps.ts).
 * @param {{ root?: URL, outdir?: string, plugins?: import('esbuild').Plugin[] }} [options]
 */
export async function bundleServer({ root = new URL('../', import.meta.url), outdir = 'dist', plugins = [] } = {}) {
  /** @type {import('esbuild').BuildOptions} */
  const options = {
    absWorkingDir: fileURLToPath(root),
    outbase: 'src',
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    // Dependencies stay imports of node_modules, as in an app's install.
    packages: 'external',
    // No `keepNames`: it wraps every function in a call that sets its name, closures made per request
    // included (a cost the benches measured under tsx). Names stay as written unless two modules'
    // top-level names clash; the error classes' names, which `error.name` is, are checked by
    // test/build/smoke.test.ts.
    keepNames: false,
    // Stack traces read as the TypeScript source (node --enable-source-maps), which the maps carry.
    sourcemap: 'linked',
    sourcesContent: true,
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
    plugins,
  }
  const entryPoints = publicEntryPoints(root)
  const found = await build({ ...options, entryPoints, write: false, metafile: true })
  const lazy = new Set()
  for (const input of Object.values(found.metafile.inputs)) {
    for (const imported of input.imports) if (imported.kind === 'dynamic-import' && !imported.external) lazy.add(imported.path)
  }
  await build({ ...options, entryPoints: [...entryPoints, ...lazy] })
}
