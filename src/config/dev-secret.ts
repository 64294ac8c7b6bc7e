/**
 * The development secret: without `AUTH_SECRET` (and not in production), Portcullis keeps a random
 * secret in `.portcullis/dev-secret` under the directory the app was started from, made on the first
 * run and read on the next. A per-process secret would do for cookies, but the second factor's TOTP
 * keys and recovery codes, e-mail and password link tokens and passkey user handles are stored
 * sealed or keyed with the secret: after a restart with another one, every two-step user is locked
 * out. The folder holds a `.gitignore` of `*`, so the file is ignored by git wherever the app's own
 * `.gitignore` stands, as pytest's and ruff's cache folders are.
 */
import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MissingSecretError } from '../errors.js'

/** The folder, under the working directory, that holds the development secret. */
export const DEV_SECRET_FOLDER = '.portcullis'

/** The development secret and where it is kept. */
export interface DevelopmentSecret {
  secret: string
  /** The file's absolute path. */
  path: string
  /** Made by this call (the first run), rather than read. */
  created: boolean
}

/**
 * The development secret of `directory`: read from its `.portcullis/dev-secret`, or made there.
 * Processes that start at once agree on one: the file appears whole or not at all (written beside
 * it, then hard-linked into place, which fails when another process got there first).
 *
 * @param directory Where the app runs; default the working directory.
 * @throws MissingSecretError when the file can be neither read nor written (say a read-only
 *   folder), or is empty: a secret that would not outlive the process is never used instead.
 */
export function developmentSecret(directory: string = process.cwd()): DevelopmentSecret {
  const folder = join(directory, DEV_SECRET_FOLDER)
  const path = join(folder, 'dev-secret')
  try {
    const existing = readSecret(path)
    if (existing !== undefined) return { secret: existing, path, created: false }
    mkdirSync(folder, { recursive: true, mode: 0o700 })
    writeIfAbsent(join(folder, '.gitignore'), '# Made by Portcullis: the development secret must not be committed.\n*\n', 0o644)
    const created = writeIfAbsent(path, `${randomBytes(32).toString('base64url')}\n`, 0o600)
    const secret = readSecret(path)
    if (secret === undefined) throw Object.assign(new Error('the file vanished'), { code: 'ENOENT' })
    return { secret, path, created }
  } catch (error) {
    if (error instanceof MissingSecretError) throw error
    const code = (error as { code?: unknown }).code
    throw new MissingSecretError(
      `No AUTH_SECRET set, and the development secret cannot be kept in ${path} (${typeof code === 'string' ? code : String(error)}): set AUTH_SECRET (generate one with \`openssl rand -base64 33\`), or start the app where it may write that file.`,
    )
  }
}

/** The secret in `path`; undefined when there is no such file. */
function readSecret(path: string): string | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined
    throw error
  }
  const secret = text.trim()
  if (!secret) {
    throw new MissingSecretError(
      `${path} is empty: set AUTH_SECRET, or delete the file to have a new secret made (what was sealed with the old one, such as two-step verification keys, no longer opens then).`,
    )
  }
  return secret
}

/** Writes `text` to `path` unless the file exists; whether this call wrote it. */
function writeIfAbsent(path: string, text: string, mode: number): boolean {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(temporary, text, { mode, flag: 'wx' })
  try {
    linkSync(temporary, path)
    return true
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'EEXIST') return false
    // A file system without hard links: create it exclusively (a reader may then, rarely, see it empty).
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error
    try {
      writeFileSync(path, text, { mode, flag: 'wx' })
      return true
    } catch (fallback) {
      if ((fallback as { code?: unknown }).code === 'EEXIST') return false
      throw fallback
    }
  } finally {
    unlinkSync(temporary)
  }
}
