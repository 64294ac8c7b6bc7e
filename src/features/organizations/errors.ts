/** The organizations wing's error (`organizations` option). */
import { AuthError } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    Organization: true
  }
}

/**
 * Why an organization call failed:
 * - `not_signed_in`: nobody is signed in by a cookie session on the request;
 * - `invalid_input`: a name, slug, role, address or id that cannot be used (the message says which);
 * - `not_found`: no organization, member, invitation or team of this id that the caller may see
 *   (the same answer whether it does not exist or belongs to an organization the caller is not in);
 * - `forbidden`: the caller is a member but their roles there do not grant the action;
 * - `slug_taken`: another organization has this slug;
 * - `last_owner`: the change would leave the organization without an owner;
 * - `limit_reached`: `organizationsPerUser`, `membersPerOrganization` (pending invitations counted) or `teams.maxTeamsPerOrganization` is reached;
 * - `invalid_invitation`: the invitation is unknown, used, declined, cancelled, expired or for another address
 *   (one message for every reason: the answer tells nothing of which);
 * - `already_member`: the address invited belongs to a member (said to the inviter only, who can list members);
 * - `rate_limited`: too many mails of one invitation (`retryAfterSeconds` says when to try again).
 */
export type OrganizationErrorCode = 'not_signed_in' | 'invalid_input' | 'not_found' | 'forbidden' | 'slug_taken' | 'last_owner' | 'limit_reached' | 'invalid_invitation' | 'already_member' | 'rate_limited'

/** A failed organization, member, invitation or team call; see `OrganizationErrorCode`. */
export class OrganizationError extends AuthError {
  readonly code: OrganizationErrorCode
  /** With `rate_limited`: the seconds until another try may succeed (the routes' `Retry-After`). */
  readonly retryAfterSeconds: number | undefined

  constructor(code: OrganizationErrorCode, message: string, retryAfterSeconds?: number) {
    super('Organization', message)
    this.code = code
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** The HTTP status of each code, for the JSON routes. */
export function statusOf(code: OrganizationErrorCode): number {
  switch (code) {
    case 'not_signed_in':
      return 401
    case 'forbidden':
      return 403
    case 'not_found':
      return 404
    case 'rate_limited':
      return 429
    case 'slug_taken':
    case 'last_owner':
    case 'already_member':
    case 'limit_reached':
      return 409
    default:
      return 400
  }
}
