/**
 * The list of common passwords that checkPassword refuses, read from common-passwords.txt beside this
 * module: data, not code. scripts/common-passwords.mjs writes that file (17,950 passwords, one a line,
 * from zxcvbn-ts's dictionary; where they come from and their licence: common-passwords.LICENSE.txt),
 * and scripts/build.mjs copies both files into dist/password/, where this module's build reads them.
 *
 * policy.ts imports this module on the first check only: signing up or changing a password needs the
 * list, reading a session never does.
 */
import { readFile } from 'node:fs/promises'

/** The list, beside this module in src/ (tests, tsx) and in dist/ (the package). */
const LIST = new URL('./common-passwords.txt', import.meta.url)

/**
 * Reads common-passwords.txt into a set, for policy.ts to build once and keep.
 *
 * @example
 * (await readCommonPasswords()).has('password') // true
 */
export async function readCommonPasswords(): Promise<ReadonlySet<string>> {
  return commonPasswordSet(await readFile(LIST, 'utf8'))
}

/**
 * The passwords of `text`, one a line. A checkout that turned the file's line ends into CRLF
 * (git's `core.autocrlf` on Windows) must not leave a `\r` on every entry: no password would match.
 *
 * @example
 * commonPasswordSet('password\r\n12345678\r\n') // Set { 'password', '12345678' }
 */
export function commonPasswordSet(text: string): ReadonlySet<string> {
  const lines = (text.includes('\r') ? text.replaceAll('\r', '') : text).split('\n')
  if (lines.at(-1) === '') lines.pop()
  return new Set(lines)
}
