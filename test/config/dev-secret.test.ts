/**
 * The development secret (src/config/dev-secret.ts): kept in `.portcullis/dev-secret` under the
 * working directory, made once, the same for processes that start together, ignored by git, and
 * never replaced by a per-process secret when it cannot be kept.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals'
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Portcullis, { MissingSecretError } from 'portcullis'
import { developmentSecret } from '../../src/config/dev-secret.js'
import { credentialsProvider } from '../support/flow.js'
import { isolateEnv } from '../support/env.js'

isolateEnv(['NODE_ENV', 'AUTH_SECRET', 'LEGACYAUTH_SECRET', 'AUTH_SECRET_1', 'AUTH_SECRET_2', 'AUTH_SECRET_3'])

let directory: string
beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'portcullis-dev-secret-'))
})
afterEach(() => {
  rmSync(directory, { recursive: true, force: true })
})

describe('the development secret', () => {
  it('is made on the first run, readable by its owner only, and read back on the next', () => {
    const first = developmentSecret(directory)
    expect(first).toEqual({ secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), path: join(directory, '.portcullis', 'dev-secret'), created: true })
    expect(statSync(first.path).mode & 0o777).toBe(0o600)
    expect(readFileSync(first.path, 'utf8').trim()).toBe(first.secret)
    expect(developmentSecret(directory)).toEqual({ ...first, created: false })
    // Another directory is another app: another secret.
    const other = mkdtempSync(join(tmpdir(), 'portcullis-dev-secret-'))
    try {
      expect(developmentSecret(other).secret).not.toBe(first.secret)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('is ignored by git without the app\'s .gitignore saying so', () => {
    execFileSync('git', ['init', '-q'], { cwd: directory })
    writeFileSync(join(directory, 'app.js'), '')
    developmentSecret(directory)
    const untracked = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: directory, encoding: 'utf8' })
    expect(untracked.split('\n').filter(Boolean)).toEqual(['?? app.js'])
  })

  it('is the same for processes that make it at once', async () => {
    const module = fileURLToPath(new URL('../../src/config/dev-secret.ts', import.meta.url))
    const script = `import(${JSON.stringify(module)}).then(({ developmentSecret }) => process.stdout.write(developmentSecret(${JSON.stringify(directory)}).secret))`
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
        let out = ''
        child.stdout.on('data', (chunk: Buffer) => (out += chunk))
        child.on('error', reject)
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))))
      })
    const secrets = await Promise.all(Array.from({ length: 6 }, run))
    expect(secrets[0]).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(new Set(secrets)).toEqual(new Set([secrets[0]]))
    expect(readFileSync(join(directory, '.portcullis', 'dev-secret'), 'utf8').trim()).toBe(secrets[0])
  })

  it('is refused, never replaced by a per-process secret, when it cannot be kept or is empty', () => {
    writeFileSync(join(directory, '.portcullis'), 'a file where the folder would go')
    expect(() => developmentSecret(directory)).toThrow(MissingSecretError)
    expect(() => developmentSecret(directory)).toThrow(/cannot be kept in .*dev-secret \(ENOTDIR\): set AUTH_SECRET/)
    rmSync(join(directory, '.portcullis'))
    mkdirSync(join(directory, '.portcullis'))
    writeFileSync(join(directory, '.portcullis', 'dev-secret'), '\n')
    expect(() => developmentSecret(directory)).toThrow(/dev-secret is empty: set AUTH_SECRET, or delete the file/)
  })

  it('is what Portcullis() uses in development without a secret, with one warning line saying where', () => {
    process.env.NODE_ENV = 'development'
    const startedIn = process.cwd()
    process.chdir(directory)
    try {
      const warnings: unknown[][] = []
      const logger = { error: () => {}, debug: () => {}, warn: (...line: unknown[]) => void warnings.push(line) }
      Portcullis({ providers: [credentialsProvider], logger })
      const { secret, path } = developmentSecret(directory)
      expect(warnings).toEqual([['MissingSecret', expect.stringContaining(`using the development secret made now in ${path} (git-ignored)`)]])
      expect(warnings[0]![1]).toContain('Set AUTH_SECRET')
      Portcullis({ providers: [credentialsProvider], logger })
      expect(warnings[1]).toEqual(['MissingSecret', expect.stringContaining(`using the development secret kept in ${path}`)])
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    } finally {
      process.chdir(startedIn)
    }
  })
})
