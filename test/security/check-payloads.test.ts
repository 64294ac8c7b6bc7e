/**
 * The OAuth checks (checks.ts) and the passkey challenge (webauthn-challenge.ts) as units, against
 * cookies sealed with the right secret but holding what no flow of ours seals: a check of another
 * kind, fields of the wrong type, another provider or action, an expired or replayed challenge. Each
 * must be refused with its code and a message that says why; and what the flows do seal (no origin
 * outside the state, the 15-minute life) is read back with the same keys.
 */
import { describe, expect, it } from '@jest/globals'
import type { VerificationToken } from 'portcullis'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import type { OAuthProvider } from '../../src/features/oauth/provider.js'
import type { PasskeyProvider } from '../../src/features/passkey/provider.js'
import { clearChecks, proxyDestination, startChecks, verifyChecks, type StartedChecks } from '../../src/features/oauth/checks.js'
import { clearChallenge, startChallenge, useChallenge } from '../../src/features/passkey/challenge.js'
import { keyRingFor } from '../../src/session/keys.js'
import { CLOCK_TOLERANCE, openSessionToken, sealSessionToken } from '../../src/session/token.js'
import type { SessionRequest } from '../../src/session/types.js'
import { SECRET } from '../support/flow.js'
import { silentLogger } from '../support/oauth-app.js'

const config = resolveConfig({ secret: SECRET, logger: silentLogger, providers: [] }, FEATURES)
const NOW = 1_800_000_000
const checksRing = keyRingFor('portcullis.oauth-checks')
const challengeRing = keyRingFor('portcullis.webauthn-challenge')

/** A request over http (or https) at `now` carrying `cookies`. */
function requestWith(cookies: Record<string, string>, options: { now?: number; secure?: boolean; adapter?: unknown } = {}): SessionRequest {
  const requestConfig = options.adapter ? { ...config, adapter: options.adapter } : config
  return { config: requestConfig, cookieSet: config.cookieSets[options.secure ? 'secure' : 'insecure'], requestCookies: cookies, now: options.now ?? NOW, req: {} } as unknown as SessionRequest
}

const names = config.cookieSets.insecure.cookies
const secureNames = config.cookieSets.secure.cookies
const corp = { id: 'corp', checks: ['state', 'pkce', 'nonce'] } as unknown as OAuthProvider
const pkceOnly = { id: 'corp', checks: ['pkce'] } as unknown as OAuthProvider

/** Seals `payload` as a check cookie with this secret, as no flow of ours would. */
const sealCheck = (payload: Record<string, unknown>, lifetime = 900, now = NOW) => sealSessionToken(payload, checksRing(config.secrets).current, lifetime, now)

/** The cookies a browser would send back after `started` set them. */
const cookiesOf = (started: StartedChecks) => Object.fromEntries(started.cookies.map(({ name, value }) => [name, value]))

function caught(run: () => unknown): { code?: string; message: string } {
  try {
    run()
  } catch (error) {
    return error as { code?: string; message: string }
  }
  throw new Error('expected the call to throw')
}

