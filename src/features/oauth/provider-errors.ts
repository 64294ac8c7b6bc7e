/**
 * openid-client's failures as Portcullis errors with short, fixed codes (`?code=` on the sign-in
 * page) and a log line that says what failed. Only the provider's `error` and `error_description`
 * and the name of the failed claim are logged: never a code, token or claim value. The `cause` is
 * a redacted copy: openid-client's own keeps the response body (tokens) and the ID token's claims.
 */
import * as oidc from 'openid-client'
import { AuthError } from '../../errors.js'
import { InvalidCheckError, OAuthCallbackError } from './errors.js'
import { redactError } from '../../events.js'
import { logValue } from '../../logger.js'
import type { OAuthProvider } from './provider.js'

/** A provider error code as it may appear in a URL: RFC 6749 codes are `[a-z_]`. */
export function safeCode(code: unknown): string {
  return typeof code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : 'provider_error'
}

/** The provider's `error=` on the callback (RFC 6749 §4.1.2.1), e.g. `access_denied`. */
export function providerError(provider: OAuthProvider, params: URLSearchParams): OAuthCallbackError {
  const description = params.get('error_description')
  return new OAuthCallbackError(
    safeCode(params.get('error')),
    `The "${provider.id}" provider answered error=${logValue(params.get('error'))}${description ? ` (${logValue(description)})` : ''}.`,
  )
}

/**
 * The OAuth error a token endpoint answered with HTTP 200 (GitHub does: `{ error, error_description }`),
 * which openid-client reports as a ClientError whose cause holds the body. Both as the provider sent
 * them; `undefined` when the answer carried no `error`.
 */
export function errorBodyOf(error: oidc.ClientError): { error: string; description: string | undefined } | undefined {
  const body = ((error.cause as { cause?: unknown } | undefined)?.cause as { body?: { error?: unknown; error_description?: unknown } } | undefined)?.body
  if (!body || typeof body.error !== 'string') return undefined
  return { error: body.error, description: typeof body.error_description === 'string' ? body.error_description : undefined }
}

/** Maps a failure of the token exchange, ID token validation or userinfo request. */
export function exchangeError(provider: OAuthProvider, error: unknown): AuthError {
  if (error instanceof AuthError) return error
  // openid-client wraps what the engine's own callbacks throw (the clientSecret function's refusal) in a
  // ClientError ("something went wrong"): it is given back as it was thrown.
  if (error instanceof oidc.ClientError && error.cause instanceof AuthError) return error.cause
  const where = `The "${provider.id}" callback`
  if (error instanceof oidc.ResponseBodyError) {
    const description = error.error_description ? ` (${logValue(error.error_description)})` : ''
    return new OAuthCallbackError(safeCode(error.error), `${where}: the provider answered ${error.status} error=${logValue(error.error)}${description}.`, { cause: redactError(error) })
  }
  if (error instanceof oidc.AuthorizationResponseError) return providerError(provider, new URLSearchParams({ error: error.error, error_description: error.error_description ?? '' }))
  if (error instanceof oidc.WWWAuthenticateChallengeError) {
    return new OAuthCallbackError('userinfo_unauthorized', `${where}: the provider refused the access token (${error.status}, WWW-Authenticate ${error.cause.map((challenge) => challenge.scheme).join(', ')}).`, { cause: redactError(error) })
  }
  if (error instanceof oidc.ClientError) {
    const detail = error.cause instanceof Error ? error.cause : undefined
    const claim = (detail?.cause as { claim?: unknown } | undefined)?.claim
    const reason = detail?.message ?? error.message
    const answered = errorBodyOf(error)
    if (answered) {
      const description = answered.description !== undefined ? ` (${logValue(answered.description)})` : ''
      return new OAuthCallbackError(safeCode(answered.error), `${where}: the provider answered error=${logValue(answered.error)}${description}.`, { cause: redactError(error) })
    }
    switch (error.code) {
      case 'OAUTH_JWT_CLAIM_COMPARISON_FAILED':
        if (claim === 'nonce') {
          return new InvalidCheckError('nonce', 'nonce_mismatch', `${where}: the ID token's nonce differs from the "nonce" cookie's: the ID token was issued for another sign-in (a replayed or injected token, or a second tab).`)
        }
        return new OAuthCallbackError(claim === 'iss' ? 'id_token_issuer' : claim === 'aud' || claim === 'azp' ? 'id_token_audience' : 'id_token_invalid', `${where}: ID token rejected: ${reason}.`, { cause: redactError(error) })
      case 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED':
        return new OAuthCallbackError('id_token_expired', `${where}: ID token rejected: ${reason} (check the server clock).`, { cause: redactError(error) })
      case 'OAUTH_KEY_SELECTION_FAILED':
        return new OAuthCallbackError('id_token_signature', `${where}: ID token rejected: no key of the provider's JWKS matches its signature (${reason}).`, { cause: redactError(error) })
      case 'OAUTH_INVALID_RESPONSE':
        // The callback's `iss` parameter missing or another server's (RFC 9207); not the ID token's `iss` claim.
        if (/response parameter "iss"|"iss" \(issuer\) response parameter/.test(reason)) return new OAuthCallbackError('issuer_mismatch', `${where}: ${reason}: the response comes from another authorization server than the one the sign-in started with (mix-up).`, { cause: redactError(error) })
        if (/signature/i.test(reason)) return new OAuthCallbackError('id_token_signature', `${where}: ID token rejected: ${reason}.`, { cause: redactError(error) })
        return new OAuthCallbackError('invalid_response', `${where}: the provider's response is invalid: ${reason}.`, { cause: redactError(error) })
      default:
        return new OAuthCallbackError('invalid_response', `${where}: ${reason} (${String(error.code)}).`, { cause: redactError(error) })
    }
  }
  return new OAuthCallbackError('provider_request_failed', `${where}: the request to the provider failed: ${error instanceof Error ? error.message : String(error)}.`, { cause: redactError(error) })
}
