/**
 * PUT /Users/:id (RFC 7644 §3.5.1: the resource replaced; here its name, `active` and `externalId`)
 * and PATCH /Users/:id (§3.5.2: PatchOp `replace`/`add`/`remove` of `active`, `displayName`,
 * `name.givenName`, `name.familyName`, `name.formatted`, `externalId`, with a path or as a value
 * object). `active: false` deprovisions (lifecycle.ts); `active: true` provisions again. 200 with the
 * resource as it is after.
 */
import type { ScimCall } from './call.js'
import { notFound, ScimError } from './errors.js'
import type { ScimAnswer } from './answer.js'
import { patchOperations } from './patch.js'
import { applyUserChanges, foldAttribute, type UserChanges } from './user-changes.js'
import { scimUserById, userResource } from './users.js'

export async function replaceUser(call: ScimCall, id: string, body: Record<string, unknown>): Promise<ScimAnswer> {
  const changes: UserChanges = { name: {} }
  for (const key of ['active', 'displayName', 'name', 'externalId']) if (body[key] !== undefined) foldAttribute(changes, key.toLowerCase(), body[key])
  return changed(call, id, changes)
}

export async function patchUser(call: ScimCall, id: string, body: Record<string, unknown>): Promise<ScimAnswer> {
  const changes: UserChanges = { name: {} }
  for (const operation of patchOperations(body)) {
    const value = operation.op === 'remove' ? null : operation.value
    if (operation.path !== undefined) {
      foldAttribute(changes, operation.path, value)
      continue
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ScimError(400, 'An operation without a path needs a value object of attributes.', 'invalidSyntax')
    for (const [key, inner] of Object.entries(value)) foldAttribute(changes, key.toLowerCase(), inner)
  }
  return changed(call, id, changes)
}

async function changed(call: ScimCall, id: string, changes: UserChanges): Promise<ScimAnswer> {
  const target = await scimUserById(call, id)
  if (!target) throw notFound('User', id)
  await applyUserChanges(call, target, changes)
  return { status: 200, body: userResource(call, (await scimUserById(call, id)) ?? target) }
}
