/**
 * Secrets are compared in constant time. A MAC tag, a CSRF token, a sealed OAuth state or a token
 * hash compared with `===` or `Buffer#equals` stops at the first differing byte, and the time that
 * takes tells an attacker how much of a guess was right (a remote timing attack, one byte at a
 * time). node:crypto's `timingSafeEqual` does not stop early.
 *
 * This test reads every file of src/ with the TypeScript parser and fails on:
 * - any `Buffer#equals` or `Buffer.compare` call (src/ has no comparison of public bytes to need one);
 * - any `===`, `!==`, `==` or `!=` with an operand named like secret material (`tag`, `token`,
 *   `hash`, `secret`, `sealed`, `state`, `nonce`, `verifier`, …), unless it is one of the reviewed
 *   spots below, each with why it is safe;
 * and checks that the reviewed constant-time comparisons are still made with `timingSafeEqual`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import ts from 'typescript'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SRC = join(ROOT, 'src')

/** Names like these are secret material (matched against an operand's last name, see namesOf). */
const SECRET_NAME = /(?:token|tag|mac|digest|hash|secret|signature|verifier|sealed|^state$|nonce|password|csrf|challenge)$/i

/**
 * Comparisons of secret-named values that were reviewed, as `file: expression`, with why each is
 * safe: none compares a value an attacker sends against a secret the attacker does not hold.
 */
const REVIEWED: Record<string, string> = {
  // Compare-and-swap on the stored account row: did another request refresh the tokens meanwhile?
  'src/features/oauth/access-token.ts: row.refresh_token !== holder.refresh_token': 'both sides are stored values read by the server, not request input',
  'src/features/oauth/access-token.ts: row.access_token !== holder.access_token': 'both sides are stored values read by the server, not request input',
  // VK ID echoes the state in its token response; the callback's state was already checked in
  // constant time against the cookie (features/oauth/checks.ts) and is in the browser's URL anyway.
  'src/providers/vk.ts: tokens.state !== state': "the provider's echo of a state already verified and public in the URL",
  // The cache is keyed by the token's 256-bit tag: reaching this compare needs a cached token's tag,
  // i.e. the token itself; a guessed cookie misses the Map first.
  'src/session/token-cache.ts: hit.sealed === sealed': 'reached only with the full tag of a cached token, which is not guessable',
  // Following a chain of refresh-token rotations in the store: was the token rotated? The answer was
  // sealed by the server and opened with its key; the token it is compared with came out of the
  // authenticated session cookie (or the previous hop), never from unauthenticated input.
  'src/features/oauth/shared-refresh.ts: answer.tokens.refresh_token === current': 'both sides are the server’s own, after authentication',
  // Did the jwt callback change the claims? The plaintext was decrypted after its tag verified.
  'src/session/jwt-strategy.ts: JSON.stringify(token) !== opened.plaintext': 'both sides are the server’s own, after authentication',
  // Did NFKC change what was typed? Both sides are the same request's input, compared with no stored secret.
  'src/features/password/accounts.ts: raw !== password': 'the typed password against its own normal form, not against anything stored',
}

/** The files that must make their secret comparison with timingSafeEqual, and how many they make. */
const CONSTANT_TIME_SPOTS: Record<string, { count: number; what: string }> = {
  'src/session/jwe.ts': { count: 1, what: 'the A256CBC-HS512 authentication tag' },
  'src/security/csrf.ts': { count: 2, what: "the CSRF cookie's hash, and the submitted token against the cookie's" },
  'src/features/oauth/checks.ts': { count: 1, what: 'the state parameter against the state cookie' },
  'src/mail/token.ts': { count: 2, what: "the stored verification token's hash against the link's, and the link's browser binding against its cookie" },
  'src/features/password/hash.ts': { count: 2, what: 'the derived scrypt key and the Argon2id tag against the stored ones' },
  'src/features/passkey/response.ts': { count: 1, what: "the challenge the browser signed against this browser's challenge cookie" },
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

interface Finding {
  file: string
  line: number
  text: string
  kind: 'equals' | 'compare' | 'operator'
}

/**
 * The names an operand goes by: `a.b.tag` → `tag`; a call, its function's and its arguments'
 * (`sha256(bodyToken)` → `sha256`, `bodyToken`), since a digest of a secret is compared like one.
 */
function namesOf(node: ts.Expression): string[] {
  let expression = node
  while (ts.isParenthesizedExpression(expression) || ts.isNonNullExpression(expression) || ts.isAsExpression(expression)) expression = expression.expression
  if (ts.isCallExpression(expression)) return [...namesOf(expression.expression), ...expression.arguments.flatMap((argument) => namesOf(argument))]
  if (ts.isIdentifier(expression)) return [expression.text]
  if (ts.isPropertyAccessExpression(expression)) return [expression.name.text]
  if (ts.isElementAccessExpression(expression) && ts.isStringLiteral(expression.argumentExpression)) return [expression.argumentExpression.text]
  return []
}

/** True for `left <op> right` that compares secret-named values with an equality operator. */
function isSecretEquality(node: ts.Node): boolean {
  if (!ts.isBinaryExpression(node) || !EQUALITY.has(node.operatorToken.kind) || isPublic(node.left) || isPublic(node.right)) return false
  return [...namesOf(node.left), ...namesOf(node.right)].some((name) => SECRET_NAME.test(name))
}

const EQUALITY = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken])

