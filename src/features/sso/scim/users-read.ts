/**
 * GET /Users (RFC 7644 §3.4.2: `filter` of `userName eq`, `externalId eq` or `id eq`; `startIndex`,
 * `count`) and GET /Users/:id. Without a filter the list is the organization's members (the active
 * users); a deactivated user is found by a filter or by id.
 */
import type { ScimAnswer } from './answer.js'
import { MAX_RESULTS, type ScimCall } from './call.js'
import { notFound } from './errors.js'
import { listResponse, paging, parseFilter } from './filter.js'
import { markProvider } from './mark.js'
import { markOf, marksOf, scimUserById, scimUserOf, userResource, type ScimUser } from './users.js'

export async function listUsers(call: ScimCall): Promise<ScimAnswer> {
  const filter = parseFilter(call.query.get('filter'), ['username', 'externalid', 'id'])
  const page = paging(call.query, MAX_RESULTS)
  if (filter) {
    const found = await filteredUser(call, filter.attribute, filter.value)
    return { status: 200, body: await listResponse(found ? [found] : [], page, (user) => userResource(call, user)) }
  }
  const members = await call.adapter.listMembers(call.connection.organizationId)
  const shape = async (member: (typeof members)[number]) => userResource(call, { user: { ...member.user, emailVerified: null }, member, mark: (await marksOf(call, member.userId))[0] ?? null })
  return { status: 200, body: await listResponse(members, page, shape) }
}

async function filteredUser(call: ScimCall, attribute: string, value: string): Promise<ScimUser | null> {
  if (attribute === 'id') return scimUserById(call, value)
  // userName is caseExact false (RFC 7643 §4.1.1): addresses are stored and looked up lower case.
  if (attribute === 'username') return value.length > 320 ? null : scimUserOf(call, await call.adapter.getUserByEmail(value.trim().toLowerCase()))
  // externalId is case-exact (RFC 7643 §3.1): the mark holds it as the identity provider sent it.
  return scimUserOf(call, await call.adapter.getUserByAccount({ provider: markProvider(call.sso.id), providerAccountId: markOf(call.connection.id, value, '') }))
}

export async function getUser(call: ScimCall, id: string): Promise<ScimAnswer> {
  const found = await scimUserById(call, id)
  if (!found) throw notFound('User', id)
  return { status: 200, body: userResource(call, found) }
}
