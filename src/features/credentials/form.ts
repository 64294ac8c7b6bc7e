/** What a sign-in posted by the app's form (credentials, passwords) asks of the request at /callback/:id. */
import { assertCsrf, type ActionContext } from '../../actions/context.js'
import { UnknownActionError } from '../../errors.js'

/** @throws UnknownActionError for anything but a POST; MissingCSRFError without this site's CSRF token. */
export function assertFormPost(ctx: ActionContext, provider: { readonly id: string }): void {
  if (ctx.method !== 'POST') throw new UnknownActionError(`The ${provider.id} callback takes a POST of the sign-in form.`)
  assertCsrf(ctx)
}
