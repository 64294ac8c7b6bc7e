/**
 * The mark of a user a connection's SCIM client provisioned: an account row of provider
 * `<SSO provider id>:scim` (so it is never a way in: no provider of that id signs anyone in, nor is
 * it counted as one), `type: 'sso'`, `<connection id>:scim:<externalId>` when the identity provider gave an externalId
 * (so `externalId eq` is one indexed lookup), else `<connection id>:scim-user:<user id>`. It outlives
 * a deactivation (the membership goes, the mark stays) and goes with a DELETE; its user cannot
 * remove it (`unlinkAccount()` leaves it: the feature's `keepsAccount` hook).
 */

/** The account provider of the SSO provider's marks. */
export function markProvider(ssoId: string): string {
  return `${ssoId}:scim`
}

/** The mark of a user provisioned by the connection. */
export function markOf(connectionId: string, externalId: string | null, userId: string): string {
  return externalId === null ? `${connectionId}:scim-user:${userId}` : `${connectionId}:scim:${externalId}`
}

/** Whether `providerAccountId` (of the SSO provider) is a mark of the connection. */
export function isMarkOf(connectionId: string, providerAccountId: string): boolean {
  return providerAccountId.startsWith(`${connectionId}:scim:`) || providerAccountId.startsWith(`${connectionId}:scim-user:`)
}
