/**
 * POST /oauth-interaction/:uid: the consent page's answer (CSRF-checked). Allow grants what the
 * client asked for; Deny sends the client `access_denied`. Only the user the interaction signed in
 * may answer it, from the browser that holds its cookie.
 */
import { assertCsrf, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { endedPage, finish, grantAsked, interactionOf, userOrSignIn } from './shared.js'

export const decideConsent = (uid: string): Action => async (ctx: ActionContext) => {
  assertCsrf(ctx)
  const found = await interactionOf(ctx, uid)
  if ('response' in found) return found.response
  const { server, interaction } = found
  const asking = await userOrSignIn(ctx, uid)
  if ('response' in asking) return asking.response
  if (interaction.prompt.name !== 'consent' || interaction.session?.accountId !== asking.userId) return endedPage(ctx)
  if (stringValue(ctx.body.decision) !== 'allow') return finish(ctx, server, { error: 'access_denied', error_description: 'The user did not allow the request.' })
  return grantAsked(ctx, server, interaction, asking.userId)
}
