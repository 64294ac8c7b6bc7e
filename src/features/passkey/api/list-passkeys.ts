/** The server-side `listPasskeys(req)`. */
import { listUserPasskeys } from '../routes/shared.js'
import { signedInUserId } from '../../../session/strategy.js'
import type { PasskeyInfo } from '../types.js'
import type { Api } from '../../../api/context.js'
import { passkeysCall, type PasskeysCallContext } from './context.js'

/**
 * The signed-in user's passkeys (never their public keys); `[]` when nobody is signed in.
 * @throws UnknownActionError when no passkey provider is configured.
 * @example
 * ```ts
 * app.get('/account/passkeys', async (req, res) => res.json(await listPasskeys(req)))
 * ```
 */
export type ListPasskeysFunction = (req: PasskeysCallContext) => Promise<PasskeyInfo[]>

export function createListPasskeys(api: Api): ListPasskeysFunction {
  return async (given) => {
    const ctx = passkeysCall(api, given, 'listPasskeys()')
    const userId = await signedInUserId(ctx)
    return userId ? listUserPasskeys(api.config, userId) : []
  }
}