describe('OAuth checks', () => {
  it('refuses a check cookie whose fields have the wrong type, sealed with the right secret', () => {
    const pkce = (payload: Record<string, unknown>) => caught(() => verifyChecks(requestWith({ [names.pkceCodeVerifier.name]: sealCheck(payload) }), pkceOnly, new URLSearchParams()))
    for (const payload of [{ chk: 'pkce', pid: 5, v: 'verifier' }, { chk: 'pkce', pid: 'corp', v: 5 }, { chk: 'pkce', pid: 'corp', v: 'verifier', o: 5 }]) {
      expect(pkce(payload)).toMatchObject({
        code: 'pkce_cookie_invalid',
        message: `The "${names.pkceCodeVerifier.name}" cookie could not be opened: it expired (checks live 15 minutes), or was sealed with another secret.`,
      })
    }
    expect(pkce({ chk: 'nonce', pid: 'corp', v: 'verifier' }).code).toBe('pkce_cookie_invalid')
    // The same cookie with the right fields passes: the salt of the checks' keys is the one sealed with here.
    expect(verifyChecks(requestWith({ [names.pkceCodeVerifier.name]: sealCheck({ chk: 'pkce', pid: 'corp', v: 'verifier' }) }), pkceOnly, new URLSearchParams()).codeVerifier).toBe('verifier')
  })

  it('says what went wrong with the state, the provider and the cookie names, in words', () => {
    const started = startChecks(requestWith({}), corp, 'http://localhost/api/auth/callback/corp')
    const cookies = cookiesOf(started)
    const verify = (request: SessionRequest, params: Record<string, string>, provider = corp) => caught(() => verifyChecks(request, provider, new URLSearchParams(params)))

    expect(verify(requestWith(cookies), {})).toMatchObject({
      code: 'state_missing',
      message: `The callback of "corp" has no state parameter, but a state check was started: the provider dropped it, or the callback URL was not the provider's redirect.`,
    })
    expect(verify(requestWith(cookies), { state: 'another' })).toMatchObject({
      code: 'state_mismatch',
      message: `The state of the "corp" callback differs from the "${names.state.name}" cookie. Usual causes: a second sign-in started in another tab (the newer flow replaced the cookie), a callback URL that was replayed or came from someone else's flow (login CSRF).`,
    })
    expect(verify(requestWith(cookies), { state: started.params.state! }, { ...corp, id: 'other' } as OAuthProvider)).toMatchObject({
      code: 'state_provider_mismatch',
      message: `The "${names.state.name}" cookie belongs to a sign-in with "corp", but the callback is for "other": a sign-in with another provider started in a second tab, or a callback from another flow.`,
    })
    // Started over http, the callback over https, and the other way round.
    const expectedOver = (secure: boolean) =>
      `The callback expected the "${(secure ? secureNames : names).state.name}" cookie but the browser sent "${(secure ? names : secureNames).state.name}": the sign-in started over ${secure ? 'http' : 'https'} and the callback arrived over ${secure ? 'https' : 'http'}. Behind a TLS-terminating proxy, set Express's "trust proxy" (or AUTH_URL) so both requests see the same protocol.`
    expect(verify(requestWith(cookies, { secure: true }), { state: started.params.state! })).toMatchObject({ code: 'state_cookie_name_mismatch', message: expectedOver(true) })
    const overHttps = startChecks(requestWith({}, { secure: true }), corp, 'https://localhost/api/auth/callback/corp')
    const httpsCookies = cookiesOf(overHttps)
    expect(verify(requestWith(httpsCookies), { state: overHttps.params.state! })).toMatchObject({ code: 'state_cookie_name_mismatch', message: expectedOver(false) })
  })

  it('keeps a check 15 minutes (and the clock tolerance): accepted at 14:59, refused just after', () => {
    const started = startChecks(requestWith({}), corp, 'http://localhost/api/auth/callback/corp')
    const cookies = cookiesOf(started)
    const at = (now: number) => () => verifyChecks(requestWith(cookies, { now }), corp, new URLSearchParams({ state: started.params.state! }))
    expect(at(NOW + 899)).not.toThrow()
    expect(caught(at(NOW + 900 + CLOCK_TOLERANCE)).code).toBe('state_cookie_invalid')
  })

  it('seals the origin callback URL into the state only, and only for a provider with a redirect proxy', () => {
    const open = (value: string) => openSessionToken(value, checksRing(config.secrets), NOW)!.payload
    const proxied = startChecks(requestWith({}), { ...corp, redirectProxyUrl: 'https://proxy.example/api/auth' } as OAuthProvider, 'http://localhost/api/auth/callback/corp')
    const payloads = Object.fromEntries(proxied.cookies.map(({ name, value }) => [name, open(value)]))
    expect(payloads[names.state.name]).toMatchObject({ chk: 'state', pid: 'corp', o: 'http://localhost/api/auth/callback/corp' })
    expect(payloads[names.pkceCodeVerifier.name]).not.toHaveProperty('o')
    expect(payloads[names.nonce.name]).not.toHaveProperty('o')
    const direct = startChecks(requestWith({}), corp, 'http://localhost/api/auth/callback/corp')
    expect(open(direct.params.state!)).not.toHaveProperty('o')
  })

  it('forwards through the proxy only a state of this provider that carries an origin', () => {
    const destination = 'https://preview.example/api/auth/callback/corp'
    const forward = (payload: Record<string, unknown>) => proxyDestination(requestWith({}), corp, sealCheck(payload))
    expect(forward({ chk: 'state', pid: 'corp', v: 'x', o: destination })).toBe(destination)
    expect(forward({ chk: 'nonce', pid: 'corp', v: 'x', o: destination })).toBeUndefined()
    expect(forward({ chk: 'state', pid: 'other', v: 'x', o: destination })).toBeUndefined()
    expect(forward({ chk: 'state', pid: 'corp', v: 'x' })).toBeUndefined()
  })

  it('clears only the check cookies the request carries', () => {
    expect(clearChecks(requestWith({ [names.state.name]: 'x' })).map(({ name, value }) => [name, value])).toEqual([[names.state.name, '']])
    expect(clearChecks(requestWith({}))).toEqual([])
  })
})

