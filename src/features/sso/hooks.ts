/**
 * The SSO wing's part in every sign-in (`FeatureHooks.beforeSession`), loaded on the first sign-in:
 * an organization that signs its members in only through its own identity provider (a connection
 * with `ssoOnly`) refuses any other way in, for its members and for the addresses of its verified
 * domains; a sign-in through a connection makes the user a member of its organization (just-in-time
 * membership, with the connection's default role). Run before the session exists, after a further
 * factor too, so that no way in skips them.
 */
import type { ActionContext } from '../../actions/context.js'
import type { Account, AdapterUser, User } from '../../types.js'
import { ssoAdapter } from './adapter.js'
import { connectionIdOfAccount } from './complete.js'
import type { SsoProvider } from './config.js'
import { domainOfAddress } from './discovery.js'
import { SsoError } from './errors.js'
import { isMarkOf, markProvider } from './scim/mark.js'

/**
 * @throws SsoError `sso_required` when an SSO-only organization binds the user and the sign-in is not
 *   through one of that organization's connections.
 */
export async function beforeSsoSession(ctx: ActionContext, sso: SsoProvider, user: User | AdapterUser, account: Account): Promise<void> {
  const adapter = ssoAdapter(ctx.config)
  const through = account.provider === sso.id ? await adapter.getSsoConnection(connectionIdOfAccount(account.providerAccountId)) : null
  const userId = typeof user.id === 'string' && user.id !== '' ? user.id : null
  const bound = await adapter.ssoOnlyOrganizations(userId, domainOfAddress(user.email))
  // Every binding organization's rule holds only if the sign-in came through its own identity
  // provider: one that binds and is not the connection's keeps the user out (docs/sso.md, "SSO-only").
  const outside = bound.filter((organizationId) => organizationId !== through?.organizationId)
  if (outside.length > 0) {
    throw new SsoError('sso_required', `Sign-in of user ${userId ?? '(new)'} with ${account.provider} refused: organization ${outside.join(', ')} signs its members (and its domains' addresses) in only through its own identity provider.`)
  }
  if (!through || !userId) return
  if (await adapter.getMember(through.organizationId, userId)) return
  // A user the connection's SCIM client deactivated stays out of the organization: the identity
  // provider's word over SCIM is not undone by a sign-in (docs/sso.md, "SCIM provisioning").
  const accounts = (await ctx.config.adapter?.getAccountsByUserId?.(userId)) ?? []
  if (accounts.some((held) => held.provider === markProvider(sso.id) && isMarkOf(through.id, held.providerAccountId))) return
  // A first sign-in through the connection: a member, with its role (addMember answers null on a race's second insert).
  await adapter.addMember({ organizationId: through.organizationId, userId, roles: [through.defaultRole] })
}
