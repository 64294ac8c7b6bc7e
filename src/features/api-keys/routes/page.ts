/** GET /api-keys: the themed page of the user's keys (browsers), or the list as JSON `{ keys }` (JSON clients; `?organizationId=` for an organization's). */
import type { Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { jsonClient, keysPage, refusal, requestOwner, userOrSignIn } from './shared.js'

export const apiKeysPage: Action = async (ctx) => {
  const asking = await userOrSignIn(ctx)
  if ('response' in asking) return asking.response
  if (jsonClient(ctx)) {
    try {
      const owner = await requestOwner(ctx, asking.userId)
      return { json: { keys: await (await loadManage()).listKeys(ctx.config, owner) }, headers: { 'Cache-Control': 'no-store' } }
    } catch (error) {
      return refusal(ctx, asking.userId, error)
    }
  }
  return keysPage(ctx, asking.userId)
}
