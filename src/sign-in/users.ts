/**
 * Which stored user a provider sign-in belongs to (spec §5.6 rules, Auth.js's behaviour): the user
 * the account is linked to; else the signed-in user, who gets the account linked; else, when the
 * e-mail address belongs to a user, `OAuthAccountNotLinked` (unless the provider allows dangerous
 * linking); else a new user with the account.
 *
 * The first sign-in of a new account is race-free: when concurrent callbacks for the same account
 * (a double click, a retried request) collide on the database's unique keys, the losers re-read the
 * account, delete the user they created, and sign in as the winner's user.
 *
 * An e-mail sign-in (resolveEmailUser) has proven the address: its user is the one with that address,
 * marked verified, or a new one; no account row is stored (as in Auth.js).
 */
import { OAuthAccountNotLinkedError } from '../errors.js'
import { emitEvent } from '../events.js'
import type { Account, Adapter, AdapterUser, User } from '../types.js'
import type { ActionContext } from '../actions/context.js'
import { addressProven } from './further-factor.js'
import { logFields } from '../logger.js'

/** The adapter methods a provider sign-in needs (checked at init). */
export type AccountAdapter = Required<Pick<Adapter, 'getUserByAccount' | 'getUserByEmail' | 'createUser' | 'linkAccount'>> & Adapter

/** The sign-in's user and whether this sign-in created it. */
export interface ResolvedUser {
  user: AdapterUser
  isNewUser: boolean
}

interface Candidate {
  user: User & { id: string }
  account: Account
  allowDangerousEmailAccountLinking: boolean
  /** The user the account is already linked to (looked up before the signIn callback). */
  linked: AdapterUser | null
  /** The user the request is signed in as, if any. */
  signedInUserId: string | null
}

/**
 * The stored user for a provider sign-in, creating and linking as the rules say.
 * @throws OAuthAccountNotLinkedError, AdapterError
 */
export async function resolveUser(ctx: ActionContext, adapter: AccountAdapter, candidate: Candidate): Promise<ResolvedUser> {
  const { linked, signedInUserId, account } = candidate
  if (linked) {
    if (signedInUserId && linked.id !== signedInUserId) {
      throw new OAuthAccountNotLinkedError(`The ${account.provider} account is linked to another user than the one signed in; it was not linked again.`)
    }
    return { user: linked, isNewUser: false }
  }
  if (signedInUserId) {
    const user = await adapter.getUser?.(signedInUserId)
    if (user) return { user: await link(ctx, adapter, user, account), isNewUser: false }
  }
  const owner = await userWithAddress(adapter, candidate.user.email)
  if (owner) {
    if (candidate.allowDangerousEmailAccountLinking) return { user: await link(ctx, adapter, owner, account), isNewUser: false }
    // The owner may be a concurrent first sign-in of this very account, between its createUser and
    // its linkAccount: give it a moment before calling the address taken, as long as after a failed
    // insert when the owner's address was verified just now (as that sign-in does).
    const winner = await pollLinkedUser(adapter, account, justVerified(owner) ? RACE_DELAYS_MS : OWNER_DELAYS_MS)
    if (winner) return { user: winner, isNewUser: false }
    throw new OAuthAccountNotLinkedError(
      `A user with the ${account.provider} account's e-mail address exists but has not linked ${account.provider}: they must sign in as before and link it, or the provider must set allowDangerousEmailAccountLinking.`,
    )
  }
  return createWithAccount(ctx, adapter, candidate)
}

/** The adapter methods an e-mail sign-in needs (checked at init). */
export type EmailAdapter = Required<Pick<Adapter, 'getUserByEmail' | 'createUser' | 'updateUser'>> & Adapter

/**
 * The stored user for a followed e-mail link: `existing` (the user with the address, looked up
 * before the signIn callback) gets `emailVerified` set to now; else a user is created with the
 * address, verified. Two links for one new address followed at once collide on the unique e-mail:
 * the loser signs in as the winner's user (claimed, claim.ts, when a password sign-up made it).
 * @throws AdapterError
 */
export async function resolveEmailUser(ctx: ActionContext, adapter: EmailAdapter, provider: string, identifier: string, existing: AdapterUser | null): Promise<ResolvedUser> {
  const verifiedAt = new Date(Date.now())
  if (existing) return { user: await markVerified(ctx, adapter, existing, verifiedAt), isNewUser: false }
  let created: AdapterUser
  try {
    created = await adapter.createUser({ email: identifier, emailVerified: verifiedAt })
  } catch (error) {
    // The failed insert means the other row is committed: it is visible now. Without it, the
    // failure stands (an AdapterError, logged and redacted where the guarded adapter threw it).
    const winner = await storedUserWithEmail(adapter, identifier)
    if (!winner) throw error
    // The winner may be a password sign-up made meanwhile, which never proved the address.
    await addressProven(ctx, winner, provider)
    return { user: await markVerified(ctx, adapter, winner, verifiedAt), isNewUser: false }
  }
  await emitEvent(ctx.config, 'createUser', { user: created })
  return { user: created, isNewUser: true }
}

/** The user with `emailVerified` set to `verifiedAt`, stored, and the `updateUser` and `emailVerified` events. */
export async function markVerified(ctx: ActionContext, adapter: EmailAdapter, user: AdapterUser, verifiedAt: Date): Promise<AdapterUser> {
  const updated = await adapter.updateUser({ id: user.id, emailVerified: verifiedAt })
  await emitEvent(ctx.config, 'updateUser', { user: updated })
  await emitEvent(ctx.config, 'emailVerified', { user: updated })
  return updated
}

