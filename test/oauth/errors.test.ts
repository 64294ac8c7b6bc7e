/**
 * How openid-client's failures become Portcullis errors (src/features/oauth/errors.ts): the provider's
 * `error=` on the callback, and each failure of the code exchange, the ID token's validation and
 * the userinfo request, each with the fixed `?code=` the sign-in page shows and the log message an
 * operator reads, word for word. Those messages name what failed (the provider's error and
 * description, JSON-quoted; the claim's name) and never carry a token or a claim value; the `cause`
 * is a redacted copy of openid-client's error, without the response body or claims it holds.
 * Most errors are openid-client's own, produced against a small fake provider; the few that would
 * need a hybrid flow or a broken network are built with openid-client's shapes.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import * as oidc from 'openid-client'
import type { OAuthProvider } from '../../src/features/oauth/provider.js'
import { AuthError } from '../../src/errors.js'
import { InvalidCheckError, OAuthCallbackError } from '../../src/features/oauth/errors.js'
import { clientConfiguration } from '../../src/features/oauth/client.js'
import { exchangeError, providerError, safeCode } from '../../src/features/oauth/provider-errors.js'
import { ACME_CLIENT_ID as CLIENT_ID, ACME_KEY_ID, startAcme } from '../support/acme-provider.js'
import type { MockAnswer, ProviderApi } from '../providers/provider-api.js'
import { rejectionOf } from '../support/rejection.js'

const STATE = 'state-of-this-sign-in'
const NONCE = 'nonce-of-this-sign-in'

let api: ProviderApi
/** Answers every request 401 with two challenges (RFC 6750 §3, RFC 9449 §7.1). */
let guarded: Server
let acme: OAuthProvider
/** The same provider, its userinfo endpoint refusing every access token. */
let acmeGuarded: OAuthProvider
let signingKey: CryptoKey
/** A key the provider does not publish. */
let strangerKey: CryptoKey
/** What the token endpoint answers next: each test sets it. */
let tokenAnswer: MockAnswer
/** What the userinfo endpoint answers next. */
let userinfoAnswer: MockAnswer

beforeAll(async () => {
  strangerKey = (await generateKeyPair('RS256')).privateKey
  guarded = createServer((_req, res) => {
    res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token", DPoP algs="ES256"' }).end()
  })
  await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve))
  const started = await startAcme(
    { 'POST /token': () => tokenAnswer, 'GET /me': () => userinfoAnswer },
    { acme: {}, 'acme-guarded': { userinfo: `http://127.0.0.1:${(guarded.address() as AddressInfo).port}/me` } },
  )
  api = started.api
  signingKey = started.signingKey
  acme = started.providers.get('acme')!
  acmeGuarded = started.providers.get('acme-guarded')!
})

afterAll(async () => {
  guarded.closeAllConnections()
  await new Promise((resolve) => guarded.close(resolve))
  await api.close()
})

/** An ID token for this sign-in, signed with the provider's key; `claims` replace the valid ones. */
function idToken(claims: JWTPayload = {}, { key = signingKey, kid = ACME_KEY_ID } = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT({ iss: api.baseUrl, aud: CLIENT_ID, sub: 'user-1', iat: now, exp: now + 600, nonce: NONCE, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid })
    .sign(key)
}

/** A token endpoint answer carrying `id_token`. */
function withIdToken(id_token: string): MockAnswer {
  return { json: { access_token: 'at-secret-value', token_type: 'Bearer', id_token } }
}

/**
 * What openid-client throws on the callback `?code=…&state=…` plus `params`, the token endpoint
 * answering `answer` (the exchange of src/features/oauth/callback.ts: state, nonce, an ID token expected).
 */
async function codeGrantFailure(answer: MockAnswer, params: Record<string, string> = {}): Promise<unknown> {
  tokenAnswer = answer
  const currentUrl = new URL('http://app.test/auth/callback/acme')
  for (const [key, value] of Object.entries({ code: 'code-secret-value', state: STATE, ...params })) currentUrl.searchParams.set(key, value)
  return rejectionOf(oidc.authorizationCodeGrant(await clientConfiguration(acme), currentUrl, { expectedState: STATE, expectedNonce: NONCE, idTokenExpected: true }), 'the exchange to fail')
}

/** What openid-client throws when fetching `provider`'s userinfo for the subject `user-1`. */
async function userinfoFailure(provider: OAuthProvider): Promise<unknown> {
  return rejectionOf(oidc.fetchUserInfo(await clientConfiguration(provider), 'at-secret-value', 'user-1'), 'the userinfo request to fail')
}

