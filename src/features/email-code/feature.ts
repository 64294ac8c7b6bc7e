/**
 * Sign-in codes by e-mail (`EmailCode`): a six-digit code mailed to the address and typed on the
 * page that asked for it, stored hashed in the verification-token table, single use, short-lived,
 * bound to the browser that asked, void after five wrong tries. The e-mail wing finishes the
 * sign-in (the code proves what a link proves: the mailbox), so the second factor's `requireForEmail`
 * and the address-proven claim apply to codes as to links.
 */
import type { Feature } from '../../composition/index.js'
import type { ResolvedConfig } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import type { EmailCodeConfig } from '../../providers/email-code.js'
import { EMAIL_CODE_ADAPTER_METHODS, resolveEmailCodeProvider, type EmailCodeProvider } from './provider.js'

export const emailCodeFeature: Feature = {
  name: 'email-code',
  requires: ['email'],
  providers: {
    // The e-mail link's kind: `twoFactor.requireForEmail` covers both, and the pending sign-in resumes as a link's.
    kind: 'email',
    types: ['email'],
    signsInAtOnce: true,
    claims: (provider) => provider.type === 'email' && typeof (provider as { emailCode?: unknown }).emailCode === 'object',
    resolve: (provider: EmailCodeConfig, init) => resolveEmailCodeProvider(provider, init.env, init.production),
    start: async () => {
      const { mailSignInCode } = await import('./routes/start.js')
      return (ctx, provider: EmailCodeProvider, { fields, callbackUrl }) => mailSignInCode(ctx, provider, { email: fields.email, callbackUrl })
    },
    // The code's form: CSRF-checked in the action (POST only).
    callback: async () => (await import('./routes/callback.js')).emailCodeCallback,
    resume: async () => (await import('../email/resume.js')).resumeEmailSignIn,
  },
  hooks: {
    // A verified address receives the codes: a way in that is no account row.
    async signsInWithoutAccount(ctx, adapter, userId) {
      const user = await adapter.getUser?.(userId)
      return typeof user?.email === 'string' && user.email.length > 0 && user.emailVerified != null
    },
  },
  check: assertEmailCodeSignIn,
  adapterMethods: EMAIL_CODE_ADAPTER_METHODS,
  events: ['createUser', 'updateUser'],
  errors: ['EmailSignInError', 'Verification'],
  rateLimitBuckets: ['ip', 'identifier'],
}

/** Codes are stored through the adapter. @throws InvalidConfigurationError */
function assertEmailCodeSignIn(config: ResolvedConfig): void {
  for (const provider of config.providers) {
    if (!('emailCode' in provider)) continue
    const { adapter } = config
    const missing = adapter ? EMAIL_CODE_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function') : []
    if (!adapter || missing.length > 0) {
      throw new InvalidConfigurationError(
        `E-mail code sign-in (provider "${provider.id}") needs an adapter with ${(missing.length > 0 ? missing : EMAIL_CODE_ADAPTER_METHODS).join(', ')}: its codes are stored in the verification-token table. Pass adapter: KnexAdapter(knex) from "portcullis/adapters/knex".`,
      )
    }
  }
}
