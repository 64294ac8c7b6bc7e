/**
 * The rules of a username (the provider's `usernames` option) and what the accounts do with one:
 * check a chosen name, read a typed one for sign-in, claim one for a user. Loaded with the accounts.
 *
 * A name is kept as typed after NFKC and trimming (its letter case too: `Ada` shows as `Ada`), and
 * is unique under its skeleton (username-key.ts), which sign-in looks up. Claiming is one write that
 * the database's unique index decides, so of two sign-ups asking for one name at once one gets it
 * and the other goes on without one; nothing is checked first and then written.
 */
import type { ActionContext } from '../../actions/context.js'
import { emitEvent } from '../../events.js'
import { limitSignInAttempt } from '../../security/rate-limit.js'
import type { AdapterUser } from '../../types.js'
import { UsernameError } from './errors.js'
import type { PasswordAdapter, PasswordProvider } from './provider.js'
import { usernameKey } from './username-key.js'
import { USERNAME_MAX_LENGTH, type UsernameSettings } from './username-settings.js'

/** A username as stored: the name shown, and its skeleton (the unique key). */
export interface Username {
  readonly username: string
  readonly key: string
}

/** The adapter's username methods (asserted at init when `usernames` is on). */
export type UsernameAdapter = PasswordAdapter & Required<Pick<PasswordAdapter, 'getUserByUsername' | 'getUsername' | 'setUsername' | 'deleteUsername'>>

// Controls, format characters (zero-width joiners, bidi overrides), unassigned code points and
// every kind of space: never part of a name, whatever the pattern lets through.
const INVISIBLE = /[\p{C}\p{Z}]/u
const SCRIPTS: readonly [string, RegExp][] = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
]
const LETTER = /\p{L}/u

/**
 * The scripts of `name`'s letters: Latin, Cyrillic, Greek, or `other` for any other script's.
 * Digits and `._-` belong to none.
 */
function scriptsOf(name: string): Set<string> {
  const scripts = new Set<string>()
  for (const character of name) {
    if (!LETTER.test(character)) continue
    scripts.add(SCRIPTS.find(([, pattern]) => pattern.test(character))?.[0] ?? 'other')
  }
  return scripts
}

/** The username settings of `provider`, or undefined when usernames are off. */
export function usernameSettings(provider: PasswordProvider): UsernameSettings | undefined {
  return provider.password.usernames
}

/**
 * A chosen username checked against the rules, or null when none was given and none is required.
 * @throws UsernameError (missing, too_short, too_long, characters, mixed_scripts, reserved)
 */
export function acceptableUsername(settings: UsernameSettings, value: unknown): Username | null {
  const username = typeof value === 'string' ? value.normalize('NFKC').trim() : ''
  if (username === '') {
    if (settings.required) throw new UsernameError('missing', 'Choose a username.')
    return null
  }
  const length = [...username].length
  if (length < settings.minLength) throw new UsernameError('too_short', `The username must have at least ${settings.minLength} characters.`)
  if (length > settings.maxLength) throw new UsernameError('too_long', `The username must have at most ${settings.maxLength} characters.`)
  // An `@` would make the sign-in form read the name as an address.
  if (INVISIBLE.test(username) || username.includes('@') || !settings.pattern.test(username)) {
    throw new UsernameError('characters', settings.defaultPattern ? 'The username has characters it may not have: use letters, digits, ".", "_" and "-", starting with a letter or a digit.' : 'The username has characters it may not have.')
  }
  if (scriptsOf(username).size > 1) throw new UsernameError('mixed_scripts', 'The username mixes letters of different alphabets: use one.')
  const key = usernameKey(username)
  if (key === '') throw new UsernameError('characters', 'The username needs a letter or a digit.')
  if (settings.reserved.has(key)) throw new UsernameError('reserved', 'This username is reserved: choose another.')
  return { username, key }
}

/**
 * The skeleton to look a typed sign-in name up by, or undefined when it cannot be anyone's (empty,
 * too long, invisible characters). The other rules are not asked again: a name chosen under older
 * rules still signs in.
 */
export function signInKey(value: string): string | undefined {
  const name = value.normalize('NFKC').trim()
  if (name === '' || [...name].length > USERNAME_MAX_LENGTH || INVISIBLE.test(name)) return undefined
  const key = usernameKey(name)
  return key === '' ? undefined : key
}

/** Whether a typed sign-in name is a username: usernames are on and it has no `@`. */
export function isUsernameSignIn(provider: PasswordProvider, value: unknown): value is string {
  return provider.password.usernames !== undefined && typeof value === 'string' && !value.includes('@')
}

/**
 * Gives `user` the username, when no other user has its skeleton; one write, which the unique
 * index decides. The `updateUser` event follows a change.
 * @returns whether the user has it now.
 * @throws AdapterError
 */
export async function claimUsername(ctx: ActionContext, user: AdapterUser, name: Username): Promise<boolean> {
  const adapter = ctx.config.adapter as UsernameAdapter
  return adapter.setUsername(user.id, name.username, name.key)
}

/**
 * `changeUsername()` and POST /username: the signed-in user's new username, checked, then claimed;
 * taken is said (to a signed-in user, rate-limited as sign-up attempts of theirs).
 * @throws UsernameError (taken included; missing when nothing was given), AdapterError
 */
export async function changeUsername(ctx: ActionContext, provider: PasswordProvider, userId: string, value: unknown): Promise<Username> {
  const settings = usernameSettings(provider)
  if (!settings) throw new TypeError(`Password provider "${provider.id}" has no usernames (its usernames option is off).`)
  // Each try may tell whether a name is taken: counted per user (and per client address), as sign-ups are.
  await limitSignInAttempt(ctx, { id: `${provider.id}-username`, type: 'email' }, userId)
  const chosen = acceptableUsername({ ...settings, required: true }, value)!
  const adapter = ctx.config.adapter as UsernameAdapter
  const user = await adapter.getUser(userId)
  if (!user) throw new UsernameError('missing', 'The signed-in user is not in the database any more.')
  if (!(await claimUsername(ctx, user, chosen))) throw new UsernameError('taken', 'This username, or one that looks like it, is taken: choose another.')
  await emitEvent(ctx.config, 'updateUser', { user })
  return chosen
}
