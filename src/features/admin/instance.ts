/**
 * The server-side API state of each instance, recorded when `Portcullis()` builds the admin
 * functions (`Feature.api`), so that the admin pages' routes call those same functions: the
 * permission is checked in one place, and the request's session is read once, shared with `auth()`.
 */
import type { Api } from '../../api/context.js'
import type { ResolvedConfig } from '../../config/types.js'

const apis = new WeakMap<ResolvedConfig, Api>()

/** Records `api` as its config's. */
export function recordApi(api: Api): Api {
  apis.set(api.config, api)
  return api
}

/** The API state of `config`. @throws Error when `Portcullis()` did not build it (a router made alone). */
export function apiOf(config: ResolvedConfig): Api {
  const api = apis.get(config)
  if (!api) throw new Error('The admin pages run inside an instance made by Portcullis(): its config has no server-side API.')
  return api
}