/** `exchangeError`'s answer, checked to be an OAuthCallbackError with `code`, `message` and a redacted cause named `causeName`. */
function expectCallbackError(error: AuthError, code: string, message: string, causeName: string, original: unknown): void {
  expect(error).toBeInstanceOf(OAuthCallbackError)
  expect(error).toMatchObject({ code, message })
  // A copy of openid-client's error that says what failed, without what it kept (no nested cause: no body, no claims).
  expect(error.cause).toBeInstanceOf(Error)
  expect(error.cause).not.toBe(original)
  expect(error.cause).toMatchObject({ name: causeName })
  expect((error.cause as Error).cause).toBeUndefined()
}

describe('safeCode', () => {
  it('keeps a code of 1 to 64 letters, digits, "_", "." or "-"', () => {
    for (const code of ['access_denied', 'x', 'a'.repeat(64), 'Server.Error-42_x']) expect(safeCode(code)).toBe(code)
  })

  it('turns anything else into provider_error: too long, empty, a space or markup anywhere, not a string', () => {
    for (const code of ['a'.repeat(65), '', 'x y', 'access denied', 'access_denied<script>', '<b>access_denied', 'access_denied\n', 42, null, undefined, { error: 'access_denied' }]) {
      expect(safeCode(code)).toBe('provider_error')
    }
  })
})

describe('providerError: the provider answered error= on the callback', () => {
  it('keeps the code and logs the error and description JSON-quoted', () => {
    const error = providerError(acme, new URLSearchParams({ error: 'access_denied', error_description: 'The user said "no"\nthanks' }))

    expect(error).toBeInstanceOf(OAuthCallbackError)
    expect(error).toMatchObject({ code: 'access_denied', message: 'The "acme" provider answered error="access_denied" ("The user said \\"no\\"\\nthanks").' })
  })

  it('writes no parentheses without a description', () => {
    expect(providerError(acme, new URLSearchParams({ error: 'access_denied' }))).toMatchObject({ code: 'access_denied', message: 'The "acme" provider answered error="access_denied".' })
    expect(providerError(acme, new URLSearchParams({ error: 'access_denied', error_description: '' }))).toMatchObject({ message: 'The "acme" provider answered error="access_denied".' })
  })

  it('an error that cannot go into a URL is provider_error; the log still quotes what was sent', () => {
    const error = providerError(acme, new URLSearchParams({ error: '<script>alert(1)</script>' }))

    expect(error).toMatchObject({ code: 'provider_error', message: 'The "acme" provider answered error="<script>alert(1)</script>".' })
  })
})

