/**
 * Whether the grant an access token was issued under still stands, for the bearer read: the
 * grant's record with the user it acts for, asked at most once per `grantCheckSeconds` (default 5)
 * per grant in each process. A grant ended in this process (revoked, its refresh token replayed,
 * the app removed by the user, every session of the user ended, the user deleted) is refused at once;
 * another process learns it within `grantCheckSeconds`, and the token itself expires within
 * `accessTokenTtl`.
 */
import type { ResolvedConfig } from '../../config/types.js'
import type { AdapterUser } from '../../types.js'
import { authorizationServerOf, recordsOf } from './config.js'

/** Grants a process keeps answers for; past it the oldest are asked again. */
const MAX_GRANTS = 50_000

interface GrantCheck {
  /** The user the grant acts for, or null once it ended. */
  readonly user: AdapterUser | null
  readonly accountId: string | undefined
  readonly at: number
}

const checks = new WeakMap<ResolvedConfig, Map<string, GrantCheck>>()

function checksOf(config: ResolvedConfig): Map<string, GrantCheck> {
  let known = checks.get(config)
  if (!known) checks.set(config, (known = new Map()))
  return known
}

function remember(known: Map<string, GrantCheck>, grantId: string, check: GrantCheck): void {
  known.delete(grantId)
  if (known.size >= MAX_GRANTS) known.delete(known.keys().next().value!)
  known.set(grantId, check)
}

/**
 * The user of the standing grant `grantId` for `accountId`, or null when it ended, the user is gone,
 * or it acts for another user than the token says.
 */
export async function grantUser(config: ResolvedConfig, grantId: string, accountId: string, now: number): Promise<AdapterUser | null> {
  const known = checksOf(config)
  const cached = known.get(grantId)
  if (cached && (cached.user === null || now - cached.at < authorizationServerOf(config)!.grantCheckMs)) return cached.user?.id === accountId ? cached.user : null
  const grant = await recordsOf(config).findOAuthRecord('Grant', grantId)
  const owner = grant?.payload['accountId']
  const user = typeof owner === 'string' && owner === accountId ? await config.adapter!.getUser!(owner) : null
  remember(known, grantId, { user, accountId, at: now })
  return user
}

/** A grant ended in this process: refused from now on. */
export function forgetGrant(config: ResolvedConfig, grantId: string): void {
  remember(checksOf(config), grantId, { user: null, accountId: undefined, at: Date.now() })
}

/** Every grant of the user ended in this process (deleted, banned, signed out everywhere). */
export function forgetAccount(config: ResolvedConfig, accountId: string): void {
  const known = checksOf(config)
  for (const [grantId, check] of known) if (check.accountId === accountId) known.set(grantId, { user: null, accountId, at: check.at })
}
