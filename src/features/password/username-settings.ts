/**
 * The `usernames` option of `Password()` at init: bounds, pattern and reserved names checked with
 * errors that name what to change, the reserved names turned into skeletons once, the result frozen.
 * The rules themselves (normalising, the skeleton) are in usernames.ts, loaded with the accounts.
 */
import type { UsernameOptions } from '../../providers/password.js'
import { usernameKey } from './username-key.js'

/** The resolved `usernames` option. */
export interface UsernameSettings {
  readonly minLength: number
  readonly maxLength: number
  /** Tested on the name after NFKC and trimming. */
  readonly pattern: RegExp
  /** Whether `pattern` is the default one (the pages then say which characters are allowed). */
  readonly defaultPattern: boolean
  /** The skeletons of the reserved names, built-in and the app's. */
  readonly reserved: ReadonlySet<string>
  readonly required: boolean
}

/** ASCII letters, digits, `.`, `_`, `-`, starting with a letter or a digit. */
export const DEFAULT_USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

// Names a visitor could pass off as the site's own voice, or that collide with paths and values
// apps commonly give a meaning (/me, /settings, "null"). Compared by skeleton: `adm1n` is `admin`.
const BUILT_IN_RESERVED = [
  'admin', 'administrator', 'root', 'superuser', 'sysadmin', 'system', 'support', 'help', 'helpdesk', 'info', 'contact',
  'security', 'abuse', 'postmaster', 'hostmaster', 'webmaster', 'noreply', 'no-reply', 'mail', 'email', 'staff', 'team',
  'moderator', 'mod', 'owner', 'official', 'billing', 'payments', 'sales', 'legal', 'privacy', 'terms',
  'api', 'auth', 'oauth', 'www', 'ftp', 'ssl', 'static', 'assets', 'cdn', 'status', 'blog', 'docs', 'dev',
  'null', 'undefined', 'nil', 'none', 'true', 'false', 'anonymous', 'guest', 'user', 'users', 'everyone', 'all',
  'me', 'self', 'settings', 'account', 'accounts', 'profile', 'dashboard', 'home', 'new', 'edit', 'delete',
  'login', 'logout', 'signin', 'signout', 'signup', 'register', 'session', 'sessions', 'password', 'username',
  'verify', 'callback', 'csrf', 'portcullis',
]

/** The most a username (and its column) holds, in characters. */
export const USERNAME_MAX_LENGTH = 64

/**
 * The settings of `usernames`, or undefined when it is off.
 * @throws what `fail` throws, naming the option.
 */
export function resolveUsernameSettings(option: boolean | UsernameOptions | undefined, fail: (message: string) => never): UsernameSettings | undefined {
  if (option === undefined || option === false) return undefined
  if (option !== true && (typeof option !== 'object' || option === null)) return fail(`usernames must be true or { minLength, maxLength, pattern, reserved, required }; got ${typeof option}.`)
  const given: UsernameOptions = option === true ? {} : option
  const minLength = given.minLength ?? 3
  const maxLength = given.maxLength ?? 30
  if (!Number.isSafeInteger(minLength) || minLength < 1) fail(`usernames.minLength must be a whole number of at least 1; got ${String(minLength)}.`)
  if (!Number.isSafeInteger(maxLength) || maxLength < minLength || maxLength > USERNAME_MAX_LENGTH) {
    fail(`usernames.maxLength must be a whole number from minLength to ${USERNAME_MAX_LENGTH}; got ${String(maxLength)}.`)
  }
  const pattern = given.pattern ?? DEFAULT_USERNAME_PATTERN
  if (!(pattern instanceof RegExp)) fail('usernames.pattern must be a RegExp, e.g. /^[a-z0-9][a-z0-9_]*$/i.')
  // A global or sticky RegExp keeps lastIndex between tests: every other name would be refused.
  if (pattern.global || pattern.sticky) fail('usernames.pattern must not have the g or y flag (test() would remember where it stopped).')
  const own = given.reserved ?? []
  if (!Array.isArray(own) || own.some((name) => typeof name !== 'string' || name.trim() === '')) fail('usernames.reserved must be an array of names.')
  if (given.required !== undefined && typeof given.required !== 'boolean') fail('usernames.required must be true or false.')
  return Object.freeze({
    minLength,
    maxLength,
    pattern: new RegExp(pattern.source, pattern.flags),
    defaultPattern: given.pattern === undefined,
    reserved: Object.freeze(new Set([...BUILT_IN_RESERVED, ...own].map(usernameKey))) as ReadonlySet<string>,
    required: given.required === true,
  })
}
