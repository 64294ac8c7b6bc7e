/** GET /account: the themed account page of the signed-in user. */
import { issueCsrf, type Action, type ActionContext } from '../../../actions/context.js'
import { homeUrl } from '../../../actions/home.js'
import { compositionOf } from '../../../composition/index.js'
import type { AuthResponse } from '../../../http/respond.js'
import { AccountError } from '../errors.js'
import { renderAccountPage, type AccountLink, type LinkedProvider } from '../pages/account.js'
import { confirmationOrSignIn } from './shared.js'
import { authUrl } from '../../../actions/context.js'

export const accountPage: Action = async (ctx) => {
  const asking = await confirmationOrSignIn(ctx, authUrl(ctx, '/account'))
  if ('response' in asking) return asking.response
  return renderAccount(ctx, asking.confirmation.userId, 200)
}

/** The account page of `userId`, with a message. @throws AccountError `user_not_found` */
export async function renderAccount(ctx: ActionContext, userId: string, status: number, messages: { error?: string; notice?: string; codeFor?: string } = {}): Promise<AuthResponse> {
  const { config } = ctx
  const user = await config.adapter!.getUser!(userId)
  if (!user) throw new AccountError('user_not_found', 'The signed-in user is not in the database any more.')
  const accounts = await config.adapter!.getAccountsByUserId!(userId)
  const oauth = (type: string) => type === 'oauth' || type === 'oidc'
  const linked: LinkedProvider[] = []
  for (const account of accounts) {
    const provider = config.providerById.get(account.provider)
    if (provider && oauth(account.type)) linked.push({ id: provider.id, name: provider.name, providerAccountId: account.providerAccountId })
  }
  const connectable = config.providers.filter((provider) => oauth(provider.type) && !linked.some((entry) => entry.id === provider.id)).map((provider) => ({ id: provider.id, name: provider.name }))
  const csrf = issueCsrf(ctx)
  const html = renderAccountPage({
    basePath: ctx.basePath,
    csrfToken: csrf.token,
    name: user.name ?? null,
    email: user.email ?? null,
    emailVerified: user.emailVerified != null,
    emailChangeBy: (config.features.account as { emailChangeBy?: 'link' | 'code' | 'both' } | undefined)?.emailChangeBy,
    links: featureLinks(ctx),
    linked,
    connectable,
    ...messages,
    theme: config.theme,
    homeUrl: homeUrl(ctx),
  })
  return { status, html, cookies: csrf.cookies }
}

/** The pages of the features that are on, by their routes (the account wing imports none of them). */
function featureLinks(ctx: ActionContext): AccountLink[] {
  const on = new Set(compositionOf(ctx.config).enabled.map((feature) => feature.name))
  const links: AccountLink[] = []
  if (on.has('password')) links.push({ label: 'Password', action: 'Change your password', text: 'With your current one, or through a link mailed to you.', href: `${ctx.basePath}/change-password` })
  // The password wing's username page, when its provider has usernames (read off the config: no import of the wing).
  const usernames = ctx.config.providers.some((provider) => (provider as { password?: { usernames?: unknown } }).password?.usernames !== undefined && provider.type === 'credentials')
  if (on.has('password') && usernames) links.push({ label: 'Username', action: 'Choose your username', text: 'A name you can sign in with instead of your address.', href: `${ctx.basePath}/username` })
  if (on.has('passkey')) links.push({ label: 'Passkeys', action: 'Your passkeys', text: 'Sign in with your fingerprint, face or device PIN.', href: `${ctx.basePath}/passkeys` })
  if (on.has('two-factor')) links.push({ label: 'Two-step verification', action: 'Set it up', text: 'A code from an authenticator app after your password.', href: `${ctx.basePath}/two-factor/setup` })
  if (on.has('sessions')) links.push({ label: 'Sessions', action: 'Your sessions', text: 'Where you are signed in, and signing out other devices.', href: `${ctx.basePath}/sessions` })
  return links
}
