/**
 * What the account wing adds to the shared interfaces, by module augmentation: its option on
 * `PortcullisConfig`, its event on `EventsOptions`.
 */
import type { AdapterUser, Awaitable, CookieOption } from '../../types.js'

/** The mail the account wing sends (a deletion's notice), as `account.sendMail` receives it. */
export interface AccountMail {
  /**
   * The deletion's notice; with a grace period, the notice of the deletion to come and of its
   * cancellation by a sign-in; the change of address's link, its notice to the old address, and a
   * taken address's notice; the link that confirms a session before a sensitive action (`confirm-sign-in`).
   */
  kind: 'account-deleted' | 'account-deletion-scheduled' | 'account-restored' | 'change-email' | 'email-changed' | 'address-taken' | 'confirm-sign-in'
  to: string
  subject: string
  text: string
  html: string
}

/** The `account` option: the account page, a fresh sign-in before sensitive actions, deleting the account. */
export interface AccountOptions {
  /**
   * How long (seconds) a sign-in or a confirmation counts as recent for the built-in sensitive
   * actions (changing the address or the password, the second factor or the passkeys, deleting the
   * account); older, the user confirms who they are first. Default 600 (ten minutes).
   */
  recentSignInMaxAge?: number | undefined
  /**
   * The SMTP server of the account's mails (a URL, nodemailer options, or `'console'`). Default: the
   * server of a configured e-mail provider (Nodemailer); without any, no mail is sent (a warning says so).
   */
  server?: string | Record<string, unknown> | undefined
  /** The sender of the account's mails; default: that e-mail provider's. */
  from?: string | undefined
  /**
   * Whether a change of e-mail address keeps the user's other sessions. Default false: every other
   * session ends when the new address is confirmed (this one stays).
   */
  keepOtherSessionsOnEmailChange?: boolean | undefined
  /**
   * Seconds between the user's deletion of their account and the deletion of its rows. Default 0:
   * at once. Above 0, `deleteAccount()` ends every session and marks the user deleted; a sign-in by
   * any method within the period restores the account as it was (the same user, every way in), and
   * the background prune (`prune` option, required then) deletes it for good once the period is
   * over. See docs/account.md.
   */
  deletionGracePeriod?: number | undefined
  /**
   * What the change of address's mail to the new address carries: `'link'` (the default), `'code'` (a
   * six-digit code, typed on the account page in the browser that asked), or `'both'`. A code is
   * stored hashed, bound to the browser and the user, single use, void after five wrong tries,
   * rate-limited per address and client, and works for fifteen minutes. See docs/account.md.
   */
  emailChangeBy?: 'link' | 'code' | 'both' | undefined
  /** Sends the account's mails yourself instead. */
  sendMail?: ((mail: AccountMail) => Awaitable<void>) | undefined
}

declare module '../../types.js' {
  interface CookiesOptions {
    /**
     * The change of address's code (`account.emailChangeBy` `'code'` or `'both'`): a random nonce that
     * binds the code to the browser that asked (`authjs.email-change-code`, 15 minutes). Not an Auth.js cookie.
     */
    emailChangeCode: CookieOption
  }
}

declare module '../../types.js' {
  // A deleted account (all the user's sessions) and a changed address (the others; all after an undo).
  interface SessionRevocationCauses {
    accountDeleted: true
    emailChanged: true
  }
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /**
     * The account's own page (`/account`), the confirmation of a fresh sign-in before sensitive
     * actions (`requireRecentSignIn`), and deleting one's account (`deleteAccount`). `true` or an
     * object turns it on. See docs/account.md.
     */
    account?: AccountOptions | boolean | undefined
  }
}

declare module '../../types.js' {
  // The deletion grace period's marks (account.deletionGracePeriod), in the users table.
  interface Adapter {
    /** Marks the user deleted at `at` (the start of the grace period); `false` when there is no such user. */
    markUserDeleted?(userId: string, at: Date): Promise<boolean>
    /**
     * Clears the user's mark (a sign-in within the grace period); `true` when the user was marked.
     * Atomic with `deleteUser`'s `markedBefore`: of the two, one wins.
     */
    restoreDeletedUser?(userId: string): Promise<boolean>
    /** Up to `limit` ids of the users marked deleted before `before`, for the prune. */
    listUsersMarkedDeleted?(before: Date, limit: number): Promise<string[]>
  }
}

declare module '../../types.js' {
  interface EventsOptions {
    /**
     * The user deleted their account (`deleteAccount()` or the account page), or its deletion grace
     * period ran out (the prune): every row of theirs is gone and their sessions ended. Delete the
     * app's own data of the user here.
     */
    userDeleted?: ((message: { user: AdapterUser }) => Awaitable<void>) | undefined
    /**
     * With `account.deletionGracePeriod`: the user deleted their account, which is marked and signed
     * out everywhere; its rows go at `deleteAt` (then `userDeleted` follows) unless the user signs
     * in before.
     */
    userDeletionScheduled?: ((message: { user: AdapterUser; deleteAt: Date }) => Awaitable<void>) | undefined
    /** A sign-in within the deletion grace period restored the user's account: its deletion is cancelled. */
    userRestored?: ((message: { user: AdapterUser }) => Awaitable<void>) | undefined
    /** The user's address changed (`changeEmail()` confirmed by the new address's link), or was put back by the old address's undo link. */
    emailChanged?: ((message: { user: AdapterUser; previousEmail: string | null }) => Awaitable<void>) | undefined
  }
}
