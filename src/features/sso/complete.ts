/**
 * The end of every SSO sign-in, once the identity provider's answer is verified (an OIDC callback or
 * a SAML response): the address must lie in the organization's verified domains (that is what lets
 * the organization's IdP speak for it, and link to a user of that address), then the OAuth engine's
 * steps (the linked account `<connection id>:<subject>`, the user, a further factor, the session).
 * Just-in-time membership and the SSO-only rule run in the `beforeSession` hook (hooks.ts), so that
 * a sign-in resumed after a second factor passes them too.
 */
import type { ActionContext } from '../../actions/context.js'
import type { AuthResponse } from '../../http/respond.js'
import type { Profile } from '../../providers/oauth.js'
import type { SecondFactorProof } from '../../types.js'
import type { VerifiedSignIn } from '../oauth/callback.js'
import { completeProviderSignIn } from '../oauth/complete-sign-in.js'
import type { OAuthProvider } from '../oauth/provider.js'
import type { SsoProvider } from './config.js'
import { domainOfAddress, verifiedDomains } from './discovery.js'
import { SsoError } from './errors.js'
import type { AdapterSsoConnection } from './types.js'

/** The sign-in method's kind (further factor, pending sign-ins). */
export const SSO_KIND = 'sso'

/** Who the identity provider says signed in. */
export interface SsoIdentity {
  /** Its stable id for the user: the OIDC `sub`, the SAML NameID. */
  readonly subject: string
  readonly email: string | null
  readonly name: string | null
  readonly image: string | null
  readonly profile: Profile
}

/** The account id of a subject of a connection: a subject is unique per identity provider only. */
export function ssoAccountId(connectionId: string, subject: string): string {
  return `${connectionId}:${subject}`
}

/** The connection id of an SSO account id. */
export function connectionIdOfAccount(providerAccountId: string): string {
  return providerAccountId.slice(0, providerAccountId.indexOf(':'))
}

/**
 * What the OAuth engine's completion reads of a provider, for an SSO sign-in: its id, and that it may
 * link to the user of the same address (the address is in a domain the organization verified).
 */
export function ssoStandIn(sso: SsoProvider): OAuthProvider {
  return { id: sso.id, allowDangerousEmailAccountLinking: true } as OAuthProvider
}

/**
 * Signs the identity in through the connection.
 * @throws SsoError `address_outside_domains`; what the OAuth engine's completion throws
 */
export async function completeSsoSignIn(ctx: ActionContext, sso: SsoProvider, connection: AdapterSsoConnection, identity: SsoIdentity, twoFactor?: SecondFactorProof): Promise<AuthResponse> {
  const email = identity.email?.trim().toLowerCase() ?? null
  const domain = domainOfAddress(email)
  if (email === null || domain === null || !(await verifiedDomains(ctx.config, connection.organizationId)).has(domain)) {
    throw new SsoError('address_outside_domains', `The identity provider of connection ${connection.id} answered ${email === null ? 'no address' : `an address of ${domain}`}, outside the organization's verified domains: refused, since its word counts only for the organization's own domains.`)
  }
  const providerAccountId = ssoAccountId(connection.id, identity.subject)
  const signIn: VerifiedSignIn = {
    provider: ssoStandIn(sso),
    user: { id: providerAccountId, email, name: identity.name, image: identity.image },
    account: { provider: sso.id, type: 'sso', providerAccountId },
    profile: identity.profile,
  }
  return completeProviderSignIn(ctx, signIn, twoFactor, SSO_KIND)
}
