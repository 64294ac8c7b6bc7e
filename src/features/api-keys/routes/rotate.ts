/**
 * POST /api-keys/rotate `{ csrfToken, id, gracePeriod?, organizationId? }`: a new key in place of one of the user's (or the organization's),
 * the old one valid for `gracePeriod` seconds. JSON clients get 201 with the new key; browsers the page showing it once.
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { field, jsonClient, keysPage, numberField, refusal, requestOwner, userOrSignIn } from './shared.js'

export const rotateApiKeyAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await userOrSignIn(ctx)
  if ('response' in asking) return asking.response
  try {
    const created = await (await loadManage()).rotateKey(ctx.config, asking.userId, field(ctx, 'id'), numberField(ctx, 'gracePeriod') ?? 0, await requestOwner(ctx, asking.userId))
    if (jsonClient(ctx)) return { status: 201, json: created, headers: { 'Cache-Control': 'no-store' } }
    return await keysPage(ctx, asking.userId, { created })
  } catch (error) {
    return refusal(ctx, asking.userId, error)
  }
}
