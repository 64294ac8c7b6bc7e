/**
 * Every relative link in the project's Markdown (the README, docs/ with the generated API reference, bench/,
 * examples/ and migrations/) leads somewhere: to a file or folder that exists and, when it names an anchor in
 * a Markdown file, to a heading of that file, by GitHub's rule for heading anchors. A guide moved or a heading
 * renamed otherwise leaves links that open the top of a page or nothing at all.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'

const root = fileURLToPath(new URL('../..', import.meta.url))

function markdownUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md') && !entry.parentPath.includes('node_modules'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
}

function markdownFiles(): string[] {
  const files = ['README.md', 'bench/README.md', 'migrations/README.md', ...markdownUnder('docs')]
  for (const example of readdirSync(join(root, 'examples'))) {
    if (existsSync(join(root, 'examples', example, 'README.md'))) files.push(join('examples', example, 'README.md'))
  }
  return files
}

/** A fenced code block, from its opening fence to its closing one. */
const FENCED = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm

/** The text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(FENCED, '').replace(/`[^`\n]*`/g, '')
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const text = markdown.replace(FENCED, '')
  for (const [, heading = ''] of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-')
    let anchor = base
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`
    anchors.add(anchor)
  }
  for (const [, id = ''] of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id)
  return anchors
}

function brokenLinks(): string[] {
  const anchorCache = new Map<string, Set<string>>()
  const anchorsIn = (file: string): Set<string> => {
    let anchors = anchorCache.get(file)
    if (!anchors) anchorCache.set(file, (anchors = anchorsOf(readFileSync(file, 'utf8'))))
    return anchors
  }
  const broken: string[] = []
  for (const file of markdownFiles()) {
    const text = prose(readFileSync(join(root, file), 'utf8'))
    const targets = [
      ...[...text.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string),
      ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((match) => match[1] as string),
    ]
    for (const target of targets) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue
      const [path = '', anchor] = target.split('#', 2)
      const destination = path ? resolve(root, dirname(file), decodeURI(path)) : join(root, file)
      if (!existsSync(destination)) {
        broken.push(`${file}: ${target} (no such file)`)
      } else if (anchor && statSync(destination).isFile() && destination.endsWith('.md')) {
        if (!anchorsIn(destination).has(decodeURIComponent(anchor))) broken.push(`${file}: ${target} (no such heading)`)
      }
    }
  }
  return broken
}

describe('links in the Markdown', () => {
  it('lead to a file that exists and, with an anchor, to one of its headings', () => {
    expect(brokenLinks()).toEqual([])
  })

  it('are read as GitHub reads them (the checker itself)', () => {
    expect([...anchorsOf('# Performance\n## Where the warm read\'s time goes\n### `auth()` forms\n## Notes\n## Notes')]).toEqual([
      'performance',
      'where-the-warm-reads-time-goes',
      'auth-forms',
      'notes',
      'notes-1',
    ])
    expect(prose('see [a](a.md)\n```\n[b](b.md)\n```\n`[c](c.md)`')).toBe('see [a](a.md)\n\n')
  })
})
