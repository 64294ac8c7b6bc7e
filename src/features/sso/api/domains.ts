/**
 * The server-side `listSsoDomains`, `addSsoDomain`, `verifySsoDomain`, `removeSsoDomain` and
 * `markSsoDomainVerified`: the e-mail domains an organization proves are its own, before its
 * connections may sign in their addresses.
 */
import type { Api, CsrfOptions } from '../../../api/context.js'
import type { SsoDomain } from '../types.js'
import { loadManage, ssoCall, ssoOf, type SsoCallContext } from './context.js'

/**
 * An organization's domains, each with the DNS TXT record that verifies it.
 * @throws OrganizationError `not_signed_in`, `not_found`, `forbidden`
 */
export type ListSsoDomainsFunction = (req: SsoCallContext, options: { organizationId: string }) => Promise<SsoDomain[]>

/**
 * Claims a domain for the organization, unverified: publish its `record` (TXT
 * `_portcullis-sso.<domain>`), then call `verifySsoDomain`. Several organizations may claim one domain;
 * the first to verify it has it. CSRF-checked.
 * @throws SsoError `invalid_input`, `domain_taken`; OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 * @example
 * ```ts
 * const { record } = await addSsoDomain(req, { organizationId, domain: 'acme.example' })
 * // record: { type: 'TXT', name: '_portcullis-sso.acme.example', value: 'portcullis-sso-verification=…' }
 * ```
 */
export type AddSsoDomainFunction = (req: SsoCallContext, options: { organizationId: string; domain: string } & CsrfOptions) => Promise<SsoDomain>

/**
 * Looks up the domain's TXT record (`node:dns`, the SSO provider's `dnsServers`) and marks the domain
 * verified when it holds the domain's value exactly. CSRF-checked.
 * @throws SsoError `domain_unverified`, `domain_taken` (another organization verified it first); OrganizationError `not_signed_in`, `not_found`, `forbidden`; MissingCSRFError
 */
export type VerifySsoDomainFunction = (req: SsoCallContext, options: { domainId: string } & CsrfOptions) => Promise<SsoDomain>

/** Removes a domain: its addresses are no longer sent to the organization's identity provider. CSRF-checked. */
export type RemoveSsoDomainFunction = (req: SsoCallContext, options: { domainId: string } & CsrfOptions) => Promise<void>

/**
 * Marks a domain verified on the app's own word, for a domain it has checked another way (a sales
 * contract, a support ticket): needs `SSO({ domainVerification: 'dns-or-admin' })`. No request: the
 * app's own code calls it, never a route.
 * @throws SsoError `forbidden` (DNS verification only), `not_found`, `domain_taken`
 */
export type MarkSsoDomainVerifiedFunction = (domainId: string) => Promise<SsoDomain>

export function createListSsoDomains(api: Api): ListSsoDomainsFunction {
  return async (given, options) => {
    const { caller, manage } = await ssoCall(api, given, 'listSsoDomains()')
    return manage.listDomains(caller, options?.organizationId)
  }
}

export function createAddSsoDomain(api: Api): AddSsoDomainFunction {
  return async (given, options) => {
    const { caller, manage } = await ssoCall(api, given, 'addSsoDomain()', options ?? {})
    return manage.addDomain(caller, options.organizationId, options.domain)
  }
}

export function createVerifySsoDomain(api: Api): VerifySsoDomainFunction {
  return async (given, options) => {
    const { caller, sso, manage } = await ssoCall(api, given, 'verifySsoDomain()', options ?? {})
    return manage.verifyDomain(caller, sso, options.domainId)
  }
}

export function createRemoveSsoDomain(api: Api): RemoveSsoDomainFunction {
  return async (given, options) => {
    const { caller, manage } = await ssoCall(api, given, 'removeSsoDomain()', options ?? {})
    await manage.removeDomain(caller, options.domainId)
  }
}

export function createMarkSsoDomainVerified(api: Api): MarkSsoDomainVerifiedFunction {
  return async (domainId) => (await loadManage()).markDomainVerified(api.config, ssoOf(api.config, 'markSsoDomainVerified()'), domainId)
}
