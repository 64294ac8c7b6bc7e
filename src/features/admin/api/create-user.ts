/** The server-side `createUser(req, { email, name })`: an administrator adds a user, who sets their own password. */
import type { Api } from '../../../api/context.js'
import { emitEvent } from '../../../events.js'
import { normalizeEmailAddress } from '../../../mail/normalize.js'
import type { AdapterUser } from '../../../types.js'
import { AdminError } from '../errors.js'
import type { CreateUserOptions } from '../types.js'
import { adminCall, type AdminCallContext } from './context.js'

/**
 * Creates a user with `email` (normalised as every sign-in does) and `name`, their address not yet
 * verified and their roles the default ones (`setUserRoles` changes them), then, unless
 * `sendPasswordLink` is false, mails them the password provider's reset link, with which they set a
 * password (and prove the address). The administrator never chooses or sees a password. Emits
 * `createUser`. Needs `user: ['create']`; CSRF-checked.
 *
 * @returns The new user; `linkExpires` when the link was mailed, and null when it was not (none asked, or the mail failed: logged).
 * @throws AdminError `not_signed_in`, `forbidden`, `email_taken`; MissingCSRFError; TypeError for a bad address or name; UnknownActionError (a link without a password provider)
 * @example
 * ```ts
 * app.post('/admin/users', express.urlencoded({ extended: false }), async (req, res) => {
 *   const { user } = await createUser(req, { email: req.body.email, name: req.body.name, csrfToken: req.body.csrfToken })
 *   res.redirect(`/admin/users/${user.id}`)
 * })
 * ```
 */
export type CreateUserFunction = (req: AdminCallContext, options: CreateUserOptions) => Promise<{ user: AdapterUser; linkExpires: Date | null }>

export function createCreateUser(api: Api): CreateUserFunction {
  return async (given, options) => {
    if (options === null || typeof options !== 'object') throw new TypeError('createUser(req, { email, name?, sendPasswordLink?, csrfToken }): options must be an object.')
    let email: string
    try {
      email = normalizeEmailAddress(options.email)
    } catch (error) {
      throw new TypeError(`createUser(): email is not an address (${(error as Error).message}).`)
    }
    const name = options.name === undefined || options.name === '' ? null : options.name
    if (name !== null && (typeof name !== 'string' || name.length > 200)) throw new TypeError('createUser(): name must be a string of at most 200 characters.')
    const { ctx } = await adminCall(api, given, 'createUser()', 'create', options)
    const sendLink = options.sendPasswordLink !== false
    const provider = sendLink ? (await import('../../password/routes/shared.js')).passwordProvider(api.config) : undefined
    const adapter = api.config.adapter!
    if (await adapter.getUserByEmail!(email)) throw new AdminError('email_taken', `createUser(): a user with the address ${email} exists.`)
    // The users table's unique address refuses a second one racing this.
    const user = await adapter.createUser!({ email, name, emailVerified: null })
    await emitEvent(api.config, 'createUser', { user })
    if (!provider) return { user, linkExpires: null }
    const accounts = await (await import('../../password/load.js')).loadAccounts()
    return { user, linkExpires: await accounts.mailResetLink(ctx, provider, user, email) }
  }
}
