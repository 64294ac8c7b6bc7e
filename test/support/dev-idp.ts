/** The example's dev identity provider for tests, with oidc-provider's expected start-up warnings muted. */
import type { DevIdp } from '../../examples/express/dev-idp.js'

/**
 * Starts the example's dev IdP with oidc-provider's start-up warnings (development interactions,
 * in-memory store, Node 20) muted: they are expected here. Loaded on demand, because oidc-provider
 * warns as soon as it loads.
 */
export async function startQuietDevIdp(options: { host: string; clientRedirectUri: string }): Promise<DevIdp> {
  const warn = console.warn
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith('oidc-provider WARNING:')) warn(...args)
  }
  try {
    const { startDevIdp } = await import('../../examples/express/dev-idp.js')
    return await startDevIdp(options)
  } finally {
    console.warn = warn
  }
}
