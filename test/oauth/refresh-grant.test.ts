/**
 * One refresh token grant (src/features/oauth/refresh-grant.ts) as a unit, against a token endpoint that
 * answers what RFC 6749 §5.1 and §5.2 let a provider answer: which refresh token the caller keeps
 * (the rotated one, or the one it sent), `expires_at` counted from the time given, and the optional
 * fields present exactly when the provider sent them. Then the failures, each with its code and the
 * message an operator reads in the log: a refused refresh token (`invalid_grant`, with the advice to
 * sign in again), the provider's other errors, GitHub's error body sent with HTTP 200, an outage and
 * a refused connection. Last, `isFresh`, which decides whether a stored access token is used as it
 * is or refreshed first.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { SignJWT } from 'jose'
import { RefreshAccessTokenError } from 'portcullis'
import type { OAuthProvider } from '../../src/features/oauth/provider.js'
import { isFresh, refreshGrant } from '../../src/features/oauth/refresh-grant.js'
import { ACME_CLIENT_ID as CLIENT_ID, ACME_KEY_ID, startAcme } from '../support/acme-provider.js'
import { closedPort } from '../support/ports.js'
import type { MockAnswer, ProviderApi } from '../providers/provider-api.js'
import { rejectionOf } from '../support/rejection.js'

const NOW = 1_800_000_000

let api: ProviderApi
let acme: OAuthProvider
/** The same provider, its token endpoint at a port nothing listens on. */
let unreachable: OAuthProvider
let signingKey: CryptoKey
/** What the token endpoint answers next: each test sets it. */
let tokenAnswer: MockAnswer

beforeAll(async () => {
  const started = await startAcme({ 'POST /token': () => tokenAnswer }, { acme: {}, 'acme-unreachable': { token: `http://127.0.0.1:${await closedPort()}/token` } })
  api = started.api
  signingKey = started.signingKey
  acme = started.providers.get('acme')!
  unreachable = started.providers.get('acme-unreachable')!
})

afterAll(() => api.close())

/** An ID token as the provider signs it for `CLIENT_ID` (openid-client checks it, and its signature). */
function idToken(): Promise<string> {
  return new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: ACME_KEY_ID }).setIssuer(api.baseUrl).setAudience(CLIENT_ID).setSubject('user-1').setIssuedAt().setExpirationTime('10m').sign(signingKey)
}

/** The refresh grant's error when the token endpoint answers `answer` (fails the test if it resolves). */
async function refusal(answer: MockAnswer, provider: OAuthProvider = acme): Promise<RefreshAccessTokenError> {
  tokenAnswer = answer
  const error = await rejectionOf(refreshGrant(provider, 'rt-used', NOW), 'the refresh to fail')
  expect(error).toBeInstanceOf(RefreshAccessTokenError)
  return error as RefreshAccessTokenError
}

