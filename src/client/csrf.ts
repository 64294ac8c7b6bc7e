import { getJson } from './config.js'

/**
 * The CSRF token to send with a state-changing POST. The same request sets the CSRF cookie the
 * token is checked against (double-submit).
 *
 * @example
 * const csrfToken = await getCsrfToken()
 * @throws AuthClientError
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html
 */
export async function getCsrfToken(): Promise<string> {
  return (await getJson<{ csrfToken: string }>('/csrf')).csrfToken
}
