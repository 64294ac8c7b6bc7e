/**
 * Every method of the `Adapter` type is named in docs/database.md, the page that tells an adapter's
 * author what to implement: a method added to the type and not to the page fails here. The methods
 * are read by TypeScript's checker from the `Adapter` that `portcullis` exports (src/index.ts), so a
 * method an interface of a feature contributes (by `extends` or by merging) counts too.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import ts from 'typescript'

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The member names of the `Adapter` type exported by the package's entry point. */
function adapterMethods(): string[] {
  const entry = join(root, 'src/index.ts')
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  })
  const checker = program.getTypeChecker()
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!
  let adapter = checker.getExportsOfModule(module).find((symbol) => symbol.name === 'Adapter')!
  if (adapter.flags & ts.SymbolFlags.Alias) adapter = checker.getAliasedSymbol(adapter)
  return checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(adapter)).map((member) => member.name)
}

/** Whether the page names the method as code: `name`, `name(…)` or `adapter.name`. */
function names(page: string, method: string): boolean {
  return new RegExp(`\`(?:\\w+\\.)?${method}[\`(]`).test(page)
}

describe('docs/database.md and the Adapter type', () => {
  const page = readFileSync(join(root, 'docs/database.md'), 'utf8')

  it('names every method of the Adapter type', () => {
    const methods = adapterMethods()
    // The type was read (Auth.js's methods among them), so an empty list cannot pass.
    expect(methods).toEqual(expect.arrayContaining(['createUser', 'getSessionAndUser', 'useVerificationToken', 'deleteSessionsByUserId']))
    expect(methods.filter((method) => !names(page, method))).toEqual([])
  }, 60_000)

  it('does not count a method the page only mentions in prose', () => {
    expect(names('Sessions of a user are deleted by deleteSessionsByUserId.', 'deleteSessionsByUserId')).toBe(false)
    expect(names('`adapter.deleteSessionsByUserId(userId, { except })`', 'deleteSessionsByUserId')).toBe(true)
    expect(names('`deleteSessionsByUserIdLater`', 'deleteSessionsByUserId')).toBe(false)
  })
})
