/** GET /api-keys: the themed page of the user's keys (browsers), or the list as JSON `{ keys }` (JSON clients). */
import type { Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { jsonClient, keysPage, userOrSignIn } from './shared.js'

export const apiKeysPage: Action = async (ctx) => {
  const asking = await userOrSignIn(ctx)
  if ('response' in asking) return asking.response
  if (jsonClient(ctx)) return { json: { keys: await (await loadManage()).listKeys(ctx.config, asking.userId) }, headers: { 'Cache-Control': 'no-store' } }
  return keysPage(ctx, asking.userId)
}
