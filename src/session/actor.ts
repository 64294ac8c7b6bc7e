/**
 * The actor of a JWT session started on its user's behalf (impersonation, docs/admin.md): RFC 8693
 * §4.1's `act` claim, the administrator's user id as its `sub`, with `exp`, when the impersonation
 * ends. Sealed at the start and kept on every re-issue, out of the `jwt` callback's reach: a callback
 * that dropped it would turn the administrator's hour into the user's own session.
 *
 * @see https://www.rfc-editor.org/rfc/rfc8693#section-4.1
 */
import type { JWT } from '../types.js'

/** The claim. */
export const ACTOR_CLAIM = 'act'

/** The administrator acting as the token's user, and when that ends (seconds since the epoch). */
export interface ActorClaim {
  readonly sub: string
  readonly exp: number
}

/** The token's actor; undefined on the user's own sessions (and on a claim this library did not write). */
export function actorOf(token: JWT): ActorClaim | undefined {
  const act = token[ACTOR_CLAIM] as { sub?: unknown; exp?: unknown } | null | undefined
  if (act === undefined || act === null || typeof act !== 'object') return undefined
  return typeof act.sub === 'string' && typeof act.exp === 'number' ? (act as ActorClaim) : undefined
}

/** `token` with the actor claim of `sealed` (the token as it was sealed), whatever app code did to it. */
export function keepActorClaim(sealed: JWT, token: JWT): JWT {
  const act = sealed[ACTOR_CLAIM]
  if (act === undefined) {
    if (token[ACTOR_CLAIM] === undefined) return token
    // The app's code cannot make a session someone's impersonation either.
    const { [ACTOR_CLAIM]: _added, ...rest } = token
    return rest
  }
  return token[ACTOR_CLAIM] === act ? token : { ...token, [ACTOR_CLAIM]: act }
}

/** Seconds a token sealed `now` may live: `maxAge`, cut to the actor's end. */
export function sealedLifetime(token: JWT, maxAge: number, now: number): number {
  const actor = actorOf(token)
  return actor ? Math.max(0, Math.min(maxAge, actor.exp - now)) : maxAge
}
