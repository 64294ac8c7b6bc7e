/**
 * What a session keeps of a sign-in's provider tokens (src/session/provider-tokens.ts), function by
 * function: which sign-ins bring tokens, what a new session passes on from the one it replaces, the
 * claim's shape as a cookie may carry it, the refresh error mark, and the account row's new fields.
 * The flows around them (sign-in, getAccessToken, refresh) are tested in test/oauth/refresh*.test.ts.
 */
import { describe, expect, it } from '@jest/globals'
import type { Account, JWT } from 'portcullis'
import { hasRefreshError, providerTokensOf, signInProviderTokens, signInTokenChanges, tokensClaim } from 'portcullis/session/provider-tokens'

const oauth = (fields: Partial<Account> = {}): Account => ({ provider: 'corp', providerAccountId: 'alice', type: 'oidc', ...fields })

describe('providerTokensOf', () => {
  it('keeps the access token, refresh token and expiry of an OAuth or OIDC sign-in', () => {
    const account = oauth({ type: 'oauth', access_token: 'at', refresh_token: 'rt', expires_at: 1_800_000_000, id_token: 'id', token_type: 'Bearer' })
    expect(providerTokensOf(account)).toEqual({ access_token: 'at', refresh_token: 'rt', expires_at: 1_800_000_000 })
    expect(providerTokensOf(oauth({ access_token: 'at' }))).toEqual({ access_token: 'at' })
  })

  it('keeps a refresh token that came without an access token', () => {
    expect(providerTokensOf(oauth({ refresh_token: 'rt' }))).toEqual({ refresh_token: 'rt' })
  })

  it('gives nothing for a sign-in without tokens or without a provider account', () => {
    expect(providerTokensOf(null)).toBeUndefined()
    expect(providerTokensOf(undefined)).toBeUndefined()
    expect(providerTokensOf(oauth({ id_token: 'id', expires_at: 1_800_000_000 }))).toBeUndefined()
    // Credentials, e-mail and passkey accounts carry no provider tokens, whatever their fields say.
    for (const type of ['credentials', 'email', 'webauthn'] as const) expect(providerTokensOf(oauth({ type, access_token: 'at' }))).toBeUndefined()
  })
})

describe('signInProviderTokens', () => {
  const previous: JWT = { sub: 'alice', provider_tokens: { github: { access_token: 'gh' } } }

  it('puts the sign-in’s tokens under its provider, beside the other providers’ of the same user’s session', () => {
    expect(signInProviderTokens(oauth({ access_token: 'at' }), previous, 'alice')).toEqual({ github: { access_token: 'gh' }, corp: { access_token: 'at' } })
    expect(signInProviderTokens(oauth({ access_token: 'at' }), null, 'alice')).toEqual({ corp: { access_token: 'at' } })
  })

  it('passes the replaced session’s tokens on to a sign-in without tokens, as a copy', () => {
    const claim = signInProviderTokens(null, previous, 'alice')
    expect(claim).toEqual({ github: { access_token: 'gh' } })
    expect(claim).not.toBe(previous.provider_tokens)
  })

  it('passes nothing on from another user’s session, or when the new user is unknown', () => {
    expect(signInProviderTokens(null, previous, 'bob')).toBeUndefined()
    expect(signInProviderTokens(null, previous, undefined)).toBeUndefined()
    expect(signInProviderTokens(null, { provider_tokens: { github: { access_token: 'gh' } } }, undefined)).toBeUndefined()
    expect(signInProviderTokens(oauth({ access_token: 'at' }), previous, 'bob')).toEqual({ corp: { access_token: 'at' } })
  })

  it('gives no claim at all when there is nothing to keep', () => {
    expect(signInProviderTokens(null, null, 'alice')).toBeUndefined()
    expect(signInProviderTokens(null, { sub: 'alice', provider_tokens: {} }, 'alice')).toBeUndefined()
    expect(signInProviderTokens(null, { sub: 'alice' }, 'alice')).toBeUndefined()
  })
})

describe('tokensClaim', () => {
  it('reads the claim only when it is a plain object', () => {
    expect(tokensClaim({ provider_tokens: { corp: { access_token: 'at' } } })).toEqual({ corp: { access_token: 'at' } })
    // What a tampered or foreign token could hold instead: none of it is taken for tokens.
    for (const claim of [null, 'corp', 42, true, [{ access_token: 'at' }]]) expect(tokensClaim({ provider_tokens: claim } as unknown as JWT)).toBeUndefined()
  })
})

describe('hasRefreshError', () => {
  it('is true when any provider’s entry carries the refresh error', () => {
    expect(hasRefreshError({ provider_tokens: { corp: { access_token: 'at' }, github: { error: 'invalid_grant' } } })).toBe(true)
  })

  it('is false without a claim, and ignores entries that are not objects', () => {
    expect(hasRefreshError({})).toBe(false)
    expect(hasRefreshError({ provider_tokens: { corp: { access_token: 'at' } } })).toBe(false)
    expect(hasRefreshError({ provider_tokens: { corp: null, github: 'error', gitlab: { error: 42 } } } as unknown as JWT)).toBe(false)
  })
})

describe('signInTokenChanges', () => {
  it('replaces every token field of the stored account with the new sign-in’s', () => {
    const account = oauth({ access_token: 'at', refresh_token: 'rt', expires_at: 1_800_000_000, token_type: 'bearer', scope: 'openid', id_token: 'id', session_state: 'st' })
    expect(signInTokenChanges(account)).toStrictEqual({ access_token: 'at', refresh_token: 'rt', expires_at: 1_800_000_000, token_type: 'bearer', scope: 'openid', id_token: 'id', session_state: 'st' })
  })

  it('clears the fields the provider did not send, but keeps the refresh token it sent only once', () => {
    // Google sends a refresh token on the first consent only: later sign-ins must not erase it.
    expect(signInTokenChanges(oauth({ access_token: 'at', refresh_token: '' }))).toStrictEqual({ access_token: 'at', expires_at: null, token_type: null, scope: null, id_token: null, session_state: null })
  })

  it('stores an expiry only when it is a finite number', () => {
    for (const expires_at of [Number.NaN, Number.POSITIVE_INFINITY, '1800000000']) expect(signInTokenChanges(oauth({ expires_at } as Partial<Account>)).expires_at).toBeNull()
    expect(signInTokenChanges(oauth({ expires_at: 0 })).expires_at).toBe(0)
  })
})
