/**
 * The import graph of `src/`: every `import`/`export … from` and `import()` of a relative module,
 * type-only ones included (a type import is a dependency of the design, if not of the bundle).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** File (relative to src/, e.g. `http/auth.ts`) → the files it imports. */
export type ImportGraph = Map<string, string[]>

const SPECIFIER = /(?:\bimport\s*(?:type\s+)?(?:[\w*{}\s,]+?\s+from\s+)?|\bexport\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s+|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g

/** Reads the graph of every `.ts` file under `root`. */
export function importGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map()
  for (const file of tsFiles(root)) {
    const source = readFileSync(join(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm, '')
    const targets = new Set<string>()
    for (const match of source.matchAll(SPECIFIER)) {
      targets.add(relative(root, resolve(root, dirname(file), match[1]!.replace(/\.js$/, '.ts'))))
    }
    graph.set(file, [...targets].sort())
  }
  return graph
}

/** The circles of the graph, each as the list of files around it (the smallest file first). */
export function importCircles(graph: ImportGraph): string[][] {
  // Tarjan's strongly connected components; a component of several files holds at least one circle.
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (file: string): void => {
    indices.set(file, index)
    low.set(file, index++)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (!indices.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, indices.get(next)!))
    }
    if (low.get(file) === indices.get(file)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== file)
      if (component.length > 1 || graph.get(file)?.includes(file)) components.push(component.sort())
    }
  }
  for (const file of [...graph.keys()].sort()) if (!indices.has(file)) visit(file)
  return components
}

function tsFiles(root: string, dir = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return tsFiles(root, path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}
