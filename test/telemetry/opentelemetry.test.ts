/**
 * OpenTelemetry (docs/configuration.md#opentelemetry): with the SDK's in-memory exporters registered
 * as an app would, an OIDC sign-in against a real OpenID Provider gives a `portcullis.signin` span,
 * a `portcullis.callback` span holding the OAuth engine's requests as client spans, and a count in
 * `portcullis.sign_ins`; refused sign-ins and rate-limit rejections are counted by code and scope.
 * No span or count comes from a session read unless `sessionReads` is on, and nothing at all with
 * `telemetry` off.
 */
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type SumMetricData } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals'
import type { PortcullisConfig } from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import OIDC from 'portcullis/providers/oidc'
import { Browser } from '../support/browser.js'
import { startIdp, type TestIdp } from '../support/idp.js'
import { closeListeners, listen, mountApp, sessionOf, signInWith, silentLogger, type Listener } from '../support/oauth-app.js'

const spans = new InMemorySpanExporter()
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.DELTA)
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 })
const contextManager = new AsyncLocalStorageContextManager().enable()
let idp: TestIdp
let app: Listener

beforeAll(async () => {
  context.setGlobalContextManager(contextManager)
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }))
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
  app = await listen()
  idp = await startIdp({ clients: [{ client_id: 'basic', client_secret: 'basic-secret', redirect_uris: [app.callbackUrl('corp')] }] })
})
afterAll(async () => {
  await closeListeners()
  await idp?.close()
  await reader.shutdown()
  trace.disable()
  metrics.disable()
  context.disable()
})
beforeEach(async () => {
  await counts()
  spans.reset()
})

/** The counters' points since the last call: `name` → each point's attributes and value. */
async function counts(): Promise<Record<string, { attributes: Record<string, unknown>; value: number }[]>> {
  // Counts are added once the API's import has settled: let it.
  await new Promise((resolve) => setImmediate(resolve))
  await reader.forceFlush()
  const found: Record<string, { attributes: Record<string, unknown>; value: number }[]> = {}
  for (const resource of metricExporter.getMetrics())
    for (const scope of resource.scopeMetrics)
      for (const metric of scope.metrics as SumMetricData[]) for (const point of metric.dataPoints) (found[metric.descriptor.name] ??= []).push({ attributes: point.attributes, value: point.value })
  metricExporter.reset()
  return found
}

const corp = () => OIDC({ id: 'corp', name: 'Corp SSO', issuer: idp.issuer, clientId: 'basic', clientSecret: 'basic-secret', dangerouslyAllowInsecureRequests: true })
const credentials = Credentials({ authorize: async ({ password }) => (password === 'right-password' ? { id: 'user-1', name: 'Ada' } : null) })

function mount(config: Partial<PortcullisConfig>): void {
  mountApp(app, { providers: [corp(), credentials], logger: silentLogger, ...config })
}

async function postCredentials(browser: Browser, password: string): Promise<Response> {
  const { csrfToken } = (await (await browser.request(`${app.url}/api/auth/csrf`)).json()) as { csrfToken: string }
  return browser.request(`${app.url}/api/auth/callback/credentials`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrfToken, username: 'ada', password }),
  })
}

