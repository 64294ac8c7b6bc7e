/** What a SCIM handler answers, for the mount to write: a status, a body (none for 204), the `Location` of a created resource. */
export interface ScimAnswer {
  readonly status: number
  readonly body?: unknown
  readonly location?: string
}
