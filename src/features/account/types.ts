/**
 * What the account wing adds to the shared interfaces, by module augmentation: its option on
 * `PortcullisConfig`, its event on `EventsOptions`.
 */
import type { AdapterUser, Awaitable } from '../../types.js'

/** The mail the account wing sends (a deletion's notice), as `account.sendMail` receives it. */
export interface AccountMail {
  /**
   * The deletion's notice; the change of address's link, its notice to the old address, and a taken
   * address's notice; the link that confirms a session before a sensitive action (`confirm-sign-in`).
   */
  kind: 'account-deleted' | 'change-email' | 'email-changed' | 'address-taken' | 'confirm-sign-in'
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
  /** Sends the account's mails yourself instead. */
  sendMail?: ((mail: AccountMail) => Awaitable<void>) | undefined
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
  interface EventsOptions {
    /**
     * The user deleted their account (`deleteAccount()` or the account page): every row of theirs
     * is gone and their sessions ended. Delete the app's own data of the user here.
     */
    userDeleted?: ((message: { user: AdapterUser }) => Awaitable<void>) | undefined
    /** The user's address changed (`changeEmail()` confirmed by the new address's link), or was put back by the old address's undo link. */
    emailChanged?: ((message: { user: AdapterUser; previousEmail: string | null }) => Awaitable<void>) | undefined
  }
}
