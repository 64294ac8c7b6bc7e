/**
 * The challenge of a passkey ceremony: random, bound to this browser, expiring, single use.
 *
 * - Bound and expiring: it travels in the `authjs.challenge` cookie (Auth.js's name), sealed with
 *   the secret as the OAuth check cookies are (checks.ts: the session codec, a key of its own), for
 *   5 minutes, with the provider, the action (`authenticate` or `register`) and, for a registration,
 *   the user it was issued to. A response is accepted only with the cookie of the browser that
 *   asked for the options, and only if it signs the challenge that cookie holds.
 * - Single use: its SHA-256 is stored as a verification token (the adapter's
 *   `createVerificationToken`), which the response consumes with `useVerificationToken`, atomically.
 *   A replayed response, or a second response to one challenge, finds no token. The cookie cannot
 *   do this alone: a copy of it would stay valid for its 5 minutes.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-cryptographic-challenges
 */
import { createHash, randomBytes } from 'node:crypto'
import type { PasskeyAdapter, PasskeyProvider } from './provider.js'
import { WebAuthnVerificationError } from './errors.js'
import { expiredCookie, type OutgoingCookie } from '../../session/cookies.js'
import { keyRingFor } from '../../session/keys.js'
import { openSessionToken, sealSessionToken } from '../../session/token.js'
import type { SessionRequest } from '../../session/types.js'

/** Seconds a challenge is good for. */
export const CHALLENGE_LIFETIME = 5 * 60

/** What a passkey ceremony does. */
export type PasskeyAction = 'authenticate' | 'register'

/** What the sealed cookie holds. */
interface ChallengePayload {
  chk: 'webauthn'
  /** The provider. */
  pid: string
  act: PasskeyAction
  /** The challenge, base64url, as the options carry it. */
  c: string
  /** Registration: the user it was issued to. */
  u?: string
}

/** An opened challenge, consumed. */
export interface UsedChallenge {
  challenge: string
  /** Registration: the user the options were made for. */
  userId: string | undefined
}

const ring = keyRingFor('portcullis.webauthn-challenge')

/** The verification token's identifier: one namespace per provider, apart from e-mail addresses. */
function identifierOf(provider: PasskeyProvider): string {
  return `webauthn-challenge:${provider.id}`
}

function tokenOf(challenge: string): string {
  return createHash('sha256').update(challenge).digest('hex')
}

/**
 * A new challenge for `action`: stored (hashed) as single use, and sealed in the cookie to set.
 *
 * @param userId Registration: the signed-in user it is for.
 * @throws AdapterError when the token cannot be stored.
 */
export async function startChallenge(
  request: SessionRequest,
  provider: PasskeyProvider,
  action: PasskeyAction,
  userId?: string,
): Promise<{ challenge: string; cookie: OutgoingCookie }> {
  const challenge = randomBytes(32).toString('base64url')
  const adapter = request.config.adapter as PasskeyAdapter
  await adapter.createVerificationToken({ identifier: identifierOf(provider), token: tokenOf(challenge), expires: new Date((request.now + CHALLENGE_LIFETIME) * 1000) })
  const payload: ChallengePayload = { chk: 'webauthn', pid: provider.id, act: action, c: challenge }
  if (userId !== undefined) payload.u = userId
  const sealed = sealSessionToken(payload as unknown as Record<string, unknown>, ring(request.config.secrets).current, CHALLENGE_LIFETIME, request.now)
  const cookie = request.cookieSet.cookies.webauthnChallenge
  return { challenge, cookie: { name: cookie.name, value: sealed, options: cookie.options } }
}

/**
 * Opens this browser's challenge for `action` and consumes it: after this call it is spent,
 * whatever the response turns out to be. Check the response's challenge against the result.
 *
 * @throws WebAuthnVerificationError `challenge_missing`, `challenge_invalid`, `challenge_mismatch` (another action or provider), `challenge_used`.
 */
export async function useChallenge(request: SessionRequest, provider: PasskeyProvider, action: PasskeyAction): Promise<UsedChallenge> {
  const cookie = request.cookieSet.cookies.webauthnChallenge
  const sealed = request.requestCookies[cookie.name]
  if (!sealed) {
    throw new WebAuthnVerificationError(
      'challenge_missing',
      `The passkey response came without the "${cookie.name}" cookie: it expired (challenges live ${CHALLENGE_LIFETIME / 60} minutes) or was used, the options were fetched on another host (localhost vs 127.0.0.1), or a proxy without "trust proxy" changed the __Secure- cookie name.`,
    )
  }
  const payload = openSessionToken(sealed, ring(request.config.secrets), request.now)?.payload as Partial<ChallengePayload> | undefined
  if (!payload || payload.chk !== 'webauthn' || typeof payload.c !== 'string' || typeof payload.pid !== 'string') {
    throw new WebAuthnVerificationError('challenge_invalid', `The "${cookie.name}" cookie could not be opened: it expired (${CHALLENGE_LIFETIME / 60} minutes) or was sealed with another secret.`)
  }
  if (payload.pid !== provider.id || payload.act !== action) {
    throw new WebAuthnVerificationError('challenge_mismatch', `The "${cookie.name}" cookie is for ${String(payload.act)} with "${payload.pid}", but the response is for ${action} with "${provider.id}".`)
  }
  const adapter = request.config.adapter as PasskeyAdapter
  const used = await adapter.useVerificationToken({ identifier: identifierOf(provider), token: tokenOf(payload.c) })
  if (!used || used.expires.getTime() < request.now * 1000) {
    throw new WebAuthnVerificationError('challenge_used', 'The passkey challenge was used already (a replayed response) or has expired; each challenge is good for one response.')
  }
  return { challenge: payload.c, userId: typeof payload.u === 'string' ? payload.u : undefined }
}

/** The cookie that clears the challenge, when the request carries one. */
export function clearChallenge(request: SessionRequest): OutgoingCookie[] {
  const cookie = request.cookieSet.cookies.webauthnChallenge
  return request.requestCookies[cookie.name] === undefined ? [] : [expiredCookie(cookie)]
}
