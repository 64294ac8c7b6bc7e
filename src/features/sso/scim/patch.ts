/**
 * A PatchOp request (RFC 7644 §3.5.2): its operations, their `op` in any case (Microsoft Entra ID
 * sends `Replace`, `Add`, `Remove`), each with a `path` or, without one, a `value` object whose keys
 * are the paths (how Okta and Entra ID send a user's changes).
 */
import { ScimError, URN } from './errors.js'
import { withoutSchema } from './filter.js'

export interface PatchOperation {
  readonly op: 'add' | 'replace' | 'remove'
  /** Lower case, without the core schema's URN; undefined when the operation has none. */
  readonly path: string | undefined
  /** The path as sent (a value filter's value is case-exact). */
  readonly rawPath?: string | undefined
  readonly value: unknown
}

/** The operations of a PatchOp body. @throws ScimError 400 `invalidSyntax` */
export function patchOperations(body: Record<string, unknown>): PatchOperation[] {
  const schemas = body.schemas
  if (!Array.isArray(schemas) || !schemas.includes(URN.patchOp)) throw new ScimError(400, `A PATCH body is a PatchOp: schemas must list ${URN.patchOp}.`, 'invalidSyntax')
  const operations = body.Operations ?? body.operations
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > 1000) throw new ScimError(400, 'A PatchOp needs Operations: a list of { op, path?, value? }.', 'invalidSyntax')
  return operations.map((operation: unknown) => {
    const { op, path, value } = (operation ?? {}) as Record<string, unknown>
    const kind = typeof op === 'string' ? op.toLowerCase() : ''
    if (kind !== 'add' && kind !== 'replace' && kind !== 'remove') throw new ScimError(400, `Unknown PATCH op ${JSON.stringify(op)}: add, replace or remove.`, 'invalidSyntax')
    if (path !== undefined && typeof path !== 'string') throw new ScimError(400, 'A PATCH path is a text.', 'invalidPath')
    if (kind === 'remove' && path === undefined) throw new ScimError(400, 'A remove operation needs a path.', 'noTarget')
    return { op: kind, path: path === undefined ? undefined : withoutSchema(path).toLowerCase(), rawPath: path === undefined ? undefined : withoutSchema(path), value }
  })
}

/** A SCIM boolean: true or false, or the strings Entra ID sends ("True", "False"). @throws ScimError 400 `invalidValue` */
export function scimBoolean(value: unknown, what: string): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true'
  throw new ScimError(400, `${what} must be true or false.`, 'invalidValue')
}

/** A text attribute's value, or null (removed, or empty). @throws ScimError 400 `invalidValue` */
export function scimText(value: unknown, what: string, max = 255): string | null {
  if (value === null || value === undefined || value === '') return null
  if (typeof value !== 'string' || value.length > max) throw new ScimError(400, `${what} must be a text of at most ${max} characters.`, 'invalidValue')
  return value.trim() === '' ? null : value.trim()
}