/** A side that holds no secret: a literal, `typeof x`, `undefined`, a length or a count. */
function isPublic(node: ts.Expression): boolean {
  if (ts.isLiteralExpression(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTypeOfExpression(node) || ts.isPrefixUnaryExpression(node)) return true
  if (node.kind === ts.SyntaxKind.NullKeyword || node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword) return true
  if (ts.isIdentifier(node) && node.text === 'undefined') return true
  return ts.isPropertyAccessExpression(node) && ['length', 'byteLength', 'size', 'type', 'kind'].includes(node.name.text)
}

/** Every non-constant-time comparison of secret-named values in `file`. */
function findComparisons(file: string): Finding[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true)
  const findings: Finding[] = []
  const at = (node: ts.Node, kind: Finding['kind']) => {
    findings.push({ file: relative(ROOT, file), line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, text: node.getText(source).replace(/\s+/g, ' '), kind })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text
      if (method === 'equals') at(node, 'equals')
      if (method === 'compare' && ts.isIdentifier(node.expression.expression) && node.expression.expression.text === 'Buffer') at(node, 'compare')
    }
    if (isSecretEquality(node)) at(node, 'operator')
    ts.forEachChild(node, visit)
  }
  visit(source)
  return findings
}

const files = sourceFiles(SRC)
const findings = files.flatMap(findComparisons)
const key = (finding: Finding) => `${finding.file}: ${finding.text}`

describe('comparisons of secrets in src/', () => {
  it('reads the sources (the scan is not vacuous)', () => {
    expect(files.length).toBeGreaterThan(50)
    for (const spot of Object.keys(CONSTANT_TIME_SPOTS)) expect(files.map((file) => relative(ROOT, file))).toContain(spot)
  })

  it('has no Buffer#equals or Buffer.compare', () => {
    expect(findings.filter((finding) => finding.kind !== 'operator').map((finding) => `${finding.file}:${finding.line} ${finding.text}`)).toEqual([])
  })

  it('has no ===, !==, == or != on a secret-named value beyond the reviewed spots', () => {
    const unreviewed = findings.filter((finding) => finding.kind === 'operator' && !(key(finding) in REVIEWED))
    expect(unreviewed.map((finding) => `${finding.file}:${finding.line} ${finding.text}`)).toEqual([])
  })

  it('lists no reviewed spot that is gone (the allow-list stays exact)', () => {
    const present = new Set(findings.map(key))
    expect(Object.keys(REVIEWED).filter((spot) => !present.has(spot))).toEqual([])
  })

  it.each(Object.entries(CONSTANT_TIME_SPOTS).map(([file, { count, what }]) => [file, what, count] as const))('%s compares %s with timingSafeEqual', (file, _what, count) => {
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true)
    let calls = 0
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && namesOf(node.expression).includes('timingSafeEqual')) calls += 1
      ts.forEachChild(node, visit)
    }
    visit(source)
    expect(calls).toBe(count)
  })
})

describe('the scan itself', () => {
  const scan = (code: string) => {
    const path = join(ROOT, 'scratch-constant-time-probe.ts')
    const source = ts.createSourceFile(path, code, ts.ScriptTarget.ES2022, true)
    let found = 0
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'equals') found += 1
      if (isSecretEquality(node)) found += 1
      ts.forEachChild(node, visit)
    }
    visit(source)
    return found
  }

  it.each([
    'if (!cbcTag(key, aad, iv, ciphertext).equals(tag)) continue',
    'if (state !== sealed) throw error',
    'return sha256(token) === sha256(bodyToken)',
    'return invite.token == hash',
    'if (payload.nonce !== expected.nonce) fail()',
  ])('catches %s', (code) => expect(scan(code)).toBe(1))

  it.each(['if (token === undefined) return', "if (typeof tag !== 'string') return", 'if (hash.length !== expected.length) return', "if (check === 'state') go()"])('lets %s through', (code) =>
    expect(scan(code)).toBe(0),
  )
})