describe('telemetry: true', () => {
  it('traces an OIDC sign-in: the sign-in, the callback, and the OAuth engine’s requests inside it', async () => {
    mount({ telemetry: true })
    const browser = new Browser()
    await signInWith(browser, app.url, 'corp')
    expect(await sessionOf(browser, app.url)).not.toBeNull()
    const finished = spans.getFinishedSpans()
    const signIn = finished.find((span) => span.name === 'portcullis.signin')
    const callback = finished.find((span) => span.name === 'portcullis.callback')
    expect(signIn?.attributes).toEqual({ 'portcullis.provider': 'corp', 'portcullis.method': 'oidc' })
    expect(callback?.attributes).toEqual({ 'portcullis.provider': 'corp', 'portcullis.method': 'oidc' })
    expect(signIn?.instrumentationScope.name).toBe('portcullis')
    const requests = finished.filter((span) => span.name.startsWith('POST ') || span.name.startsWith('GET '))
    const issuer = new URL(idp.issuer)
    // Discovery on the sign-in; the token request, the JWKS and userinfo on the callback.
    const inCallback = requests.filter((span) => span.parentSpanContext?.spanId === callback?.spanContext().spanId)
    expect(inCallback.map((span) => span.attributes['http.request.method'])).toContain('POST')
    for (const span of requests) {
      expect(span.attributes).toMatchObject({ 'server.address': issuer.hostname, 'http.response.status_code': 200 })
      expect(String(span.attributes['url.full'])).not.toContain('?')
    }
    expect(requests.length).toBeGreaterThanOrEqual(3)
    // The session reads of the test made no span.
    expect(finished.map((span) => span.name)).not.toContain('portcullis.session.read')
    expect(await counts()).toEqual({
      'portcullis.sign_ins': [{ attributes: { 'portcullis.method': 'oidc', 'portcullis.provider': 'corp', 'portcullis.outcome': 'success' }, value: 1 }],
    })
  })

  it('counts refused sign-ins by code, and ends their callback span with the error type', async () => {
    mount({ telemetry: true })
    const browser = new Browser()
    await postCredentials(browser, 'wrong-password')
    await postCredentials(browser, 'wrong-password')
    expect(await counts()).toEqual({
      'portcullis.refusals': [{ attributes: { 'portcullis.code': 'CredentialsSignin' }, value: 2 }],
      'portcullis.sign_ins': [{ attributes: { 'portcullis.method': 'credentials', 'portcullis.provider': 'credentials', 'portcullis.outcome': 'failure', 'portcullis.code': 'CredentialsSignin' }, value: 2 }],
    })
    const callback = spans.getFinishedSpans().find((span) => span.name === 'portcullis.callback')
    expect(callback?.status).toEqual({ code: 2, message: 'CredentialsSignin' })
    expect(callback?.attributes['error.type']).toBe('CredentialsSignin')
  })

  it('counts rate-limit rejections by scope', async () => {
    mount({ telemetry: true, rateLimit: { ip: { attempts: 100, windowSeconds: 60 }, identifier: { attempts: 1, windowSeconds: 60 } } })
    const browser = new Browser()
    await postCredentials(browser, 'wrong-password')
    const refused = await postCredentials(browser, 'wrong-password')
    expect(refused.status).toBe(429)
    const found = await counts()
    expect(found['portcullis.rate_limit.rejections']).toEqual([{ attributes: { 'portcullis.scope': 'identifier' }, value: 1 }])
    expect(found['portcullis.refusals']).toContainEqual({ attributes: { 'portcullis.code': 'RateLimited' }, value: 1 })
  })
})

describe('the session read', () => {
  it('has a span and a count with sessionReads on', async () => {
    mount({ telemetry: { sessionReads: true } })
    const browser = new Browser()
    await postCredentials(browser, 'right-password')
    await counts()
    spans.reset()
    const me = await browser.request(`${app.url}/me`)
    expect(me.status).toBe(200)
    expect(spans.getFinishedSpans().map((span) => span.name)).toEqual(['portcullis.session.read'])
    expect(await counts()).toEqual({ 'portcullis.session.reads': [{ attributes: { 'portcullis.outcome': 'session' }, value: 1 }] })
  })
})

describe('telemetry off (the default)', () => {
  it('makes no span and no count', async () => {
    mount({})
    const browser = new Browser()
    await signInWith(browser, app.url, 'corp')
    await postCredentials(browser, 'wrong-password')
    await browser.request(`${app.url}/me`)
    expect(spans.getFinishedSpans()).toEqual([])
    expect(await counts()).toEqual({})
  })
})
