/**
 * The sign-in and callback routes as spans (`portcullis.signin`, `portcullis.callback`), named by
 * their provider when it is one of the configured ones (the path's id otherwise stays out: a client
 * chose it).
 */
import type { Attributes } from '@opentelemetry/api'
import type { ResolvedConfig } from '../config/types.js'
import { traced } from './otel.js'

/** `action`, in a span `name` when `telemetry` is on; itself, unchanged, when it is off. */
export function tracedAction<Context extends { readonly config: ResolvedConfig }, Result>(
  name: string,
  providerId: string,
  action: (ctx: Context) => Promise<Result>,
): (ctx: Context) => Promise<Result> {
  return (ctx) => (ctx.config.telemetry ? traced(ctx.config, name, providerAttributes(ctx.config, providerId), () => action(ctx)) : action(ctx))
}

/** The provider's id and type (`portcullis.provider`, `portcullis.method`), if `id` is configured. */
export function providerAttributes(config: ResolvedConfig, id: string | undefined): Attributes {
  const provider = id === undefined ? undefined : config.providerById.get(id)
  return provider ? { 'portcullis.provider': provider.id, 'portcullis.method': provider.type } : {}
}
