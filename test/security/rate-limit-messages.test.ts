/**
 * The sign-in limiter's refusals as a unit (memory store): what each says, for the log line and
 * the RateLimitedError, by bucket and provider type, and when the client address is unknown.
 */
import { describe, expect, it } from '@jest/globals'
import { RateLimitedError } from 'portcullis'
import { resolveConfig } from '../../src/config/resolve.js'
import { FEATURES } from '../../src/features/index.js'
import type { NodeRequest } from '../../src/http/request.js'
import { resolveRateLimit, type ResolvedRateLimit } from '../../src/security/rate-limit-config.js'
import { createSignInLimiter } from '../../src/security/rate-limit-limiter.js'
import { SECRET } from '../support/flow.js'
import { silentLogger } from '../support/oauth-app.js'

const config = resolveConfig({ secret: SECRET, logger: silentLogger, providers: [] }, FEATURES)
const limiterWith = (options: object) => createSignInLimiter(config, resolveRateLimit(options) as ResolvedRateLimit)
const from = (address: string | undefined) => ({ headers: {}, socket: { remoteAddress: address } }) as unknown as NodeRequest

async function refusal(run: () => Promise<unknown>): Promise<RateLimitedError> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof RateLimitedError)) throw new Error(`expected a RateLimitedError, got ${String(error)}`)
  return error
}

describe('the limiter says why it refused', () => {
  it('too many attempts from one address: the address, the limit, the wait', async () => {
    const limiter = limiterWith({ ip: { attempts: 1, windowSeconds: 600 }, identifier: false })
    await limiter.attempt(from('192.0.2.1'), { id: 'credentials', type: 'credentials' }, undefined)
    const error = await refusal(() => limiter.attempt(from('192.0.2.1'), { id: 'credentials', type: 'credentials' }, undefined))
    expect(error.message).toMatch(/^Too many sign-in attempts from 192\.0\.2\.1 \(limit: 1 per 600 s\); refused for (599|600) s\.$/)
  })

  it('too many for one identifier: "failed sign-in attempts" for credentials, "e-mail sign-in requests" for e-mail', async () => {
    const limiter = limiterWith({ ip: false, identifier: { attempts: 1, windowSeconds: 300 } })
    for (const [provider, what] of [
      [{ id: 'credentials', type: 'credentials' }, 'failed sign-in attempts'],
      [{ id: 'nodemailer', type: 'email' }, 'e-mail sign-in requests'],
    ] as const) {
      await limiter.attempt(from('192.0.2.2'), provider, 'ada@example.com')
      const error = await refusal(() => limiter.attempt(from('192.0.2.3'), provider, 'ada@example.com'))
      expect(error.message).toMatch(new RegExp(`^Too many ${what} for one identifier of the "${provider.id}" provider \\(limit: 1 per 300 s\\), the last from 192\\.0\\.2\\.3; refused for (299|300) s\\.$`))
    }
  })

  it('without a client address, the identifier refusal says so', async () => {
    const limiter = limiterWith({ ip: { attempts: 10 }, identifier: { attempts: 1 } })
    await limiter.attempt(from(undefined), { id: 'credentials', type: 'credentials' }, 'ada')
    const error = await refusal(() => limiter.attempt(from(undefined), { id: 'credentials', type: 'credentials' }, 'ada'))
    expect(error.message).toMatch(/, the last from an unknown address; refused for \d+ s\.$/)
  })

  it('too many passkey challenges from one address', async () => {
    const limiter = limiterWith({ ip: { attempts: 1, windowSeconds: 60 } })
    await limiter.challenge(from('192.0.2.4'))
    const error = await refusal(() => limiter.challenge(from('192.0.2.4')))
    expect(error.message).toMatch(/^Too many passkey challenges requested from 192\.0\.2\.4 \(limit: 1 per 60 s\); refused for (59|60) s\.$/)
  })
})
