/**
 * Jest's TypeScript transform: esbuild strips the types (no type check; `npm test` runs `tsc`
 * first), emitting ES modules with a source map. Faster than ts-jest's
 * TypeScript transpile, which mattered most on a cold cache (CI's fresh clone).
 */
const { createHash } = require('node:crypto')
const { transformSync, version } = require('esbuild')

// Part of the cache key: a change to the options below must not reuse old transforms.
const TRANSFORM_VERSION = 'no-keep-names'

module.exports = {
  process(source, path) {
    const { code, map } = transformSync(source, {
      loader: path.endsWith('.tsx') ? 'tsx' : 'ts',
      format: 'esm',
      target: 'node20',
      sourcemap: 'external',
      sourcefile: path,
      // No keepNames: its `__name(...)` wrappers break a function a test hands to the browser
      // (`page.evaluate`, `addInitScript`), which runs without esbuild's helpers. A transform of one
      // file renames nothing, so names stay as written without it.
      keepNames: false,
      tsconfigRaw: { compilerOptions: { useDefineForClassFields: true, verbatimModuleSyntax: false } },
    })
    return { code, map }
  },
  getCacheKey(source, path, options) {
    return createHash('sha256').update(TRANSFORM_VERSION).update(version).update('\0').update(path).update('\0').update(source).update('\0').update(options.configString).digest('hex')
  },
}
