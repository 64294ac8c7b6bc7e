/**
 * POST /Users (RFC 7644 §3.3): provisioning. The address (`userName` when it is one, else the
 * primary e-mail) must be in the organization's verified domains, as for a sign-in through the
 * connection (the organization's identity provider speaks only for its own domains). The user of
 * that address is found or created, marked as the connection's (with its `externalId`), and made a
 * member of the organization with the connection's default role: 201 with the resource. A member
 * already is a conflict (409 `uniqueness`), as RFC 7644 §3.3 says for a resource that exists.
 */
import { emitEvent } from '../../../events.js'
import type { AdapterUser } from '../../../types.js'
import { domainOfAddress, verifiedDomains } from '../discovery.js'
import type { ScimCall } from './call.js'
import { ScimError } from './errors.js'
import { activate } from './lifecycle.js'
import type { ScimAnswer } from './answer.js'
import { scimBoolean, scimText } from './patch.js'
import { foldAttribute, nameAfter, remark, type UserChanges } from './user-changes.js'
import { externalIdOf, scimUserOf, userResource } from './users.js'

export async function createUser(call: ScimCall, body: Record<string, unknown>): Promise<ScimAnswer> {
  const email = await provisionedAddress(call, body)
  const externalId = scimText(body.externalId, 'externalId')
  const changes: UserChanges = { name: {} }
  for (const key of ['displayName', 'name'] as const) if (body[key] !== undefined) foldAttribute(changes, key.toLowerCase(), body[key])
  const existing = await scimUserOf(call, await call.adapter.getUserByEmail(email))
  if (existing?.member) throw new ScimError(409, 'This user is provisioned already: a member of the organization.', 'uniqueness')
  const user = existing?.user ?? (await newUser(call, email, nameAfter(null, changes.name) ?? null))
  if (!existing?.mark || externalId !== externalIdOf(call, existing.mark)) await remark(call, { user, mark: existing?.mark ?? null }, externalId)
  if (body.active === undefined || scimBoolean(body.active, 'active')) await activate(call, user.id, externalId, existing !== null)
  const created = (await scimUserOf(call, await call.adapter.getUser(user.id)))!
  return { status: 201, body: userResource(call, created), location: `${call.baseUrl}/Users/${encodeURIComponent(user.id)}` }
}

/** The address to provision, lower case. @throws ScimError 400 `invalidValue` outside the verified domains */
async function provisionedAddress(call: ScimCall, body: Record<string, unknown>): Promise<string> {
  const userName = scimText(body.userName, 'userName', 320)
  if (userName === null) throw new ScimError(400, 'userName is required.', 'invalidValue')
  const emails = Array.isArray(body.emails) ? (body.emails as Array<Record<string, unknown>>) : []
  const primary = emails.find((email) => email?.primary === true || email?.primary === 'True' || email?.primary === 'true') ?? emails[0]
  const address = (userName.includes('@') ? userName : typeof primary?.value === 'string' ? primary.value : '').trim().toLowerCase()
  const domain = domainOfAddress(address)
  if (domain === null || !(await verifiedDomains(call.config, call.connection.organizationId)).has(domain)) {
    throw new ScimError(400, `The address ${domain === null ? '(none)' : `of ${domain}`} is outside the organization's verified domains: its identity provider provisions only addresses of its own domains.`, 'invalidValue')
  }
  return address
}

async function newUser(call: ScimCall, email: string, name: string | null): Promise<AdapterUser> {
  // The organization proved it owns the domain: its identity provider's word verifies the address, as at a sign-in through it.
  let user: AdapterUser
  try {
    user = await call.adapter.createUser({ email, emailVerified: new Date(Date.now()), name, image: null })
  } catch (error) {
    // Two provisionings of one address at once (an IdP's retry): the address's unique index let one create it.
    const raced = await call.adapter.getUserByEmail(email)
    if (!raced) throw error
    return raced
  }
  await emitEvent(call.config, 'createUser', { user })
  return user
}
