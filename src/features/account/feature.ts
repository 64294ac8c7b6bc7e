/**
 * The account a user manages alone (`account` option): the account page (`/account`), a fresh
 * sign-in before sensitive actions (`requireRecentSignIn`, the confirmation page), linked accounts
 * (connect, disconnect), changing the e-mail address (`changeEmail`), and deleting the account
 * (`deleteAccount`), at once or after a grace period in which a sign-in restores it (grace.ts). The session's record of its
 * last confirmation is the core's (session/confirmation.ts): it lives in the session itself. The
 * ways to confirm are the features' (`confirmationMethods`, `confirmSignIn`, the second factor's
 * `hasFurtherFactor`/`checkFurtherFactor`), asked through their hooks, and a mailed link
 * (confirm-link.ts). The other wings' sensitive actions (the password, the second factor, the
 * passkeys) ask this wing through the core's `sensitiveAction` hook (actions/sensitive.ts).
 */
import type { Feature } from '../../composition/index.js'
import { createChangeEmail, type ChangeEmailFunction } from './api/change-email.js'
import { createDeleteAccount, type DeleteAccountFunction } from './api/delete-account.js'
import { createRequireRecentSignIn, type RequireRecentSignInFunction } from './api/require-recent-sign-in.js'
import { ACCOUNT_ADAPTER_METHODS, GRACE_ADAPTER_METHODS, accountEnabled, accountOf, assertAccount, resolveAccount } from './config.js'
import './types.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface AccountApi {
  /** Whether the session was signed in or confirmed within `maxAge` seconds; with options only, the middleware that sends the user to confirm. */
  requireRecentSignIn: RequireRecentSignInFunction
  /** Deletes the signed-in user's account after a recent sign-in (CSRF-checked). */
  deleteAccount: DeleteAccountFunction
  /** Mails a new address the link that moves the signed-in user's account to it, after a recent sign-in (CSRF-checked). */
  changeEmail: ChangeEmailFunction
}

export const accountFeature: Feature = {
  name: 'account',
  enabled: accountEnabled,
  // Asked of every config: undefined (off) unless `account` is given.
  resolve: (config) => (accountEnabled(config) ? resolveAccount(config.account) : undefined),
  check: assertAccount,
  routes: [
    { method: 'GET', path: '/account', page: true, load: async () => (await import('./routes/page.js')).accountPage },
    { method: 'GET', path: '/account/confirm', page: true, load: async () => (await import('./routes/confirm.js')).confirmPage },
    { method: 'POST', path: '/account/confirm', csrf: true, load: async () => (await import('./routes/confirm.js')).confirmAction },
    { method: 'POST', path: '/account/confirm/email', csrf: true, load: async () => (await import('./routes/confirm-link.js')).sendConfirmLinkAction },
    // Uses its link's token in the browser that asked for it: no page, HEAD does not run it.
    { method: 'GET', path: '/account/confirm/email', load: async () => (await import('./routes/confirm-link.js')).confirmByLink },
    { method: 'POST', path: '/account/delete', csrf: true, load: async () => (await import('./routes/delete.js')).deleteAccountAction },
    { method: 'POST', path: '/account/email', csrf: true, load: async () => (await import('./routes/email.js')).requestEmailChangeAction },
    // Uses its link's token when the same user, signed in, opens it: no page, HEAD does not run it.
    { method: 'GET', path: '/account/email/verify', load: async () => (await import('./routes/email.js')).verifyEmailChange },
    { method: 'POST', path: '/account/email/code', csrf: true, load: async () => (await import('./routes/email.js')).emailChangeCodeAction },
    { method: 'GET', path: '/account/email/undo', page: true, load: async () => (await import('./routes/email.js')).undoEmailChangePage },
    { method: 'POST', path: '/account/email/undo', csrf: true, load: async () => (await import('./routes/email.js')).undoEmailChangeAction },
    { method: 'POST', path: '/account/disconnect', csrf: true, load: async () => (await import('./routes/disconnect.js')).disconnectAction },
    { method: 'GET', path: '/account/restored', page: true, load: async () => (await import('./routes/restored.js')).restoredPage },
  ],
  hooks: {
    // The other wings' sensitive actions (the password, the second factor, the passkeys) ask here.
    sensitiveAction: async (ctx, what, returnTo) => {
      await (await import('./recent.js')).requireRecentFor(ctx, accountOf(ctx.config).recentSignInMaxAge, what, returnTo)
    },
    // Every sign-in method's finish: an account in its deletion grace period is restored.
    sessionStarted: async (ctx, user, redirect) => (await import('./grace.js')).restoreOnSignIn(ctx, user, redirect),
    // The background prune: accounts whose grace period is over are deleted.
    prune: async (config, signal) => (await import('./prune-deleted.js')).pruneDeletedAccounts(config, signal),
  },
  off: 'The account page is off: set account: true (or an object) in the Portcullis config. See docs/account.md.',
  api: (api): AccountApi => ({ requireRecentSignIn: createRequireRecentSignIn(api), deleteAccount: createDeleteAccount(api), changeEmail: createChangeEmail(api) }),
  adapterMethods: [...ACCOUNT_ADAPTER_METHODS, ...GRACE_ADAPTER_METHODS, 'deleteSessionsByUserId', 'getSessionConfirmation', 'unlinkAccount'],
  cookies: { emailChangeCode: { name: 'authjs.email-change-code', maxAge: 15 * 60 } },
  // The change of address's codes (per address and client), the mailed confirmation links (per user).
  rateLimitBuckets: ['ip', 'identifier', 'account-confirm-link'],
  events: ['userDeleted', 'userDeletionScheduled', 'userRestored', 'emailChanged', 'updateUser', 'sessionRevoked'],
  errors: ['AccountError', 'RecentSignInRequired', 'AccountUnlinkError', 'PasswordPolicy', 'TwoFactor', 'RateLimited'],
}
