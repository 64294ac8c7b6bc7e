/**
 * What `listPasskeys` and `removePasskey` share (list-passkeys.ts, remove-passkey.ts): the request
 * they are called on, and the check that a passkey provider is configured.
 */
import type { ActionContext } from '../../../actions/context.js'
import { passkeyProvider } from '../routes/shared.js'
import { actionContext, givenRequest, type Api } from '../../../api/context.js'
import type { SessionsCallContext } from '../../../api/sessions-context.js'

/** The request, or `{ req, res }` (as for the session list's functions). */
export type PasskeysCallContext = SessionsCallContext

/**
 * The call on `given`.
 * @throws TypeError when `given` is not a request.
 * @throws UnknownActionError when no passkey provider is configured.
 */
export function passkeysCall(api: Api, given: unknown, what: string): ActionContext {
  const { req } = givenRequest(given, what)
  passkeyProvider(api.config)
  return actionContext(api, req)
}
