/**
 * Password accounts (`Password()`): sign-up with a verified address, sign-in, forgotten and changed
 * passwords, scrypt hashes and NIST's policy. A credentials provider to clients; its code past this
 * declaration (hashing, the policy, the word list, mail) loads on first use.
 */
import type { Feature } from '../../composition/index.js'
import type { ResolvedConfig } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { assertMailedLinks } from '../../mail/site-url.js'
import type { PasswordConfig } from '../../providers/password.js'
import { assertCredentialsUser } from '../credentials/feature.js'
import { assertFormPost } from '../credentials/form.js'
import { createChangePassword, type ChangePasswordFunction } from './api/change-password.js'
import { createSignUp, type SignUpFunction } from './api/sign-up.js'
import { createChangeUsername, type ChangeUsernameFunction } from './api/change-username.js'
import { loadAccounts } from './load.js'
import { announceHashing, assertPasswordAdapter, isPasswordProvider, PASSWORD_ADAPTER_METHODS, resolvePasswordProvider, type PasswordAdapter, type PasswordProvider } from './provider.js'

const OFF = 'No password provider is configured: add Password() from "portcullis/providers/password" to providers.'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface PasswordApi {
  /** Signs up with the password provider from the app's own form (CSRF-checked; the same outcome for a new and a taken address). */
  signUp: SignUpFunction
  /** Changes the signed-in user's password (the current one checked) and ends their other sessions (CSRF-checked). */
  changePassword: ChangePasswordFunction
  /** Changes the signed-in user's username (the provider's `usernames` option; CSRF-checked; `taken` is said). */
  changeUsername: ChangeUsernameFunction
}

