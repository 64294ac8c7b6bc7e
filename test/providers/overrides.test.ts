/**
 * What the built-in providers share (src/providers/overrides.ts): the options check and the mapping
 * of the OpenID Connect standard claims. Each built-in's own mapping is proven by its fixture
 * (catalogue.test.ts); these hold the shared contract.
 */
import { describe, expect, it } from '@jest/globals'
import { assertOptions, standardClaimsUser } from '../../src/providers/overrides.js'
import Keycloak from '../../src/providers/keycloak.js'
import MicrosoftEntraID from '../../src/providers/microsoft-entra-id.js'

describe('assertOptions', () => {
  it('throws a TypeError naming the provider when the options are not an object', () => {
    for (const bad of [null, 'x', 5, true]) expect(() => assertOptions('Keycloak', bad)).toThrow(new TypeError('Keycloak(options): options must be an object.'))
    expect(() => assertOptions('Keycloak', {})).not.toThrow()
  })

  it('is what the built-ins throw, before they read the options', () => {
    expect(() => Keycloak(null as never)).toThrow(new TypeError('Keycloak(options): options must be an object.'))
    // Entra takes tenantId out of the options first: the check still comes before.
    expect(() => MicrosoftEntraID(null as never)).toThrow(new TypeError('MicrosoftEntraID(options): options must be an object.'))
  })
})

describe('standardClaimsUser', () => {
  it('maps sub, name (else preferred_username), email, email_verified and picture', () => {
    expect(standardClaimsUser({ sub: 'u1', name: 'Jane', preferred_username: 'jane', email: 'j@example.com', email_verified: true, picture: 'https://img/j' })).toStrictEqual({
      id: 'u1',
      name: 'Jane',
      email: 'j@example.com',
      emailVerified: true,
      image: 'https://img/j',
    })
    expect(standardClaimsUser({ sub: 'u2', preferred_username: 'newbie' })).toStrictEqual({ id: 'u2', name: 'newbie', email: null, emailVerified: false, image: null })
  })

  it('marks the address verified only on the boolean true, not on a string or an absent claim', () => {
    for (const claim of ['true', 1, undefined, false]) expect(standardClaimsUser({ sub: 'u', email: 'a@example.com', email_verified: claim }).emailVerified).toBe(false)
  })

  it('lets a provider replace the fields it maps its own way', () => {
    expect(standardClaimsUser({ sub: 'u', name: 'N', picture: 'p' }, { image: null, emailVerified: true })).toStrictEqual({ id: 'u', name: 'N', email: null, emailVerified: true, image: null })
  })
})
