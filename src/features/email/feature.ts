/**
 * Sign-in by a link mailed to the address (`Email`, `Nodemailer`): the link's token stored hashed,
 * single use, bound to the browser that asked. The sending and link code load on first use.
 */
import type { Feature } from '../../composition/index.js'
import { InvalidConfigurationError } from '../../errors.js'
import { assertMailedLinks } from '../../mail/site-url.js'
import type { EmailConfig, EmailProvider } from '../../providers/email.js'
import type { ResolvedConfig } from '../../config/types.js'
import { EMAIL_ADAPTER_METHODS, resolveEmailProvider } from './provider.js'

export const emailFeature: Feature = {
  name: 'email',
  providers: {
    kind: 'email',
    types: ['email'],
    signsInAtOnce: true,
    claims: (provider) => provider.type === 'email',
    resolve: (provider: EmailConfig, init) => resolveEmailProvider(provider, init.env, init.production),
    start: async () => {
      const { signInWithEmail } = await import('./sign-in.js')
      return (ctx, provider: EmailProvider, { fields, callbackUrl }) => signInWithEmail(ctx, provider, { email: fields.email, callbackUrl })
    },
    // The link of the sign-in e-mail: its single-use token is the proof, not a CSRF token.
    callback: async () => (await import('./routes/callback.js')).emailCallback,
    resume: async () => (await import('./resume.js')).resumeEmailSignIn,
  },
  hooks: {
    // A verified address receives the links: a way in that is no account row.
    async signsInWithoutAccount(ctx, adapter, userId) {
      const user = await adapter.getUser?.(userId)
      return typeof user?.email === 'string' && user.email.length > 0 && user.emailVerified != null
    },
  },
  check: assertEmailSignIn,
  adapterMethods: EMAIL_ADAPTER_METHODS,
  events: ['createUser', 'updateUser'],
  errors: ['EmailSignInError', 'Verification'],
  rateLimitBuckets: ['ip', 'identifier'],
}

/**
 * E-mail sign-in stores its tokens and users through the adapter, and mails links whose origin
 * must not come from a Host header a client chose (Host-header poisoning would mail links to the
 * attacker's site). In production that takes AUTH_URL or trustHost: true; in development, without
 * them, links are made for loopback origins only (the router refuses others).
 * @throws InvalidConfigurationError, UntrustedHostError
 */
function assertEmailSignIn(config: ResolvedConfig): void {
  const provider = config.providers.find((candidate) => candidate.type === 'email')
  if (!provider) return
  const { adapter } = config
  if (!adapter) {
    throw new InvalidConfigurationError(
      `E-mail sign-in (provider "${provider.id}") needs an adapter: its one-time tokens are stored in the database. Pass adapter: KnexAdapter(knex) from "portcullis/adapters/knex".`,
    )
  }
  const missing = EMAIL_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) throw new InvalidConfigurationError(`E-mail sign-in (provider "${provider.id}") needs the adapter's ${missing.join(', ')}; this adapter lacks them.`)
  assertMailedLinks(`E-mail sign-in (provider "${provider.id}")`, config)
}