describe('exchangeError', () => {
  it('passes a Portcullis error through unchanged', () => {
    const own = new OAuthCallbackError('userinfo_failed', 'The "acme" provider: the userinfo request failed.')

    expect(exchangeError(acme, own)).toBe(own)
  })

  describe("the provider's OAuth error (RFC 6749 §5.2)", () => {
    it('an error answer from the token endpoint keeps its code; the message gives the status, error and description', async () => {
      const original = await codeGrantFailure({ status: 400, json: { error: 'invalid_grant', error_description: 'code "code-secret-value" expired' } })
      expect(original).toBeInstanceOf(oidc.ResponseBodyError)

      expectCallbackError(
        exchangeError(acme, original),
        'invalid_grant',
        'The "acme" callback: the provider answered 400 error="invalid_grant" ("code \\"code-secret-value\\" expired").',
        'ResponseBodyError',
        original,
      )
    })

    it('…and writes no parentheses without a description', async () => {
      const original = await codeGrantFailure({ status: 401, json: { error: 'invalid_client' } })
      expect(original).toBeInstanceOf(oidc.ResponseBodyError)

      expectCallbackError(exchangeError(acme, original), 'invalid_client', 'The "acme" callback: the provider answered 401 error="invalid_client".', 'ResponseBodyError', original)
    })

    it('an error on the callback that openid-client reports is the provider error, with or without a description', async () => {
      const original = await codeGrantFailure(withIdToken('never-requested'), { error: 'access_denied', error_description: 'The user cancelled' })
      expect(original).toBeInstanceOf(oidc.AuthorizationResponseError)
      expect(exchangeError(acme, original)).toMatchObject({ code: 'access_denied', message: 'The "acme" provider answered error="access_denied" ("The user cancelled").' })

      const bare = await codeGrantFailure(withIdToken('never-requested'), { error: 'temporarily_unavailable' })
      expect(bare).toBeInstanceOf(oidc.AuthorizationResponseError)
      const error = exchangeError(acme, bare)
      expect(error).toBeInstanceOf(OAuthCallbackError)
      expect(error).toMatchObject({ code: 'temporarily_unavailable', message: 'The "acme" provider answered error="temporarily_unavailable".' })
    })

    it("reads GitHub's error body, which comes with HTTP 200, as the provider's answer", async () => {
      // https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors
      const original = await codeGrantFailure({ json: { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' } })
      expect(original).toBeInstanceOf(oidc.ClientError)

      expectCallbackError(
        exchangeError(acme, original),
        'bad_verification_code',
        'The "acme" callback: the provider answered error="bad_verification_code" ("The code passed is incorrect or expired.").',
        'ClientError',
        original,
      )
    })

    it("…without a description (or one that is not text), GitHub's error writes no parentheses", async () => {
      for (const json of [{ error: 'bad_verification_code' }, { error: 'bad_verification_code', error_description: 42 }]) {
        const original = await codeGrantFailure({ json })
        expectCallbackError(exchangeError(acme, original), 'bad_verification_code', 'The "acme" callback: the provider answered error="bad_verification_code".', 'ClientError', original)
      }
    })
  })

  describe("the ID token's validation (OIDC Core §3.1.3.7): the claim's name, never its value", () => {
    it("a nonce that is not this sign-in's is nonce_mismatch, an InvalidCheck (a replayed or injected token)", async () => {
      const original = await codeGrantFailure(withIdToken(await idToken({ nonce: 'nonce-of-another-sign-in' })))
      expect(original).toMatchObject({ code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' })

      const error = exchangeError(acme, original)
      expect(error).toBeInstanceOf(InvalidCheckError)
      expect(error).toMatchObject({
        check: 'nonce',
        code: 'nonce_mismatch',
        message: `The "acme" callback: the ID token's nonce differs from the "nonce" cookie's: the ID token was issued for another sign-in (a replayed or injected token, or a second tab).`,
      })
      expect(error.cause).toBeUndefined()
    })

    it('another issuer is id_token_issuer', async () => {
      const original = await codeGrantFailure(withIdToken(await idToken({ iss: 'https://issuer-value.example' })))

      const error = exchangeError(acme, original)
      expectCallbackError(error, 'id_token_issuer', 'The "acme" callback: ID token rejected: unexpected JWT "iss" (issuer) claim value.', 'ClientError', original)
      expect(error.message).not.toContain('issuer-value')
    })

    it('another audience is id_token_audience', async () => {
      const original = await codeGrantFailure(withIdToken(await idToken({ aud: 'audience-value' })))

      const error = exchangeError(acme, original)
      expectCallbackError(error, 'id_token_audience', 'The "acme" callback: ID token rejected: unexpected JWT "aud" (audience) claim value.', 'ClientError', original)
      expect(error.message).not.toContain('audience-value')
    })

    it('another authorized party (azp, with several audiences) is id_token_audience too', async () => {
      const original = await codeGrantFailure(withIdToken(await idToken({ aud: [CLIENT_ID, 'other-client'], azp: 'azp-value' })))

      const error = exchangeError(acme, original)
      expectCallbackError(error, 'id_token_audience', 'The "acme" callback: ID token rejected: unexpected ID Token "azp" (authorized party) claim value.', 'ClientError', original)
      expect(error.message).not.toContain('azp-value')
    })

    it('any other claim that differs is id_token_invalid', () => {
      // openid-client's shape (the hybrid flow's c_hash check, which the code flow never reaches):
      // a ClientError whose cause is oauth4webapi's error, whose cause names the claim and holds the claims.
      const original = Object.assign(
        new oidc.ClientError('unexpected JWT claim value encountered', {
          cause: new Error('invalid ID Token "c_hash" (code hash) claim value', { cause: { claim: 'c_hash', claims: { c_hash: 'c-hash-value' } } }),
        }),
        { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' },
      )

      const error = exchangeError(acme, original)
      expectCallbackError(error, 'id_token_invalid', 'The "acme" callback: ID token rejected: invalid ID Token "c_hash" (code hash) claim value.', 'ClientError', original)
      expect(error.message).not.toContain('c-hash-value')
    })

    it('an expired ID token is id_token_expired, the message pointing at the server clock', async () => {
      const now = Math.floor(Date.now() / 1000)
      const original = await codeGrantFailure(withIdToken(await idToken({ iat: now - 7200, exp: now - 3600 })))

      expectCallbackError(
        exchangeError(acme, original),
        'id_token_expired',
        'The "acme" callback: ID token rejected: unexpected JWT "exp" (expiration time) claim value, expiration is past current timestamp (check the server clock).',
        'ClientError',
        original,
      )
    })

    it("an ID token signed with a key the provider's JWKS does not have is id_token_signature", async () => {
      const original = await codeGrantFailure(withIdToken(await idToken({}, { key: strangerKey, kid: 'unknown-key' })))

      expectCallbackError(
        exchangeError(acme, original),
        'id_token_signature',
        "The \"acme\" callback: ID token rejected: no key of the provider's JWKS matches its signature (error when selecting a JWT verification key, no applicable keys found).",
        'ClientError',
        original,
      )
    })

    it("an ID token whose signature does not verify with the provider's key is id_token_signature", async () => {
      const original = await codeGrantFailure(withIdToken(await idToken({}, { key: strangerKey })))
      expect(original).toMatchObject({ code: 'OAUTH_INVALID_RESPONSE' })

      expectCallbackError(exchangeError(acme, original), 'id_token_signature', 'The "acme" callback: ID token rejected: JWT signature verification failed.', 'ClientError', original)
    })
  })

  describe('an invalid response', () => {
    it('a callback whose iss is another authorization server is issuer_mismatch (a mix-up attack, RFC 9207)', async () => {
      const original = await codeGrantFailure(withIdToken('never-requested'), { iss: 'https://attacker.example' })
      expect(original).toMatchObject({ code: 'OAUTH_INVALID_RESPONSE' })

      const error = exchangeError(acme, original)
      expectCallbackError(
        error,
        'issuer_mismatch',
        'The "acme" callback: unexpected "iss" (issuer) response parameter value: the response comes from another authorization server than the one the sign-in started with (mix-up).',
        'ClientError',
        original,
      )
    })

    it('an ID token without its iss claim is invalid_response, not a mix-up: the callback came from the right server', async () => {
      const original = await codeGrantFailure(withIdToken(await idToken({ iss: undefined })))
      expect(original).toMatchObject({ code: 'OAUTH_INVALID_RESPONSE' })

      expectCallbackError(
        exchangeError(acme, original),
        'invalid_response',
        'The "acme" callback: the provider\'s response is invalid: JWT "iss" (issuer) claim missing.',
        'ClientError',
        original,
      )
    })

    it('any other invalid answer is invalid_response, saying what openid-client found wrong', async () => {
      const original = await codeGrantFailure({ json: { token_type: 'Bearer', id_token: await idToken() } })
      expect(original).toMatchObject({ code: 'OAUTH_INVALID_RESPONSE' })

      expectCallbackError(
        exchangeError(acme, original),
        'invalid_response',
        'The "acme" callback: the provider\'s response is invalid: "response" body "access_token" property must be a string.',
        'ClientError',
        original,
      )
    })

    it('a failure of another kind is invalid_response, naming openid-client\'s code', async () => {
      userinfoAnswer = { json: { sub: 'someone-else' } }
      const original = await userinfoFailure(acme)
      expect(original).toMatchObject({ code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' })

      expectCallbackError(
        exchangeError(acme, original),
        'invalid_response',
        'The "acme" callback: unexpected "response" body "sub" property value (OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED).',
        'ClientError',
        original,
      )
    })
  })

  it('a refused access token at userinfo is userinfo_unauthorized, listing the challenge schemes', async () => {
    const original = await userinfoFailure(acmeGuarded)
    expect(original).toBeInstanceOf(oidc.WWWAuthenticateChallengeError)

    expectCallbackError(
      exchangeError(acmeGuarded, original),
      'userinfo_unauthorized',
      'The "acme-guarded" callback: the provider refused the access token (401, WWW-Authenticate bearer, dpop).',
      'WWWAuthenticateChallengeError',
      original,
    )
  })

  it('anything else is provider_request_failed, with its message (an Error) or its text', () => {
    // What a failed fetch or a broken `userinfo.request` throws: no openid-client shape.
    const failed = new TypeError('fetch failed')
    expectCallbackError(exchangeError(acme, failed), 'provider_request_failed', 'The "acme" callback: the request to the provider failed: fetch failed.', 'TypeError', failed)

    const thrown = exchangeError(acme, 'connection reset')
    expect(thrown).toMatchObject({ code: 'provider_request_failed', message: 'The "acme" callback: the request to the provider failed: connection reset.' })
    expect(thrown.cause).toMatchObject({ name: 'Error', message: 'connection reset' })
  })
})
