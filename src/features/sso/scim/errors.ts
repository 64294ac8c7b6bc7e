/**
 * SCIM's error answer (RFC 7644 §3.12): a status, a `scimType` for the 400 and 409 kinds that have
 * one, and a `detail` for the identity provider's log. Thrown by the resource handlers, written by
 * the mount: a SCIM client reads only this shape, never the router's `{ error, message }`.
 */

/** The schema URNs of RFC 7643/7644 that the endpoints speak. */
export const URN = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  listResponse: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const

/** RFC 7644 §3.12, table 9: the detail error keywords this server uses. */
export type ScimType = 'invalidFilter' | 'uniqueness' | 'invalidSyntax' | 'invalidPath' | 'invalidValue' | 'mutability' | 'noTarget'

/** A refused SCIM request. */
export class ScimError extends Error {
  readonly status: number
  readonly scimType: ScimType | undefined

  constructor(status: number, detail: string, scimType?: ScimType) {
    super(detail)
    this.status = status
    this.scimType = scimType
  }

  /** The body RFC 7644 §3.12 gives it (`status` is a string there). */
  get body(): Record<string, unknown> {
    return { schemas: [URN.error], status: String(this.status), ...(this.scimType && { scimType: this.scimType }), detail: this.message }
  }
}

/** 404 for a resource this connection does not see (another organization's user is no different from none). */
export function notFound(what: string, id: string): ScimError {
  return new ScimError(404, `${what} ${JSON.stringify(id.slice(0, 100))} not found.`)
}
