/**
 * The access-control engine: statements (resources and their actions), roles (sets of them), and the
 * check. It knows nothing of where a user's roles come from (the users table, a membership later),
 * so the same check serves any source. Each role's permissions are resolved once, in
 * `defineAccess`, into lookups the check reads without allocating.
 */

/** Resources and their actions, e.g. `{ post: ['create', 'delete'], user: ['ban'] }`. */
export type Statements = { readonly [resource: string]: readonly string[] }

/**
 * Some of the statements' actions, by resource: what a role grants, and what a check asks for. A
 * resource or action the statements do not name is a compile error.
 */
export type Permissions<S extends Statements = Statements> = { readonly [R in keyof S]?: readonly S[R][number][] }

/** The roles every definition has unless it defines them itself: `admin` (every permission) and `user` (none). */
export type DefaultRoleName = 'admin' | 'user'

/** What `defineAccess` takes. */
export interface AccessDefinition<S extends Statements, R extends Readonly<Record<string, Permissions<S>>>> {
  /** Every resource and its actions. */
  readonly statements: S
  /**
   * The roles, each with the permissions it grants. `admin` (every permission) and `user` (none)
   * exist unless given here.
   */
  readonly roles?: R
}

/** The names a role may have: no comma (they are stored comma-separated), no space, 1 to 64 characters. */
const ROLE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/

/**
 * Statements and roles, defined once and frozen: what the `roles` option takes, and the check
 * itself (`can`), usable without a request.
 */
export interface AccessControl<S extends Statements = Statements, Role extends string = string> {
  readonly statements: S
  /** Every role's name, the defaults included. */
  readonly roleNames: readonly Role[]
  /** The permissions each role grants (`admin`'s: every statement), frozen. */
  readonly roles: { readonly [K in Role]: Permissions<S> }
  /**
   * Whether `roles` together grant every action of `permissions`: pure and synchronous, no I/O. An
   * unknown role grants nothing; no roles, nothing; an empty `permissions` is granted to anyone with a role.
   *
   * @param roles Role names (a session's `user.roles`).
   * @example
   * ```ts
   * access.can(['editor'], { post: ['create'] }) // true
   * ```
   */
  can(roles: readonly string[] | null | undefined, permissions: Permissions<S>): boolean
  /** Whether `name` is one of the roles. */
  isRole(name: unknown): name is Role
}

/** Resource → its granted actions, per role: null-prototype objects of Sets, built once. */
type Grants = Readonly<Record<string, ReadonlySet<string>>>

/**
 * Defines the app's permissions and roles, typed: a misspelt resource or action in a role, in
 * `can`, `hasPermission` or `requirePermission` fails to compile. Validated here (a role that grants
 * an action no statement has is a TypeError at init too, for JavaScript callers).
 *
 * @throws TypeError for a malformed definition.
 * @example
 * ```ts
 * import { defineAccess } from 'portcullis'
 *
 * export const access = defineAccess({
 *   statements: { post: ['create', 'delete'], user: ['ban'] },
 *   roles: { editor: { post: ['create'] } },
 * })
 * access.can(['editor'], { post: ['delete'] }) // false
 * ```
 */
