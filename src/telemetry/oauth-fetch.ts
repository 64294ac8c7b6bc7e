/**
 * The OAuth engine's HTTP requests (discovery, the token request, userinfo, the JWKS) as client
 * spans, inside a traced sign-in or callback (telemetry/otel.ts). openid-client's `customFetch`:
 * elsewhere, or with `telemetry` off, it is plain `fetch`. The span names the method and the URL
 * without its query; the request's body and headers (the code, the client secret) are never read.
 *
 * @see https://opentelemetry.io/docs/specs/semconv/http/http-spans/#http-client-span
 */
import { loadedOpenTelemetry, SCOPE, TRACED } from './otel.js'

// openid-client's CustomFetch, whose options are fetch's (typed here so the core does not import openid-client).
type Fetch = (url: string, options: { method: string; headers: Record<string, string>; body?: unknown; redirect: 'manual'; signal?: AbortSignal | undefined }) => Promise<Response>

/** openid-client's `customFetch`: `fetch`, in a client span when inside one of Portcullis's spans. */
export const tracedFetch: Fetch = (url, options) => {
  const otel = loadedOpenTelemetry()
  if (!otel || otel.context.active().getValue(TRACED) !== true) return fetch(url, options as RequestInit)
  const { trace, SpanKind, SpanStatusCode } = otel
  const target = new URL(url)
  const method = options.method.toUpperCase()
  const attributes = { 'http.request.method': method, 'server.address': target.hostname, 'url.full': `${target.origin}${target.pathname}` }
  return trace.getTracer(SCOPE).startActiveSpan(`${method} ${target.hostname}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      const response = await fetch(url, options as RequestInit)
      span.setAttribute('http.response.status_code', response.status)
      if (response.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR })
      return response
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR })
      span.setAttribute('error.type', error instanceof Error ? error.name : 'Error')
      throw error
    } finally {
      span.end()
    }
  })
}
