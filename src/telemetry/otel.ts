/**
 * OpenTelemetry through `@opentelemetry/api` alone: the app's SDK, when it registers one, receives
 * the spans and counts; without one the API is a no-op. The API is imported on first use by an
 * instance with `telemetry` on, never by init or by the session read (test/build/fixtures/lazy-telemetry.mjs).
 *
 * Attributes are identifiers (provider id and type, an error's type, a limit's scope), never a
 * token, an address or a client-chosen value.
 *
 * @see https://opentelemetry.io/docs/specs/otel/trace/api/
 * @see https://opentelemetry.io/docs/specs/otel/metrics/api/
 */
import type { Attributes, Counter, MeterProvider } from '@opentelemetry/api'
import type { ResolvedConfig } from '../config/types.js'

type OpenTelemetry = typeof import('@opentelemetry/api')

/** The instrumentation scope's name: what an SDK's exporter shows as the spans' and counters' source. */
export const SCOPE = 'portcullis'

let api: Promise<OpenTelemetry> | undefined
/** The API once imported: what the OAuth engine's fetch looks at, synchronously. */
let loaded: OpenTelemetry | undefined

/** Imports the API once, for every instance. */
export function openTelemetry(): Promise<OpenTelemetry> {
  return (api ??= import('@opentelemetry/api').then((module) => (loaded = module)))
}

/** The API if an instance with `telemetry` on has imported it, else undefined. */
export function loadedOpenTelemetry(): OpenTelemetry | undefined {
  return loaded
}

/** The counters Portcullis keeps (docs/configuration.md#opentelemetry). */
export type CounterName = 'portcullis.sign_ins' | 'portcullis.refusals' | 'portcullis.rate_limit.rejections' | 'portcullis.session.reads'

const DESCRIPTIONS: Record<CounterName, string> = {
  'portcullis.sign_ins': 'Sign-ins, by method, provider and outcome',
  'portcullis.refusals': 'Requests refused with an error code, by code',
  'portcullis.rate_limit.rejections': 'Attempts refused by a rate limit, by scope',
  'portcullis.session.reads': 'Session reads of auth(), by outcome',
}

// The metrics API has no proxy provider: a meter taken before the app registers its SDK stays a
// no-op. So the counters are made per registered provider, when first counted into.
const counters = new WeakMap<MeterProvider, Map<CounterName, Counter>>()

/** Adds one to `name`, when `telemetry` is on; never throws. */
export function count(config: ResolvedConfig, name: CounterName, attributes: Attributes): void {
  if (!config.telemetry) return
  openTelemetry().then(
    ({ metrics }) => {
      const provider = metrics.getMeterProvider()
      let made = counters.get(provider)
      if (!made) counters.set(provider, (made = new Map()))
      let counter = made.get(name)
      if (!counter) made.set(name, (counter = provider.getMeter(SCOPE).createCounter(name, { description: DESCRIPTIONS[name] })))
      counter.add(1, attributes)
    },
    () => {},
  )
}

/**
 * Runs `work` in a span `name` when `telemetry` is on (else just runs it). A failure ends the span
 * with status ERROR and the error's type (`error.type`: an AuthError's `type`, else `InternalError`;
 * never its message, which may name an address), and is thrown on.
 */
export async function traced<T>(config: ResolvedConfig, name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  if (!config.telemetry) return work()
  const { trace, context, SpanStatusCode } = await openTelemetry()
  const tracer = trace.getTracer(SCOPE)
  return tracer.startActiveSpan(name, { attributes }, context.active().setValue(TRACED, true), async (span) => {
    try {
      return await work()
    } catch (error) {
      const type = (error as { type?: unknown } | null)?.type
      const errorType = typeof type === 'string' ? type : 'InternalError'
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType })
      span.setAttribute('error.type', errorType)
      throw error
    } finally {
      span.end()
    }
  })
}

/** Set in the context of Portcullis's spans: the OAuth engine's requests are traced inside them only. */
export const TRACED = Symbol.for('portcullis.telemetry.traced')
