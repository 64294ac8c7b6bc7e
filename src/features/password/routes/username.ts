/**
 * GET /username: the signed-in user's username and a form to change it (the provider's `usernames`
 * option; signed-out visitors go to sign in). POST /username `{ csrfToken, username }`: CSRF-checked
 * and rate-limited; a refused name (the rules, or taken) comes back on the page, a stored one goes
 * back to the page, which shows it.
 */
import { actionPath, assertCsrf, authUrl, issueCsrf, pageUrl, stringValue, type Action, type ActionContext } from '../../../actions/context.js'
import { compositionOf } from '../../../composition/index.js'
import { homeUrl } from '../../../actions/home.js'
import { InvalidRequestError } from '../../../errors.js'
import type { AuthResponse } from '../../../http/respond.js'
import { sessionOwner } from '../../../session/devices.js'
import { UsernameError } from '../errors.js'
import { DEFAULT_USERNAME_HINT, renderUsernamePage } from '../pages/password.js'
import type { UsernameAdapter } from '../usernames.js'
import { passwordProvider } from './shared.js'

export const usernamePage: Action = async (ctx) => {
  const asking = await signedInUser(ctx)
  return typeof asking === 'string' ? page(ctx, asking, 200) : asking
}

export const changeUsernameAction: Action = async (ctx) => {
  assertCsrf(ctx)
  const asking = await signedInUser(ctx)
  if (typeof asking !== 'string') return asking
  const { changeUsername } = await import('../usernames.js')
  try {
    await changeUsername(ctx, passwordProvider(ctx.config), asking, ctx.body.username)
  } catch (error) {
    if (error instanceof UsernameError) return page(ctx, asking, 400, error.message)
    throw error
  }
  return { redirect: authUrl(ctx, '/username') }
}

/**
 * The signed-in user's id, or the response sending a visitor to sign in.
 * @throws InvalidRequestError when the provider has no usernames (the route is not for it).
 */
async function signedInUser(ctx: ActionContext): Promise<string | AuthResponse> {
  if (!passwordProvider(ctx.config).password.usernames) throw new InvalidRequestError('The password provider has no usernames: its usernames option is off.')
  const owner = await sessionOwner(ctx)
  if (owner) return owner.userId
  return { redirect: pageUrl(ctx, 'signIn', '/signin', { callbackUrl: authUrl(ctx, '/username') }) }
}

async function page(ctx: ActionContext, userId: string, status: number, error?: string): Promise<AuthResponse> {
  const settings = passwordProvider(ctx.config).password.usernames!
  const current = await (ctx.config.adapter as UsernameAdapter).getUsername(userId)
  const csrf = issueCsrf(ctx)
  const accountOn = compositionOf(ctx.config).enabled.some((feature) => feature.name === 'account')
  const html = renderUsernamePage({
    action: actionPath(ctx, '/username'),
    csrfToken: csrf.token,
    current,
    value: error === undefined ? undefined : stringValue(ctx.body.username),
    error,
    minLength: settings.minLength,
    maxLength: settings.maxLength,
    hint: settings.defaultPattern ? DEFAULT_USERNAME_HINT : undefined,
    ...(accountOn ? { accountUrl: authUrl(ctx, '/account') } : {}),
    theme: ctx.config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies }
}
