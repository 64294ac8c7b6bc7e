/**
 * Credentials sign-in: the app's own `authorize(credentials, req)` checks the posted form, with JWT
 * or database sessions (Auth.js refuses the second). The password provider builds on it.
 */
import type { Feature } from '../../composition/index.js'
import type { ResolvedConfig } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { MissingAuthorizeError } from './errors.js'
import type { CredentialsProvider } from '../../providers/credentials.js'

export const credentialsFeature: Feature = {
  name: 'credentials',
  providers: {
    kind: 'credentials',
    types: ['credentials'],
    signsInAtOnce: true,
    claims: (provider) => provider.type === 'credentials',
    resolve: (provider: CredentialsProvider) => {
      if (typeof provider.authorize !== 'function') throw new MissingAuthorizeError(provider.id)
      // A shallow copy, frozen: the caller's provider object stays as it was given.
      return Object.freeze({ ...provider })
    },
    callback: async () => (await import('./routes/callback.js')).credentialsCallback,
    submit: async () => (await import('./routes/callback.js')).signInWithCredentials,
    resume: async () => (await import('./resume.js')).resumeCredentialsSignIn,
    signInPage: (_ctx, provider: CredentialsProvider) => ({ posts: 'callback', credentials: provider.credentials }),
  },
  check: assertCredentialsUser,
  adapterMethods: ['getUser'],
  events: ['signIn'],
  errors: ['CredentialsSignin', 'MissingAuthorize'],
  rateLimitBuckets: ['ip', 'identifier'],
}

/**
 * Credentials sign-in finds the session's user row by the id `authorize` returned.
 * @throws InvalidConfigurationError with database sessions and an adapter without getUser.
 */
export function assertCredentialsUser(config: ResolvedConfig): void {
  if (config.session.strategy === 'database' && typeof config.adapter?.getUser !== 'function') {
    throw new InvalidConfigurationError('Credentials sign-in with database sessions needs an adapter with getUser(); add it, or use session.strategy "jwt".')
  }
}
