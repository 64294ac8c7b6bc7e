/**
 * GET, POST /callback/:provider: the end of a sign-in, by provider type. The OAuth, OIDC, e-mail and
 * passkey paths are imported on their first use, so openid-client, the e-mail code and the passkey
 * verification load only when someone signs in with them.
 */
import { UnknownActionError } from '../../errors.js'
import { assertCsrf, type Action } from '../context.js'
import { findProvider } from '../signin.js'
import { keepRefusedForm } from '../signin-form.js'
import { signInWithCredentials } from './credentials.js'

export const callback =
  (providerId: string): Action =>
  async (ctx) => {
    const provider = findProvider(ctx, providerId)
    switch (provider.type) {
      case 'credentials':
        if (ctx.method !== 'POST') throw new UnknownActionError(`The ${provider.id} callback takes a POST of the sign-in form.`)
        assertCsrf(ctx)
        return keepRefusedForm(ctx, provider, () => signInWithCredentials(ctx, provider, ctx.body))
      // A POST here is the provider's response_mode=form_post: it carries the state and PKCE
      // checks, not a CSRF token.
      case 'oauth':
        return (await (oauthModule ??= import('./oauth.js'))).oauthCallback(ctx, provider)
      case 'oidc':
        return (await (oidcModule ??= import('./oidc.js'))).oidcCallback(ctx, provider)
      // The link of the sign-in e-mail: its single-use token is the proof, not a CSRF token.
      case 'email':
        return (await (emailModule ??= import('./email.js'))).emailCallback(ctx, provider)
      // A POST of the passkey response; CSRF-checked there.
      case 'webauthn':
        return (await (passkeyModule ??= import('./passkey.js'))).passkeyCallback(ctx, provider)
    }
  }

// Imported once, on first use; kept so later callbacks skip the loader (costly under tsx).
let oauthModule: Promise<typeof import('./oauth.js')> | undefined
let oidcModule: Promise<typeof import('./oidc.js')> | undefined
let emailModule: Promise<typeof import('./email.js')> | undefined
let passkeyModule: Promise<typeof import('./passkey.js')> | undefined
