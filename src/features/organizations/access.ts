/**
 * The organizations' permissions: the wing's own statements (what its built-in actions check), the
 * app's merged in, and the roles a member may have there, resolved once into an `AccessControl`
 * of the roles wing's engine (the same check, another source of roles: the membership).
 */
import { checkedPermissions, defineAccess, type AccessControl, type Permissions, type Statements } from '../roles/access.js'

/**
 * What the built-in actions check: an `owner` has them all, an `admin` all but deleting the
 * organization, a `member` none. Put your own resources beside them in `organizations.statements`.
 */
export const organizationStatements = Object.freeze({
  organization: Object.freeze(['update', 'delete'] as const),
  member: Object.freeze(['list', 'update-role', 'remove'] as const),
  invitation: Object.freeze(['create', 'cancel', 'list'] as const),
  team: Object.freeze(['create', 'update', 'delete'] as const),
  /** The organization's API keys (the `apiKeys` option): creating, listing, revoking, rotating them. */
  apiKey: Object.freeze(['manage'] as const),
})

/** The role every organization's creator gets, which grants every statement and of which one must remain. */
export const OWNER_ROLE = 'owner'

/** The built-in roles' names. */
export const DEFAULT_ORGANIZATION_ROLES = Object.freeze(['owner', 'admin', 'member'] as const)

/**
 * The statements and roles of organizations: the built-in statements with `statements` (the app's)
 * merged in; `owner` every statement, `admin` every one but `organization: ['delete']`, `member` only
 * what `roles.member` gives; `roles` adds roles or replaces `admin` and `member` (never `owner`).
 *
 * @throws TypeError for a malformed definition (a statement of the wing's own redefined, a role granting an unknown action).
 */
export function organizationAccess(statements: Statements | undefined, roles: Readonly<Record<string, Permissions>> | undefined): AccessControl {
  const own = statements ?? {}
  if (typeof own !== 'object' || Array.isArray(own)) throw new TypeError('organizations.statements must be an object of resource → actions, e.g. { project: ["create", "delete"] }.')
  for (const resource of Object.keys(own)) {
    if (Object.hasOwn(organizationStatements, resource)) throw new TypeError(`organizations.statements: "${resource}" is the wing's own resource (${Object.keys(organizationStatements).join(', ')}); name yours otherwise.`)
  }
  const merged: Statements = { ...organizationStatements, ...own }
  const given = roles ?? {}
  if (typeof given !== 'object' || Array.isArray(given)) throw new TypeError('organizations.roles must be an object of role name → permissions.')
  if (Object.hasOwn(given, OWNER_ROLE)) throw new TypeError('organizations.roles: "owner" is built in (every permission) and cannot be redefined.')
  const admin: Record<string, readonly string[]> = {}
  for (const [resource, actions] of Object.entries(merged)) admin[resource] = resource === 'organization' ? ['update'] : actions
  const defined: Record<string, Permissions> = { owner: merged, admin, member: {} }
  for (const [name, permissions] of Object.entries(given)) defined[name] = checkedPermissions(merged, permissions, `organizations.roles.${name}`)
  return defineAccess({ statements: merged, roles: defined })
}

/** The roles a member may be given: every defined one but the engine's global `user`, unless the app defined it. */
export function memberRoleNames(access: AccessControl, given: Readonly<Record<string, unknown>> | undefined): readonly string[] {
  return Object.freeze(access.roleNames.filter((name) => name !== 'user' || (given !== undefined && Object.hasOwn(given, 'user'))))
}
