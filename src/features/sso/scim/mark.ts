/**
 * The mark of a user a connection's SCIM client provisioned: an account row of the SSO provider,
 * `type: 'sso'`, `<connection id>:scim:<externalId>` when the identity provider gave an externalId
 * (so `externalId eq` is one indexed lookup), else `<connection id>:scim-user:<user id>`. It outlives
 * a deactivation (the membership goes, the mark stays) and goes with a DELETE. Account ids of the
 * connection's sign-ins are `<connection id>:<subject>`: the same identity provider answers both.
 */

/** The mark of a user provisioned by the connection. */
export function markOf(connectionId: string, externalId: string | null, userId: string): string {
  return externalId === null ? `${connectionId}:scim-user:${userId}` : `${connectionId}:scim:${externalId}`
}

/** Whether `providerAccountId` (of the SSO provider) is a mark of the connection. */
export function isMarkOf(connectionId: string, providerAccountId: string): boolean {
  return providerAccountId.startsWith(`${connectionId}:scim:`) || providerAccountId.startsWith(`${connectionId}:scim-user:`)
}