describe('the passkey challenge', () => {
  const passkey = { id: 'passkey' } as unknown as PasskeyProvider

  /** Verification tokens in memory, as an adapter keeps them. */
  function tokenAdapter() {
    const tokens = new Map<string, VerificationToken>()
    return {
      tokens,
      async createVerificationToken(token: VerificationToken) {
        tokens.set(`${token.identifier}\0${token.token}`, token)
        return token
      },
      async useVerificationToken({ identifier, token }: { identifier: string; token: string }) {
        const found = tokens.get(`${identifier}\0${token}`) ?? null
        tokens.delete(`${identifier}\0${token}`)
        return found
      },
    }
  }
  const cookieName = names.webauthnChallenge.name
  const sealChallenge = (payload: Record<string, unknown>) => sealSessionToken(payload, challengeRing(config.secrets).current, 300, NOW)
  const use = (request: SessionRequest, action: 'authenticate' | 'register' = 'authenticate') => useChallenge(request, passkey, action).catch((error: unknown) => error as { code: string; message: string })

  it('stores the challenge under the provider\'s own identifier, and gives it back once', async () => {
    const adapter = tokenAdapter()
    const { challenge, cookie } = await startChallenge(requestWith({}, { adapter }), passkey, 'register', 'user-1')
    expect([...adapter.tokens.values()].map((token) => token.identifier)).toEqual(['webauthn-challenge:passkey'])
    expect(await useChallenge(requestWith({ [cookieName]: cookie.value }, { adapter }), passkey, 'register')).toEqual({ challenge, userId: 'user-1' })
    expect(await use(requestWith({ [cookieName]: cookie.value }, { adapter }), 'register')).toMatchObject({
      code: 'challenge_used',
      message: 'The passkey challenge was used already (a replayed response) or has expired; each challenge is good for one response.',
    })
  })

  it('refuses a missing cookie, one of another kind or with a provider id of the wrong type, in words', async () => {
    const adapter = tokenAdapter()
    expect(await use(requestWith({}, { adapter }))).toMatchObject({
      code: 'challenge_missing',
      message: `The passkey response came without the "${cookieName}" cookie: it expired (challenges live 5 minutes) or was used, the options were fetched on another host (localhost vs 127.0.0.1), or a proxy without "trust proxy" changed the __Secure- cookie name.`,
    })
    for (const payload of [{ chk: 'state', pid: 'passkey', act: 'authenticate', c: 'x' }, { chk: 'webauthn', pid: 5, act: 'authenticate', c: 'x' }, { chk: 'webauthn', pid: 'passkey', act: 'authenticate', c: 5 }]) {
      expect(await use(requestWith({ [cookieName]: sealChallenge(payload) }, { adapter }))).toMatchObject({
        code: 'challenge_invalid',
        message: `The "${cookieName}" cookie could not be opened: it expired (5 minutes) or was sealed with another secret.`,
      })
    }
  })

  it('refuses a challenge made for another provider or another action, naming both', async () => {
    const adapter = tokenAdapter()
    expect(await use(requestWith({ [cookieName]: sealChallenge({ chk: 'webauthn', pid: 'other', act: 'authenticate', c: 'x' }) }, { adapter }))).toMatchObject({
      code: 'challenge_mismatch',
      message: `The "${cookieName}" cookie is for authenticate with "other", but the response is for authenticate with "passkey".`,
    })
    expect(await use(requestWith({ [cookieName]: sealChallenge({ chk: 'webauthn', pid: 'passkey', act: 'register', c: 'x' }) }, { adapter }))).toMatchObject({
      code: 'challenge_mismatch',
      message: `The "${cookieName}" cookie is for register with "passkey", but the response is for authenticate with "passkey".`,
    })
  })

  it('refuses a stored challenge past its expiry, to the millisecond, and reads no user id of the wrong type', async () => {
    const adapter = tokenAdapter()
    const stored = async (expires: number, payload: Record<string, unknown> = {}) => {
      const { challenge, cookie } = await startChallenge(requestWith({}, { adapter }), passkey, 'authenticate')
      // The one token stored (each earlier one was used): its expiry moved to `expires`.
      const [key, token] = [...adapter.tokens][0]!
      adapter.tokens.set(key, { ...token, expires: new Date(expires) })
      const value = Object.keys(payload).length === 0 ? cookie.value : sealChallenge({ chk: 'webauthn', pid: 'passkey', act: 'authenticate', c: challenge, ...payload })
      return { challenge, value }
    }
    const late = await stored(NOW * 1000 - 1)
    expect(await use(requestWith({ [cookieName]: late.value }, { adapter }))).toMatchObject({ code: 'challenge_used' })
    const onTime = await stored(NOW * 1000)
    expect(await useChallenge(requestWith({ [cookieName]: onTime.value }, { adapter }), passkey, 'authenticate')).toEqual({ challenge: onTime.challenge, userId: undefined })
    const oddUser = await stored(NOW * 1000 + 60_000, { u: 5 })
    expect(await useChallenge(requestWith({ [cookieName]: oddUser.value }, { adapter }), passkey, 'authenticate')).toEqual({ challenge: oddUser.challenge, userId: undefined })
  })

  it('clears the challenge cookie only when the request carries one', () => {
    expect(clearChallenge(requestWith({}))).toEqual([])
    expect(clearChallenge(requestWith({ [cookieName]: 'x' })).map(({ name, value }) => [name, value])).toEqual([[cookieName, '']])
  })
})