export function defineAccess<const S extends Statements, const R extends Readonly<Record<string, Permissions<S>>> = {}>(
  definition: AccessDefinition<S, R>,
): AccessControl<S, (keyof R & string) | DefaultRoleName> {
  if (!definition || typeof definition !== 'object') throw new TypeError('defineAccess({ statements, roles }): pass an object.')
  const statements = copyStatements(definition.statements)
  const given = definition.roles ?? {}
  if (!given || typeof given !== 'object' || Array.isArray(given)) throw new TypeError('defineAccess: roles must be an object of role name → permissions, e.g. { editor: { post: ["create"] } }.')
  const roles: Record<string, Permissions> = Object.create(null)
  roles.admin = statements
  roles.user = Object.freeze({})
  for (const [name, permissions] of Object.entries(given)) {
    if (!ROLE_NAME.test(name)) throw new TypeError(`defineAccess: the role name ${JSON.stringify(name)} must be 1-64 letters, digits or _ . : - (no comma or space).`)
    roles[name] = checkedPermissions(statements, permissions, `roles.${name}`)
  }
  const grants = new Map<string, Grants>()
  for (const [name, permissions] of Object.entries(roles)) grants.set(name, grantsOf(permissions))
  const roleNames = Object.freeze(Object.keys(roles))

  const can = (held: readonly string[] | null | undefined, permissions: Permissions): boolean => {
    if (!held || held.length === 0) return false
    // The common case, one role: its lookups straight.
    if (held.length === 1) {
      const only = grants.get(held[0]!)
      return only !== undefined && grantsAll(only, permissions)
    }
    let known = false
    for (let i = 0; i < held.length; i++) if (grants.has(held[i]!)) known = true
    if (!known) return false
    for (const resource in permissions) {
      const actions = permissions[resource]
      if (!actions) continue
      for (let i = 0; i < actions.length; i++) if (!anyGrants(grants, held, resource, actions[i]!)) return false
    }
    return true
  }

  return Object.freeze({
    statements: statements as S,
    roleNames,
    roles: Object.freeze(roles),
    can,
    isRole: (name: unknown): name is string => typeof name === 'string' && grants.has(name),
  }) as unknown as AccessControl<S, (keyof R & string) | DefaultRoleName>
}

function grantsAll(grants: Grants, permissions: Permissions): boolean {
  for (const resource in permissions) {
    const actions = permissions[resource]
    if (!actions) continue
    const granted = grants[resource]
    for (let i = 0; i < actions.length; i++) if (granted === undefined || !granted.has(actions[i]!)) return false
  }
  return true
}

function anyGrants(grants: ReadonlyMap<string, Grants>, held: readonly string[], resource: string, action: string): boolean {
  for (let i = 0; i < held.length; i++) if (grants.get(held[i]!)?.[resource]?.has(action)) return true
  return false
}

function grantsOf(permissions: Permissions): Grants {
  const grants: Record<string, ReadonlySet<string>> = Object.create(null)
  for (const [resource, actions] of Object.entries(permissions)) if (actions) grants[resource] = new Set(actions)
  return Object.freeze(grants)
}

function copyStatements(given: unknown): Statements {
  if (!given || typeof given !== 'object' || Array.isArray(given)) throw new TypeError('defineAccess: statements must be an object of resource → actions, e.g. { post: ["create", "delete"] }.')
  const statements: Record<string, readonly string[]> = {}
  for (const [resource, actions] of Object.entries(given)) {
    if (!Array.isArray(actions) || actions.length === 0 || !actions.every((action) => typeof action === 'string' && action.length > 0)) {
      throw new TypeError(`defineAccess: statements.${resource} must be a non-empty list of action names.`)
    }
    statements[resource] = Object.freeze([...new Set(actions as string[])])
  }
  return Object.freeze(statements)
}

/** `permissions` checked against the statements, copied and frozen. */
export function checkedPermissions(statements: Statements, permissions: unknown, where: string): Permissions {
  if (!permissions || typeof permissions !== 'object' || Array.isArray(permissions)) throw new TypeError(`${where} must be an object of resource → actions.`)
  const checked: Record<string, readonly string[]> = {}
  for (const [resource, actions] of Object.entries(permissions)) {
    const known = Object.hasOwn(statements, resource) ? statements[resource] : undefined
    if (!known) throw new TypeError(`${where}: "${resource}" is no resource of the statements (${Object.keys(statements).join(', ')}).`)
    if (!Array.isArray(actions)) throw new TypeError(`${where}.${resource} must be a list of actions.`)
    for (const action of actions) {
      if (!known.includes(action as string)) throw new TypeError(`${where}.${resource}: "${String(action)}" is no action of ${resource} (${known.join(', ')}).`)
    }
    checked[resource] = Object.freeze([...(actions as string[])])
  }
  return Object.freeze(checked)
}
