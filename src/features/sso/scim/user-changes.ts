/**
 * What PUT and PATCH of a user may change, and its application: `active` (the membership: see
 * lifecycle.ts), the name (`displayName`, `name.formatted`, `name.givenName`, `name.familyName`: the
 * user row keeps one `name`), and the `externalId`. Other attributes (`userName`, `emails`, the
 * enterprise extension's) are accepted and not applied: the address is the user's sign-in and the
 * key of their other organizations' memberships, not one organization's to change.
 */
import type { AdapterUser } from '../../../types.js'
import { verifiedDomains, domainOfAddress } from '../discovery.js'
import type { ScimCall } from './call.js'
import { markProvider } from './mark.js'
import { ScimError } from './errors.js'
import { activate, deactivate } from './lifecycle.js'
import { externalIdOf, markOf, type ScimUser } from './users.js'
import { scimBoolean, scimText } from './patch.js'

/** The name's parts a request set (null: removed). */
export interface NameDraft {
  displayName?: string | null
  formatted?: string | null
  givenName?: string | null
  familyName?: string | null
}

export interface UserChanges {
  active?: boolean
  name: NameDraft
  externalId?: string | null
}

/** Folds one attribute (a lower-case path, or a key of a value object) into `changes`; unknown ones are left. */
export function foldAttribute(changes: UserChanges, path: string, value: unknown): void {
  const part = { displayname: 'displayName', 'name.formatted': 'formatted', 'name.givenname': 'givenName', 'name.familyname': 'familyName' } as const
  if (path === 'active') changes.active = scimBoolean(value, 'active')
  else if (path === 'externalid') changes.externalId = scimText(value, 'externalId')
  else if (path in part) changes.name[part[path as keyof typeof part]] = scimText(value, path)
  else if (path === 'name' && value && typeof value === 'object') for (const [key, inner] of Object.entries(value)) foldAttribute(changes, `name.${key.toLowerCase()}`, inner)
  else if (path === 'name' && value === null) changes.name = { formatted: null }
}

/** The name to store, or undefined when the request set none of it. */
export function nameAfter(current: string | null, draft: NameDraft): string | null | undefined {
  if (draft.displayName !== undefined) return draft.displayName
  if (draft.formatted !== undefined) return draft.formatted
  if (draft.givenName === undefined && draft.familyName === undefined) return undefined
  // One part changed: the other is the current name's, split at its first space.
  const [given = '', ...family] = (current ?? '').split(' ')
  return [draft.givenName === undefined ? given : draft.givenName, draft.familyName === undefined ? family.join(' ') : draft.familyName].filter((text) => text).join(' ') || null
}

/** Applies the changes to the user the connection sees. @throws ScimError 409 (last owner, an externalId of another user) */
export async function applyUserChanges(call: ScimCall, target: ScimUser, changes: UserChanges): Promise<void> {
  const name = nameAfter(target.user.name ?? null, changes.name)
  if (name !== undefined && name !== target.user.name && (await speaksFor(call, target.user))) await call.adapter.updateUser({ id: target.user.id, name })
  if (changes.externalId !== undefined && changes.externalId !== externalIdOf(call, target.mark)) await remark(call, target, changes.externalId)
  if (changes.active === false) await deactivate(call, target.user.id, false)
  if (changes.active === true) await activate(call, target.user.id, changes.externalId ?? externalIdOf(call, target.mark), true)
}

/** Whether the user's address is in the organization's verified domains: only then is their name the identity provider's to change. */
async function speaksFor(call: ScimCall, user: AdapterUser): Promise<boolean> {
  const domain = domainOfAddress(user.email)
  return domain !== null && (await verifiedDomains(call.config, call.connection.organizationId)).has(domain)
}

/** Replaces the user's mark with one of the new externalId. @throws ScimError 409 `uniqueness` */
export async function remark(call: ScimCall, target: { user: AdapterUser; mark: ScimUser['mark'] }, externalId: string | null): Promise<void> {
  const providerAccountId = markOf(call.connection.id, externalId, target.user.id)
  const reference = { provider: markProvider(call.sso.id), providerAccountId }
  let holder = await call.adapter.getUserByAccount(reference)
  if (!holder) {
    try {
      await call.adapter.linkAccount({ userId: target.user.id, type: 'sso', ...reference })
      holder = target.user
    } catch (error) {
      // A concurrent request linked it first (the account's unique index decided): its holder tells.
      holder = await call.adapter.getUserByAccount(reference)
      if (!holder) throw error
    }
  }
  if (holder.id !== target.user.id) throw new ScimError(409, 'Another user of this connection has this externalId.', 'uniqueness')
  if (target.mark && target.mark.providerAccountId !== providerAccountId) await call.adapter.unlinkAccount({ provider: markProvider(call.sso.id), providerAccountId: target.mark.providerAccountId })
}
