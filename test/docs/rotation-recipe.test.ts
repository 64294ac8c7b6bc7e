/**
 * Rotating the secret has one recipe, in docs/deployment.md, and test/two-factor/rotation.test.ts
 * follows it step by step through the environment (issue 62, item 2: docs/two-factor.md told users
 * `AUTH_SECRET=new,old`, which is one secret, the text "new,old"). The other pages link to it
 * instead of telling it again, and no page puts two secrets in one variable.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from '@jest/globals'

const root = new URL('../../', import.meta.url).pathname
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const flat = (text: string) => text.replace(/\s+/g, ' ')

// The hand-written pages (the generated API reference and the mutation record's history left out).
const pages = [
  'README.md',
  'migrations/README.md',
  ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md') && name !== 'mutation-record.md').map((name) => `docs/${name}`),
  ...readdirSync(join(root, 'examples'), { recursive: true, encoding: 'utf8' }).filter((name) => /\.(md|ts)$/.test(name)).map((name) => `examples/${name}`),
]

describe('the secret rotation recipe', () => {
  const recipe = flat(/## Rotating the secret\n([\s\S]*?)\n## |## Rotating the secret\n([\s\S]*)$/.exec(read('docs/deployment.md'))?.slice(1).find(Boolean) ?? '')

  it('is in docs/deployment.md, with the steps the rotation test takes', () => {
    expect(recipe).toContain('set `AUTH_SECRET_1` to it, and keep the old one in `AUTH_SECRET`')
    expect(recipe).toContain('Move the new secret to `AUTH_SECRET` and remove `AUTH_SECRET_1`')
    expect(recipe).toContain('sealed again with the new secret at their first good code')
    expect(recipe).toContain('`resetTwoFactor(userId)`')
    const test = read('test/two-factor/rotation.test.ts')
    expect(test).toContain("deploy({ AUTH_SECRET_1: S1, AUTH_SECRET: S0 })")
    expect(test).toContain("deploy({ AUTH_SECRET: S1 })")
  })

  it('is told nowhere else: the pages that speak of rotating the secret link to it', () => {
    const speaking = pages.filter((page) => /rotat\w* (the |a |`AUTH_SECRET` )?secret|secret rotation|rotated secret|rotated? `AUTH_SECRET`/i.test(read(page)))
    expect(speaking).toEqual(expect.arrayContaining(['docs/two-factor.md', 'docs/email.md', 'docs/configuration.md', 'docs/security.md', 'docs/database.md']))
    for (const page of speaking.filter((page) => page !== 'docs/deployment.md')) {
      expect([page, /deployment\.md(#rotating-the-secret)?\)/.test(read(page))]).toEqual([page, true])
    }
    for (const page of pages.filter((page) => page !== 'docs/deployment.md')) {
      expect([page, /set `?AUTH_SECRET_1`? to the new/i.test(read(page))]).toEqual([page, false])
    }
  })

  it('never puts two secrets in one variable (they are not split on commas), but to say so', () => {
    for (const page of pages) {
      const lists = flat(read(page)).match(/[^.]*\bAUTH_SECRET(_\d)?=[^\s`,]*,[^.]*/g) ?? []
      for (const sentence of lists) expect([page, sentence]).toEqual([page, expect.stringMatching(/is a single secret/)])
    }
  })
})
