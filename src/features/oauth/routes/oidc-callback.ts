/**
 * GET/POST /callback/:provider for an OpenID Connect provider (`type: 'oidc'`): the ID token is
 * required and validated (signature, `iss`, `aud`, `exp`, `nonce`); the profile is its claims,
 * completed by the userinfo endpoint unless `userinfo: false`. Loaded on the first callback only.
 *
 * @see https://openid.net/specs/openid-connect-core-1_0.html#IDTokenValidation
 * @see https://openid.net/specs/openid-connect-core-1_0.html#UserInfoResponse
 */
import * as oidc from 'openid-client'
import type { AuthResponse } from '../../../http/respond.js'
import { requestedProfile, type ProfileInput } from '../callback.js'
import { hasUserinfoEndpoint } from '../client.js'
import { providerCallback } from './provider-callback.js'
import type { OAuthProvider } from '../provider.js'
import type { Profile } from '../../../providers/oauth.js'
import type { ActionContext } from '../../../actions/context.js'

export function oidcCallback(ctx: ActionContext, provider: OAuthProvider): Promise<AuthResponse> {
  return providerCallback(ctx, provider, { idTokenExpected: true, profile: idTokenProfile })
}

/** The profile of an OIDC callback: the ID token's claims, completed by userinfo's (the SSO wing's OIDC connections too). */
export async function idTokenProfile(input: ProfileInput): Promise<Profile> {
  const { configuration, provider, tokens } = input
  // idTokenExpected: openid-client has validated the ID token, so claims() is set.
  const claims = tokens.claims()! as Profile & { sub: string }
  if (provider.userinfo === false) return { ...claims }
  // Userinfo claims complete the ID token's; `sub` must be the same (openid-client checks it).
  if (provider.userinfo.request) return completed(claims, await requestedProfile(input))
  if (!hasUserinfoEndpoint(configuration)) return { ...claims }
  return completed(claims, await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub))
}

/**
 * The ID token's claims completed by userinfo's, the ID token's `sub` kept. `email_verified` speaks
 * of the address beside it: when userinfo answers another address without saying it is verified,
 * the ID token's `email_verified` is not carried over to that address.
 */
function completed(claims: Profile & { sub: string }, userinfo: Profile): Profile {
  const profile: Profile = { ...claims, ...userinfo, sub: claims.sub }
  if ('email' in userinfo && userinfo.email !== claims.email && !('email_verified' in userinfo)) delete profile.email_verified
  return profile
}
