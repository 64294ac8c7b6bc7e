/**
 * GET/POST /callback/:provider for a plain OAuth 2 provider (`type: 'oauth'`): the profile comes
 * from the userinfo endpoint (or the provider's `userinfo.request`), called with the access token.
 * Loaded on the first callback only (see index.ts).
 */
import * as oidc from 'openid-client'
import { OAuthCallbackError } from '../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { requestedProfile, type ProfileInput } from '../callback.js'
import { providerCallback } from './provider-callback.js'
import type { OAuthProvider } from '../provider.js'
import type { Profile } from '../../../providers/oauth.js'
import type { ActionContext } from '../../../actions/context.js'

export function oauthCallback(ctx: ActionContext, provider: OAuthProvider): Promise<AuthResponse> {
  return providerCallback(ctx, provider, { idTokenExpected: false, profile: userinfoProfile })
}

async function userinfoProfile(input: ProfileInput): Promise<Profile> {
  const { configuration, provider, tokens } = input
  // resolveOAuthProvider requires a userinfo URL or request for `oauth` providers.
  const userinfo = provider.userinfo as Exclude<OAuthProvider['userinfo'], false>
  if (userinfo.request) return requestedProfile(input)
  const url = new URL(userinfo.url!)
  for (const [key, value] of Object.entries(userinfo.params)) url.searchParams.set(key, value)
  const response = await oidc.fetchProtectedResource(configuration, tokens.access_token, url, 'GET', null, new Headers({ accept: 'application/json' }))
  if (!response.ok) throw new OAuthCallbackError('userinfo_failed', `The "${provider.id}" userinfo endpoint answered ${response.status}.`)
  const profile: unknown = await response.json().catch(() => undefined)
  if (!profile || typeof profile !== 'object' || Array.isArray(profile)) throw new OAuthCallbackError('userinfo_failed', `The "${provider.id}" userinfo endpoint did not answer a JSON object.`)
  return profile as Profile
}
