/**
 * The session user's fields that wings carry out of the app's callbacks' reach (`SessionUserField`,
 * the roles): put back into the token after the `jwt` callback, and into the session after the
 * `session` callback, so that neither (nor the client data of an `update()` they are given) changes them.
 */
import type { ResolvedConfig, SessionUserField } from '../config/types.js'
import type { JWT, Session } from '../types.js'

/** `token` with each field's claim as `sealed` had it (absent when it had none). */
export function keepFieldClaims(fields: readonly SessionUserField[], sealed: JWT, token: JWT): JWT {
  for (const { name } of fields) {
    if (token[name] === sealed[name]) continue
    if (sealed[name] === undefined) delete token[name]
    else token[name] = sealed[name]
  }
  return token
}

/** Sets each field on `session.user` from the token's claims. */
export function setFieldsFromClaims(config: ResolvedConfig, fields: readonly SessionUserField[], session: Session, token: JWT): void {
  for (const field of fields) session.user[field.name] = field.fromClaim(config, token[field.name])
}

/** The fields' values on `session.user`, in the fields' order (before the `session` callback). */
export function fieldValues(fields: readonly SessionUserField[], session: Session): unknown[] {
  return fields.map(({ name }) => session.user[name])
}

/**
 * The `session` callback's answer with the fields' values from before it (`fieldValues`) put back:
 * the callback may shape the session, not change what the wings carry.
 */
export function keepSessionFields(fields: readonly SessionUserField[], values: readonly unknown[], answer: Session): Session {
  if (!answer || typeof answer !== 'object' || !answer.user || typeof answer.user !== 'object') return answer
  fields.forEach(({ name }, i) => (answer.user[name] = values[i]))
  return answer
}
