/**
 * What the password wing adds to the shared types: its provider shape, the adapter's password-hash
 * methods and its causes of ended sessions (TypeScript declaration merging; `src/index.ts` re-exports this module).
 */
import type { PasswordConfig } from '../../providers/password.js'
import type { AdapterUser, CookieOption } from '../../types.js'

declare module '../../types.js' {
  interface Adapter {
    /**
     * The user's stored password hash (what `setUserPassword` stored), or `null` when they have none.
     * Not in Auth.js's set: the `Password` provider needs it.
     */
    getUserPassword?(userId: string): Promise<string | null>
    /**
     * Stores (or replaces) the user's password hash, a self-describing string such as
     * `$scrypt$ln=17,r=8,p=1$…$…`. Never a password: the provider hashes first.
     */
    setUserPassword?(userId: string, hash: string): Promise<void>
    /**
     * Deletes the user's password hash; `true` when there was one. Called when the owner of an address
     * proves it (e-mail link, OAuth) for an account whose password was set by someone who never did.
     */
    deleteUserPassword?(userId: string): Promise<boolean>
    /**
     * The user whose username has the skeleton `key` (the `usernames` option's unique key, e.g. `ada`
     * for `Ada`, `a.da` and `ａｄａ`), or `null`.
     */
    getUserByUsername?(key: string): Promise<AdapterUser | null>
    /** The user's username as chosen (NFKC, trimmed, letter case kept), or `null` when they have none. */
    getUsername?(userId: string): Promise<string | null>
    /**
     * Gives the user the username `username` under the skeleton `key`, replacing theirs, in one write:
     * `false`, and nothing changed, when another user has `key` (the unique index decides, so of two
     * concurrent claims one wins). Throws only for other failures.
     */
    setUsername?(userId: string, username: string, key: string): Promise<boolean>
    /**
     * Deletes the user's username; `true` when there was one. Called when the owner of an address
     * proves it for an account whose password (and username) was set by someone who never did.
     */
    deleteUsername?(userId: string): Promise<boolean>
  }

  // A password reset (all the user's sessions), `changePassword()` (all but the one asking), and an
  // unverified account claimed by its address's owner (all; see docs/passwords.md). No TSDoc here:
  // the interface's own comment is the core's.
  interface SessionRevocationCauses {
    resetPassword: true
    changePassword: true
    addressClaimed: true
  }
}

declare module '../../types.js' {
  interface EventsOptions {
    /** The user's password was changed (`by: 'change'`: `changePassword()` or its page) or set by a reset link (`by: 'reset'`). */
    passwordChanged?: ((message: { user: AdapterUser; by: 'change' | 'reset' }) => Awaitable<void>) | undefined
  }

  interface CookiesOptions {
    /**
     * The sign-up's verification code (`Password({ verifyBy: 'code' | 'both' })`): a random nonce that
     * binds the code to the browser that signed up (`authjs.sign-up-code`, 15 minutes). Not an Auth.js cookie.
     */
    signUpCode: CookieOption
  }
}

declare module '../../config/types.js' {
  interface ProviderConfigs {
    password: PasswordConfig
  }
}
