/**
 * Passkeys (WebAuthn, `Passkey()`): sign-in with a passkey, registration by a signed-in user, the
 * passkeys page, removal. `@simplewebauthn/server` and the ceremony code load on the first options
 * request or callback; the page script is served from here.
 */
import { authUrl } from '../../actions/context.js'
import type { Feature } from '../../composition/index.js'
import type { PasskeyConfig } from '../../providers/passkey.js'
import { createListPasskeys, type ListPasskeysFunction } from './api/list-passkeys.js'
import { createRemovePasskey, type RemovePasskeyFunction } from './api/remove-passkey.js'
import { assertPasskeyAdapter, PASSKEY_ADAPTER_METHODS, resolvePasskeyProvider, type PasskeyProvider } from './provider.js'
import { pageScript, removeUnlinkedCredential } from './routes/shared.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface PasskeyApi {
  /** The signed-in user's passkeys (with a passkey provider). */
  listPasskeys: ListPasskeysFunction
  /** Removes one of the signed-in user's passkeys, unless it is their last way to sign in (CSRF-checked). */
  removePasskey: RemovePasskeyFunction
}

export const passkeyFeature: Feature = {
  name: 'passkey',
  providers: {
    kind: 'passkey',
    types: ['webauthn'],
    claims: (provider) => provider.type === 'webauthn',
    resolve: (provider: PasskeyConfig, init) => resolvePasskeyProvider(provider, init.url),
    // A POST of the passkey response; CSRF-checked there.
    callback: async () => (await import('./routes/callback.js')).passkeyCallback,
    resume: async () => (await import('./routes/callback.js')).resumePasskeySignIn,
    signInPage: (ctx, provider: PasskeyProvider) => ({
      posts: 'callback',
      optionsUrl: `${ctx.basePath}/webauthn-options/${provider.id}`,
      conditional: provider.enableConditionalUI,
      script: { page: pageScript(ctx), url: authUrl(ctx, '/webauthn.js') },
    }),
  },
  routes: [
    { method: 'GET', path: '/passkeys', page: true, load: async () => (await import('./routes/page.js')).passkeysPage },
    { method: 'GET', path: '/webauthn.js', page: true, load: async () => (await import('./routes/script.js')).webauthnScript },
    // It stores a challenge, so it is no page: HEAD does not run it.
    { method: 'GET', path: '/webauthn-options/:provider', load: async () => (await import('./routes/options.js')).webauthnOptions as never },
    { method: 'POST', path: '/passkeys/remove', csrf: true, load: async () => (await import('./routes/remove.js')).removePasskey },
  ],
  off: 'No passkey provider is configured: add Passkey() from "portcullis/providers/passkey" to providers.',
  check(config) {
    for (const provider of config.providers) if (provider.type === 'webauthn') assertPasskeyAdapter(provider.id, config.adapter)
  },
  hooks: {
    // The credential of a passkey's account goes with it, as removePasskey() removes one.
    accountUnlinked: async (config, account) => {
      if (account.type === 'webauthn') await removeUnlinkedCredential(config, account)
    },
  },
  api: (api): PasskeyApi => ({ listPasskeys: createListPasskeys(api), removePasskey: createRemovePasskey(api) }),
  adapterMethods: PASSKEY_ADAPTER_METHODS,
  events: ['passkeyAdded', 'passkeyRemoved', 'linkAccount'],
  errors: ['WebAuthnVerificationError', 'AccountUnlinkError'],
  rateLimitBuckets: ['passkey-challenge'],
  // A passkey ceremony is seconds long; the challenge inside expires with the cookie (Auth.js's name).
  cookies: { webauthnChallenge: { name: 'authjs.challenge', maxAge: 5 * 60 } },
}
