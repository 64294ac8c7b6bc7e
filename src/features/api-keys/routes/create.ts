/**
 * POST /api-keys `{ csrfToken, name, scopes?, expiresIn?, organizationId? }` (a form or JSON): creates a key for the
 * signed-in user, or for an organization whose keys they may manage. JSON clients get 201 `{ key, id, display, … }`; browsers the page with the key shown once.
 */
import { assertCsrf, postedList, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import { field, jsonClient, keysPage, numberField, refusal, requestOwner, userOrSignIn } from './shared.js'

export const createApiKeyAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await userOrSignIn(ctx)
  if ('response' in asking) return asking.response
  const metadata = (ctx.body as Record<string, unknown>).metadata
  try {
    const owner = await requestOwner(ctx, asking.userId)
    const created = await (await loadManage()).createKey(ctx.config, asking.userId, {
      name: field(ctx, 'name') ?? '',
      scopes: postedList(ctx, 'scopes') as string[] | undefined,
      expiresIn: numberField(ctx, 'expiresIn') as number | undefined,
      metadata: metadata as Record<string, unknown> | undefined,
    }, undefined, owner)
    if (jsonClient(ctx)) return { status: 201, json: created, headers: { 'Cache-Control': 'no-store' } }
    return await keysPage(ctx, asking.userId, { created })
  } catch (error) {
    return refusal(ctx, asking.userId, error)
  }
}
