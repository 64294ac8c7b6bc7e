/**
 * OpenID Connect Back-Channel Logout when the site ends a user's every session (signing out
 * everywhere, an administrator's revocation, a ban): each app the user signed in to through the
 * provider, and that registered a `backchannel_logout_uri`, is sent a logout token, as oidc-provider
 * sends them from its own end of session. The provider's sessions (its records) say which apps and
 * with which `sid`; this runs before the wing deletes them. oidc-provider is loaded only when there is
 * such a session.
 *
 * @see https://openid.net/specs/openid-connect-backchannel-1_0.html
 */
import type { ResolvedConfig } from '../../config/types.js'
import { recordsOf } from './config.js'

/** Sends the logout tokens of `userId`'s provider sessions; a failure is logged, never thrown. */
export async function logoutEverywhere(config: ResolvedConfig, userId: string): Promise<void> {
  const sessions = await recordsOf(config).listOAuthRecords(userId, 'Session')
  const signedIn = sessions.flatMap((session) => Object.entries((session.payload['authorizations'] ?? {}) as Record<string, { sid?: string }>).map(([clientId, { sid }]) => ({ clientId, sid })))
  if (signedIn.length === 0) return
  const { provider } = await (await import('./provider.js')).serverOf(config)
  await Promise.all(
    signedIn.map(async ({ clientId, sid }) => {
      try {
        const client = (await provider.Client.find(clientId)) as { backchannelLogoutUri?: string; backchannelLogout(sub: string, sid?: string): Promise<void> } | undefined
        if (client?.backchannelLogoutUri) await client.backchannelLogout(userId, sid)
      } catch (error) {
        config.logger.warn('AuthorizationServerLogoutFailed', `The back-channel logout of client ${clientId} failed: ${(error as Error).message}`)
      }
    }),
  )
}
