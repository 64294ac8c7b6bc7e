/**
 * The discovery endpoints (RFC 7644 §4): GET /ServiceProviderConfig (what is supported: PATCH and
 * one-comparison filters, no bulk, sort, ETags or password changes; groups only with teams),
 * GET /ResourceTypes and GET /Schemas (the User and Group core schemas, RFC 7643 §8.7.1, reduced to
 * the attributes this server keeps).
 */
import { organizationsOf } from '../../organizations/config.js'
import { MAX_RESULTS, type ScimCall } from './call.js'
import { notFound, URN } from './errors.js'
import type { ScimAnswer } from './answer.js'

/** This server's extension of ServiceProviderConfig: whether /Groups (the organization's teams) is served. */
export const GROUPS_EXTENSION = 'urn:portcullis:params:scim:ServiceProviderConfig'

export function groupsOn(call: Pick<ScimCall, 'config'>): boolean {
  return organizationsOf(call.config)?.teams !== undefined
}

export function serviceProviderConfig(call: ScimCall): ScimAnswer {
  const body = {
    schemas: [URN.serviceProviderConfig, GROUPS_EXTENSION],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{ type: 'oauthbearertoken', name: 'Bearer token', description: "The connection's SCIM token, in the Authorization header (Bearer).", primary: true }],
    [GROUPS_EXTENSION]: { groups: groupsOn(call), groupsAre: 'the organization\'s teams (organizations.teams)' },
    meta: { resourceType: 'ServiceProviderConfig', location: `${call.baseUrl}/ServiceProviderConfig` },
  }
  return { status: 200, body }
}

function resourceTypes(call: ScimCall): Record<string, unknown>[] {
  const type = (id: 'User' | 'Group', endpoint: string, schema: string) => ({
    schemas: [URN.resourceType],
    id,
    name: id,
    endpoint,
    schema,
    meta: { resourceType: 'ResourceType', location: `${call.baseUrl}/ResourceTypes/${id}` },
  })
  return [type('User', '/Users', URN.user), ...(groupsOn(call) ? [type('Group', '/Groups', URN.group)] : [])]
}

type Attribute = Record<string, unknown>
const attribute = (name: string, extra: Partial<Attribute> = {}): Attribute => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
})

function schemas(call: ScimCall): Record<string, unknown>[] {
  const schema = (id: string, name: string, attributes: Attribute[]) => ({ schemas: [URN.schema], id, name, attributes, meta: { resourceType: 'Schema', location: `${call.baseUrl}/Schemas/${id}` } })
  const user = schema(URN.user, 'User', [
    attribute('userName', { required: true, uniqueness: 'server' }),
    attribute('name', { type: 'complex', subAttributes: [attribute('formatted'), attribute('givenName'), attribute('familyName')] }),
    attribute('displayName'),
    attribute('emails', { type: 'complex', multiValued: true, subAttributes: [attribute('value'), attribute('type'), attribute('primary', { type: 'boolean' })] }),
    attribute('active', { type: 'boolean' }),
  ])
  const members = [attribute('value', { mutability: 'immutable' }), attribute('display', { mutability: 'readOnly' }), attribute('$ref', { type: 'reference', referenceTypes: ['User'], mutability: 'immutable' })]
  const group = schema(URN.group, 'Group', [attribute('displayName', { required: true, uniqueness: 'server' }), attribute('members', { type: 'complex', multiValued: true, subAttributes: members })])
  return [user, ...(groupsOn(call) ? [group] : [])]
}

/** GET /ResourceTypes, /Schemas (a ListResponse), or one of them by id. */
export function discoveryList(call: ScimCall, which: 'ResourceTypes' | 'Schemas', id: string | undefined): ScimAnswer {
  const all = which === 'Schemas' ? schemas(call) : resourceTypes(call)
  if (id !== undefined) {
    const one = all.find((item) => item.id === id)
    if (!one) throw notFound(which === 'Schemas' ? 'Schema' : 'ResourceType', id)
    return { status: 200, body: one }
  }
  return { status: 200, body: { schemas: [URN.listResponse], totalResults: all.length, startIndex: 1, itemsPerPage: all.length, Resources: all } }
}