export const passwordFeature: Feature = {
  name: 'password',
  requires: ['credentials'],
  providers: {
    kind: 'password',
    types: ['credentials'],
    signsInAtOnce: true,
    // Resolved after the others: it may send its mail through a Nodemailer provider's server.
    late: true,
    single: 'Two password providers are configured: one is enough (its routes, /signup and /forgot-password, are shared).',
    claims: (provider) => isPasswordProvider(provider as { type: string }),
    resolve: (provider: PasswordConfig, init) => {
      const nodemailer = init.resolved.find((candidate) => candidate.type === 'email' && 'server' in candidate) as { server?: unknown; from?: unknown } | undefined
      return resolvePasswordProvider(provider, init.env, init.production, nodemailer)
    },
    callback: async () => {
      const [{ signInWithPassword }, { PasswordBusyError }, { busySignIn }] = await Promise.all([loadAccounts(), import('./errors.js'), import('./routes/busy.js')])
      return async (ctx, provider: PasswordProvider) => {
        assertFormPost(ctx, provider)
        try {
          return await signInWithPassword(ctx, provider, ctx.body)
        } catch (error) {
          // The cap on concurrent hashes is full: 503 with Retry-After, the same for every address.
          if (error instanceof PasswordBusyError) return busySignIn(ctx, error)
          throw error
        }
      }
    },
    submit: async () => (await loadAccounts()).signInWithPassword,
    resume: async () => (await import('./resume.js')).resumePasswordSignIn,
    signInPage: (ctx, provider: PasswordProvider, callbackUrl) => ({
      posts: 'callback',
      credentials: provider.credentials,
      links: [
        { href: `${ctx.basePath}/forgot-password`, label: 'Forgot your password?' },
        { href: `${ctx.basePath}/signup?${new URLSearchParams({ callbackUrl })}`, label: 'Create an account' },
      ],
      resendAction: `${ctx.basePath}/verify-email/resend`,
    }),
  },
  routes: [
    { method: 'GET', path: '/signup', page: true, load: async () => (await import('./routes/signup.js')).signUpPage },
    { method: 'GET', path: '/forgot-password', page: true, load: async () => (await import('./routes/forgot.js')).forgotPasswordPage },
    // Shows the form; the token is used only by its POST.
    { method: 'GET', path: '/reset-password', page: true, load: async () => (await import('./routes/reset.js')).resetPasswordPage },
    // Uses its link's token when the asking browser opens it: no page, HEAD does not run it.
    { method: 'GET', path: '/verify-email', load: async () => (await import('./routes/verify-email.js')).verifyEmailLink },
    // The signed-in user's username (with `usernames` on; the route answers 400 without it).
    { method: 'GET', path: '/username', page: true, load: async () => (await import('./routes/username.js')).usernamePage },
    { method: 'POST', path: '/username', csrf: true, load: async () => (await import('./routes/username.js')).changeUsernameAction },
    // The signed-in user's new password, with the current one.
    { method: 'GET', path: '/change-password', page: true, load: async () => (await import('./routes/change-password.js')).changePasswordPage },
    { method: 'POST', path: '/change-password', csrf: true, load: async () => (await import('./routes/change-password.js')).changePasswordAction },
    { method: 'POST', path: '/signup', csrf: true, load: async () => (await import('./routes/signup.js')).signUpAction },
    { method: 'POST', path: '/verify-email', csrf: true, load: async () => (await import('./routes/verify-email.js')).verifyEmailLink },
    { method: 'GET', path: '/verify-email/code', page: true, load: async () => (await import('./routes/verify-code.js')).signUpCodePage },
    { method: 'POST', path: '/verify-email/code', csrf: true, load: async () => (await import('./routes/verify-code.js')).signUpCodeAction },
    { method: 'POST', path: '/verify-email/resend', csrf: true, load: async () => (await import('./routes/verify-email.js')).resendVerificationLink },
    { method: 'POST', path: '/forgot-password', csrf: true, load: async () => (await import('./routes/forgot.js')).forgotPasswordAction },
    { method: 'POST', path: '/reset-password', csrf: true, load: async () => (await import('./routes/reset.js')).resetPasswordAction },
  ],
  off: OFF,
  hooks: {
    // Once per process: new passwords get scrypt where this Node has no Argon2id.
    started: (config) => {
      const provider = config.providers.find(isPasswordProvider)
      if (provider) announceHashing(provider, config.logger)
    },
    // A password sign-up proves nothing of the address: another way of proving it takes back what it gave.
    addressProven: async (ctx, user, provider) => (await import('./claim.js')).claimUnverifiedAccount(ctx, user, provider),
    signsInWithoutAccount: async (_ctx, adapter, userId) => typeof adapter.getUserPassword === 'function' && (await adapter.getUserPassword(userId)) !== null,
    // A fresh sign-in's confirmation (the account page): the user's password, when they have one.
    confirmationMethods: async (ctx, userId) => {
      const adapter = ctx.config.adapter
      if (typeof adapter?.getUserPassword !== 'function' || (await adapter.getUserPassword(userId)) === null) return []
      return [{ method: 'password', label: 'Password', field: 'password', input: 'password' }]
    },
    confirmSignIn: async (ctx, userId, method, fields) => {
      if (method !== 'password') return false
      const provider = ctx.config.providers.find(isPasswordProvider)
      if (!provider) return false
      await (await loadAccounts()).confirmPassword(ctx, provider, userId, fields.password)
      return true
    },
  },
  check: assertPasswordSignIn,
  api: (api): PasswordApi => ({ signUp: createSignUp(api), changePassword: createChangePassword(api), changeUsername: createChangeUsername(api) }),
  adapterMethods: PASSWORD_ADAPTER_METHODS,
  events: ['createUser', 'updateUser', 'signIn', 'passwordChanged'],
  errors: ['CredentialsSignin', 'PasswordPolicy', 'Username', 'Verification', 'EmailSignInError', 'PasswordBusy'],
  rateLimitBuckets: ['ip', 'identifier', 'password-signup', 'password-reset', 'password-username'],
  cookies: { signUpCode: { name: 'authjs.sign-up-code', maxAge: 15 * 60 } },
}

/**
 * The password provider's needs: an adapter with its methods, a site URL for its links, and a way to
 * end a user's sessions (a reset ends them all, a change the others).
 */
function assertPasswordSignIn(config: ResolvedConfig): void {
  assertCredentialsUser(config)
  const provider = config.providers.find((candidate) => isPasswordProvider(candidate))
  if (!provider) return
  const { adapter, session } = config
  assertPasswordAdapter(provider.id, adapter, provider.password.usernames !== undefined)
  assertMailedLinks(`The password provider "${provider.id}"`, config)
  if (session.strategy === 'jwt' && !session.store) {
    throw new InvalidConfigurationError(
      `The password provider "${provider.id}" ends a user's sessions when their password is reset or changed, which JWT sessions can only do with session.store ('memory', { redis }, { knex }): set it, or use database sessions (the default with an adapter).`,
    )
  }
  if (session.strategy === 'database' && typeof (adapter as Partial<PasswordAdapter> | undefined)?.deleteSessionsByUserId !== 'function') {
    throw new InvalidConfigurationError(`The password provider "${provider.id}" ends a user's sessions when their password is reset or changed: the adapter needs deleteSessionsByUserId (KnexAdapter has it).`)
  }
}
