/** GET /csrf: the CSRF token for a client-side form; sets the CSRF cookie when the request has none. */
import { issueCsrf, type Action } from './context.js'

export const csrf: Action = async (ctx) => {
  const { token, cookies } = issueCsrf(ctx)
  return { json: { csrfToken: token }, cookies }
}
