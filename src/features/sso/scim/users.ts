/**
 * A user as a connection's SCIM client sees it (RFC 7643 §4.1). A user exists for the connection
 * while they are a member of its organization (`active: true`), or while its identity provider keeps
 * them provisioned but deactivated (`active: false`: no membership, their mark kept), so that a
 * deactivated user can be found and made active again. Another organization's user is not there.
 * The connection's mark of a user (mark.ts) says it provisioned them.
 */
import type { AdapterAccount, AdapterUser } from '../../../types.js'
import type { AdapterMember } from '../../organizations/types.js'
import type { ScimCall } from './call.js'
import { URN } from './errors.js'
import { isMarkOf, markProvider } from './mark.js'

export { markOf } from './mark.js'

/** A user as the connection sees it: the user, their membership (null: deactivated), their mark. */
export interface ScimUser {
  readonly user: AdapterUser
  readonly member: AdapterMember | null
  readonly mark: AdapterAccount | null
}

/** The connection's marks among the user's accounts. */
export async function marksOf(call: ScimCall, userId: string): Promise<AdapterAccount[]> {
  return (await call.adapter.getAccountsByUserId(userId)).filter((account) => account.provider === markProvider(call.sso.id) && isMarkOf(call.connection.id, account.providerAccountId))
}

/** The user, when the connection sees them (a member of its organization, or provisioned by it); else null. */
export async function scimUserOf(call: ScimCall, user: AdapterUser | null): Promise<ScimUser | null> {
  if (!user) return null
  const member = await call.adapter.getMember(call.connection.organizationId, user.id)
  const mark = (await marksOf(call, user.id))[0] ?? null
  return member || mark ? { user, member, mark } : null
}

/** The user of id `id`, when the connection sees them. */
export async function scimUserById(call: ScimCall, id: string): Promise<ScimUser | null> {
  return id.length > 255 ? null : scimUserOf(call, await call.adapter.getUser(id))
}

/** The externalId the identity provider gave, or null. */
export function externalIdOf(call: ScimCall, mark: AdapterAccount | null): string | null {
  const prefix = `${call.connection.id}:scim:`
  return mark?.providerAccountId.startsWith(prefix) ? mark.providerAccountId.slice(prefix.length) : null
}

/** The User resource. */
export function userResource(call: ScimCall, { user, member, mark }: ScimUser): Record<string, unknown> {
  const externalId = externalIdOf(call, mark)
  return {
    schemas: [URN.user],
    id: user.id,
    ...(externalId !== null && { externalId }),
    userName: user.email,
    ...(user.name && { name: { formatted: user.name }, displayName: user.name }),
    emails: user.email ? [{ value: user.email, type: 'work', primary: true }] : [],
    active: member !== null,
    meta: { resourceType: 'User', location: `${call.baseUrl}/Users/${encodeURIComponent(user.id)}` },
  }
}
