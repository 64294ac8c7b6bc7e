/**
 * DELETE /Users/:id (RFC 7644 §3.6): the user's membership of the organization removed and every
 * session of theirs ended (the last owner refused: 409), and the connection's mark of them removed,
 * so that the connection no longer sees them (404 after). The user row and their other accounts and
 * memberships stay: the user is the site's, the membership the organization's. 204.
 */
import type { ScimCall } from './call.js'
import { markProvider } from './mark.js'
import { notFound } from './errors.js'
import { deactivate } from './lifecycle.js'
import type { ScimAnswer } from './answer.js'
import { marksOf, scimUserById } from './users.js'

export async function deleteUser(call: ScimCall, id: string): Promise<ScimAnswer> {
  const target = await scimUserById(call, id)
  if (!target) throw notFound('User', id)
  await deactivate(call, id, true)
  for (const mark of await marksOf(call, id)) await call.adapter.unlinkAccount({ provider: markProvider(call.sso.id), providerAccountId: mark.providerAccountId })
  return { status: 204 }
}
