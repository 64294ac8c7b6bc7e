import { getJson } from './config.js'
import type { ClientProvider } from './types.js'

/**
 * The providers the server offers, by id: to draw sign-in buttons.
 *
 * @example
 * for (const provider of Object.values(await getProviders())) console.log(provider.name)
 * @throws AuthClientError
 */
export function getProviders(): Promise<Record<string, ClientProvider>> {
  return getJson('/providers')
}
