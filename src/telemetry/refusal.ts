/**
 * The counts of a refused request (actions/failure.ts): `portcullis.refusals` by code, a failed
 * sign-in in `portcullis.sign_ins`, and a rate limit's refusal in `portcullis.rate_limit.rejections`.
 */
import type { ResolvedConfig } from '../config/types.js'
import { AuthError, RateLimitedError } from '../errors.js'
import { requestLogFields } from '../http/log-fields.js'
import { providerAttributes } from './action.js'
import { count } from './otel.js'

/** Counts `error`, the failure a response is made of, when `telemetry` is on. */
export function countRefusal(config: ResolvedConfig, error: unknown): void {
  if (!config.telemetry) return
  const authError = error instanceof AuthError ? error : undefined
  count(config, 'portcullis.refusals', { 'portcullis.code': authError?.type ?? 'InternalError' })
  if (authError?.kind !== 'signIn') return
  count(config, 'portcullis.sign_ins', { ...providerAttributes(config, requestLogFields()?.provider), 'portcullis.outcome': 'failure', 'portcullis.code': authError.type })
  if (authError instanceof RateLimitedError) countRateLimited(config, authError)
}

/** Counts a rate limit's refusal, when `telemetry` is on. */
export function countRateLimited(config: ResolvedConfig, error: RateLimitedError): void {
  count(config, 'portcullis.rate_limit.rejections', { 'portcullis.scope': error.scope })
}