/**
 * The user a provider's address belongs to: looked up lower-cased first, then as the provider spelled
 * it (a mixed-case address stored before, e.g. by the app). What a sign-in links to by address, so
 * also the user its second factor and its claim (claim.ts) are about.
 * @throws AdapterError
 */
export async function userWithAddress(adapter: Pick<Required<Adapter>, 'getUserByEmail'>, address: string | null | undefined): Promise<AdapterUser | null> {
  if (!address) return null
  const email = address.toLowerCase()
  return (await storedUserWithEmail(adapter, email)) ?? (address !== email ? storedUserWithEmail(adapter, address) : null)
}

/**
 * The stored user whose address is `email` (letter case aside), or `null`. An adapter's lookup may
 * match more loosely: MySQL's default collations also ignore accents, so `ada@exàmple.com` (a
 * domain someone else can register) would find `ada@example.com`. Signing in as that user would hand
 * over their account, so only an exact match, case aside, counts.
 * @throws AdapterError
 */
export async function storedUserWithEmail(adapter: Pick<Required<Adapter>, 'getUserByEmail'>, email: string): Promise<AdapterUser | null> {
  const user = await adapter.getUserByEmail(email)
  return user && typeof user.email === 'string' && user.email.toLowerCase() === email.toLowerCase() ? user : null
}

async function link(ctx: ActionContext, adapter: AccountAdapter, user: AdapterUser, account: Account): Promise<AdapterUser> {
  try {
    await adapter.linkAccount({ ...account, userId: user.id })
  } catch (error) {
    // A concurrent callback linked it first: fine if to the same user.
    const winner = await linkedUser(adapter, account)
    if (winner?.id === user.id) return user
    if (winner) throw new OAuthAccountNotLinkedError(`The ${account.provider} account was linked to another user meanwhile.`)
    throw error
  }
  await emitEvent(ctx.config, 'linkAccount', { user, account: { ...account, userId: user.id } })
  return user
}

async function createWithAccount(ctx: ActionContext, adapter: AccountAdapter, candidate: Candidate): Promise<ResolvedUser> {
  const { account } = candidate
  const email = candidate.user.email ? candidate.user.email.toLowerCase() : null
  // The provider's user id is the account's, not ours: the adapter assigns the user's id.
  const { id: _providerId, ...profileUser } = candidate.user
  let created: AdapterUser
  try {
    // The address is here only because the provider verified it (features/oauth/callback.ts): now.
    created = await adapter.createUser({ ...profileUser, email, emailVerified: email ? new Date(Date.now()) : null })
  } catch (error) {
    // The e-mail address is unique: a concurrent first sign-in of the same account created the user.
    return { user: await raceWinner(adapter, account, error), isNewUser: false }
  }
  try {
    await adapter.linkAccount({ ...account, userId: created.id })
  } catch (error) {
    // (provider, providerAccountId) is unique: another callback linked the account to its user.
    await deleteOrphan(ctx, adapter, created)
    return { user: await raceWinner(adapter, account, error), isNewUser: false }
  }
  await emitEvent(ctx.config, 'createUser', { user: created })
  await emitEvent(ctx.config, 'linkAccount', { user: created, account: { ...account, userId: created.id } })
  return { user: created, isNewUser: true }
}

// The winner may still be between createUser and linkAccount: poll the account briefly. After a
// failed insert a race is near certain, so wait longer (3.2 s in all: a loaded database server, with
// twenty callbacks queued on its pool, took more than the 0.17 s of an owner's wait) than when an
// address merely exists.
const RACE_DELAYS_MS = [0, 10, 25, 50, 100, 200, 400, 800, 1600]
const OWNER_DELAYS_MS = [0, 20, 50, 100]
/** How recent an owner's verification must be to be taken for a concurrent first sign-in's. */
const JUST_VERIFIED_MS = 60_000

/** Whether `user`'s address was verified within the last minute (a first sign-in sets it to its now). */
function justVerified(user: AdapterUser): boolean {
  const verified = user.emailVerified ? new Date(user.emailVerified).getTime() : Number.NaN
  return Date.now() - verified < JUST_VERIFIED_MS
}

/**
 * The user a concurrent callback linked the account to; rethrows `cause` (the adapter's failure, an
 * AdapterError from the guarded adapter, config/adapter.ts) when there is none.
 */
async function raceWinner(adapter: AccountAdapter, account: Account, cause: unknown): Promise<AdapterUser> {
  const winner = await pollLinkedUser(adapter, account, RACE_DELAYS_MS)
  if (winner) return winner
  throw cause
}

async function pollLinkedUser(adapter: AccountAdapter, account: Account, delays: readonly number[]): Promise<AdapterUser | null> {
  for (const delay of delays) {
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay))
    const winner = await linkedUser(adapter, account)
    if (winner) return winner
  }
  return null
}

function linkedUser(adapter: AccountAdapter, account: Account): Promise<AdapterUser | null> {
  return adapter.getUserByAccount({ provider: account.provider, providerAccountId: account.providerAccountId })
}

async function deleteOrphan(ctx: ActionContext, adapter: AccountAdapter, user: AdapterUser): Promise<void> {
  if (!adapter.deleteUser) {
    ctx.config.logger.warn('OrphanUser', `User ${user.id} was created by a sign-in that lost a race to link its account; the adapter has no deleteUser, so the row stays.`, logFields({ userId: user.id }))
    return
  }
  await adapter.deleteUser(user.id)
}
