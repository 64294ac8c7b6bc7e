/**
 * POST /organizations `{ csrfToken, name, slug? }` (a form or JSON; JSON may add `logo`, `metadata`):
 * creates an organization, the signed-in user its owner. JSON clients get 201 `{ organization }`;
 * browsers go back to the organizations page. It does not become the active one (POST /organizations/active).
 */
import { assertCsrf, type Action } from '../../../actions/context.js'
import { loadManage } from '../api/context.js'
import type { NewOrganization } from '../manage.js'
import { backTo, callerOrSignIn, jsonAnswer, jsonClient, optionalField, posted, refusal } from './organization-shared.js'

export const createOrganizationAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await callerOrSignIn(ctx, '/organizations')
  if ('response' in asking) return asking.response
  const input = { name: posted(ctx, 'name'), slug: optionalField(ctx, 'slug'), logo: optionalField(ctx, 'logo'), metadata: jsonClient(ctx) ? posted(ctx, 'metadata') : undefined } as NewOrganization
  try {
    const organization = await (await loadManage()).createOrganization(asking.caller, input)
    return jsonClient(ctx) ? jsonAnswer({ organization }, { status: 201 }) : backTo(ctx, '/organizations')
  } catch (error) {
    return refusal(ctx, asking.caller, error)
  }
}