describe('refreshGrant: the new token set', () => {
  it('takes the rotated refresh token and every field the provider sent, expires_at counted from the time given', async () => {
    const id_token = await idToken()
    tokenAnswer = { json: { access_token: 'at-new', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt-rotated', scope: 'read write', id_token } }

    // openid-client lower-cases token_type (RFC 6749 §5.1: it is case-insensitive).
    expect(await refreshGrant(acme, 'rt-used', NOW)).toStrictEqual({
      access_token: 'at-new',
      refresh_token: 'rt-rotated',
      expires_at: NOW + 3600,
      token_type: 'bearer',
      scope: 'read write',
      id_token,
    })
    const sent = new URLSearchParams(api.requests.filter((request) => request.url === '/token').at(-1)!.body)
    expect([sent.get('grant_type'), sent.get('refresh_token')]).toEqual(['refresh_token', 'rt-used'])
    // The ID token's signature was checked against the provider's keys.
    expect(api.requests.some((request) => request.url === '/jwks')).toBe(true)
  })

  it('keeps the refresh token it sent when the provider does not rotate it, and adds no field the provider left out', async () => {
    tokenAnswer = { json: { access_token: 'at-new', token_type: 'Bearer' } }

    expect(await refreshGrant(acme, 'rt-used', NOW)).toStrictEqual({ access_token: 'at-new', refresh_token: 'rt-used', token_type: 'bearer' })
  })

  it('never hands back an empty refresh token: an answer with refresh_token "" fails as provider_error (openid-client refuses it)', async () => {
    const error = await refusal({ json: { access_token: 'at-new', token_type: 'Bearer', refresh_token: '' } })

    expect(error).toMatchObject({
      code: 'provider_error',
      provider: 'acme',
      message: 'Refreshing the access token of the "acme" provider failed: ClientError [OAUTH_INVALID_RESPONSE]: invalid response encountered',
    })
  })
})

describe('refreshGrant: a failed refresh', () => {
  it('a refused refresh token is invalid_grant: the message quotes the provider and says the user must sign in again', async () => {
    const error = await refusal({ status: 400, json: { error: 'invalid_grant', error_description: 'grant request is invalid' } })

    expect(error).toMatchObject({
      code: 'invalid_grant',
      provider: 'acme',
      signInRequired: true,
      message:
        'Refreshing the access token of the "acme" provider failed: the provider answered error="invalid_grant" ("grant request is invalid"). The refresh token is revoked or expired: the user must sign in again.',
    })
    // The cause says what failed, without the provider's answer (redacted: no nested cause).
    expect(error.cause).toBeInstanceOf(Error)
    expect(error.cause).toMatchObject({ name: 'ResponseBodyError', message: 'server responded with an error in the response body' })
    expect((error.cause as Error).cause).toBeUndefined()
  })

  it('any other OAuth error is provider_error, without the advice to sign in again; the description is JSON-quoted', async () => {
    const error = await refusal({ status: 400, json: { error: 'unauthorized_client', error_description: 'client "acme-client" may not use\nthis grant' } })

    expect(error).toMatchObject({
      code: 'provider_error',
      provider: 'acme',
      signInRequired: false,
      message: 'Refreshing the access token of the "acme" provider failed: the provider answered error="unauthorized_client" ("client \\"acme-client\\" may not use\\nthis grant").',
    })
    expect(error.cause).toMatchObject({ name: 'ResponseBodyError' })
  })

  it('cuts a long description to 300 characters, and writes no parentheses when there is none', async () => {
    const long = await refusal({ status: 400, json: { error: 'invalid_grant', error_description: `Refresh token reuse detected. ${'x'.repeat(400)}` } })
    expect(long.message).toBe(
      `Refreshing the access token of the "acme" provider failed: the provider answered error="invalid_grant" ("Refresh token reuse detected. ${'x'.repeat(270)}"). The refresh token is revoked or expired: the user must sign in again.`,
    )

    const bare = await refusal({ status: 400, json: { error: 'invalid_request' } })
    expect(bare).toMatchObject({ code: 'provider_error', message: 'Refreshing the access token of the "acme" provider failed: the provider answered error="invalid_request".' })
  })

  it('leaves out a description that is not text: the refusal is still the provider’s, not a TypeError', async () => {
    for (const error_description of [42, { detail: 'reuse' }, ['reuse']]) {
      const refused = await refusal({ status: 400, json: { error: 'invalid_grant', error_description } })
      expect(refused).toMatchObject({
        code: 'invalid_grant',
        message: 'Refreshing the access token of the "acme" provider failed: the provider answered error="invalid_grant". The refresh token is revoked or expired: the user must sign in again.',
      })
    }
  })

  it("takes GitHub's bad_refresh_token (a GitHub App's refresh token expired, revoked or used) for a refused refresh token: invalid_grant", async () => {
    const error = await refusal({ status: 200, json: { error: 'bad_refresh_token', error_description: 'The refresh token passed is incorrect or expired.' } })
    expect(error).toMatchObject({
      code: 'invalid_grant',
      provider: 'acme',
      message:
        'Refreshing the access token of the "acme" provider failed: the provider answered error="bad_refresh_token" ("The refresh token passed is incorrect or expired."). The refresh token is revoked or expired: the user must sign in again.',
    })
    expect(error.signInRequired).toBe(true)
  })

  it("reads GitHub's error body, which comes with HTTP 200, as the provider's answer", async () => {
    // https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors
    const error = await refusal({
      status: 200,
      json: {
        error: 'incorrect_client_credentials',
        error_description: 'The client_id and/or client_secret passed are incorrect.',
        error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials',
      },
    })

    expect(error).toMatchObject({
      code: 'provider_error',
      provider: 'acme',
      message: 'Refreshing the access token of the "acme" provider failed: the provider answered error="incorrect_client_credentials" ("The client_id and/or client_secret passed are incorrect.").',
    })
    // openid-client sees an answer without access_token; the redacted cause keeps its name and code only.
    expect(error.cause).toMatchObject({ name: 'ClientError', code: 'OAUTH_INVALID_RESPONSE', message: 'invalid response encountered' })
    expect((error.cause as Error).cause).toBeUndefined()
  })

  it('an outage (HTTP 503, no OAuth error in the answer) is provider_error, saying what openid-client found', async () => {
    const error = await refusal({ status: 503, text: 'Service Unavailable' })

    expect(error).toMatchObject({
      code: 'provider_error',
      provider: 'acme',
      message: 'Refreshing the access token of the "acme" provider failed: ClientError [OAUTH_RESPONSE_IS_NOT_CONFORM]: unexpected HTTP response status code',
    })
    expect(error.cause).toMatchObject({ name: 'ClientError', code: 'OAUTH_RESPONSE_IS_NOT_CONFORM' })
  })

  it('a refused connection is provider_error, its message naming the provider, with the failure as the cause', async () => {
    const error = await refusal({ json: { access_token: 'never-sent', token_type: 'Bearer' } }, unreachable)

    expect(error).toMatchObject({ code: 'provider_error', provider: 'acme-unreachable', signInRequired: false })
    // What follows the colon is openid-client's or fetch's wording, which differs between Node and Jest's VM realm.
    expect(error.message).toMatch(/^Refreshing the access token of the "acme-unreachable" provider failed: \S/)
    expect(error.cause).toBeInstanceOf(Error)
  })
})

describe('isFresh', () => {
  it('is false without an access token (none, null or empty), whatever the expiry', () => {
    for (const access_token of [undefined, null, '']) {
      for (const expires_at of [undefined, null, NOW + 3600]) {
        expect(isFresh({ access_token, expires_at }, NOW, 60)).toBe(false)
      }
    }
    expect(isFresh({}, NOW, 60)).toBe(false)
  })

  it('is false for an access token that is not a string (a jwt callback may put anything in the session token)', () => {
    expect(isFresh({ access_token: 42 as unknown as string }, NOW, 60)).toBe(false)
    expect(isFresh({ access_token: 42 as unknown as string, expires_at: NOW + 3600 }, NOW, 60)).toBe(false)
  })

  it('is true for an access token of unknown expiry (undefined or null)', () => {
    expect(isFresh({ access_token: 'at' }, NOW, 60)).toBe(true)
    expect(isFresh({ access_token: 'at', expires_at: null }, NOW, 60)).toBe(true)
  })

  it('is true only while more than skew seconds are left', () => {
    expect(isFresh({ access_token: 'at', expires_at: NOW + 61 }, NOW, 60)).toBe(true)
    expect(isFresh({ access_token: 'at', expires_at: NOW + 60 }, NOW, 60)).toBe(false)
    expect(isFresh({ access_token: 'at', expires_at: NOW + 1 }, NOW, 0)).toBe(true)
    expect(isFresh({ access_token: 'at', expires_at: NOW }, NOW, 0)).toBe(false)
    expect(isFresh({ access_token: 'at', expires_at: NOW - 3600 }, NOW, 0)).toBe(false)
  })

  it('is false for a negative expires_at (an account row held by a refresh lease)', () => {
    expect(isFresh({ access_token: 'at', expires_at: -(NOW + 30) }, NOW, 0)).toBe(false)
    expect(isFresh({ access_token: 'at', expires_at: -1 }, NOW, 0)).toBe(false)
  })
})
