/**
 * The rig of the OAuth suites: an app listener (support/oauth-app.ts) and a test IdP
 * (support/idp.ts) whose clients may name the listener's callback URLs, started before the suite
 * and closed after it.
 */
import { afterAll, beforeAll } from '@jest/globals'
import { startIdp, type TestIdp } from './idp.js'
import { closeListeners, listen, type Listener } from './oauth-app.js'

/** One suite's listener and IdP. */
export interface OAuthRig {
  readonly app: Listener
  readonly idp: TestIdp
}

/** Starts a listener, then the IdP with `clients(listener)`; closes both after the suite. */
export function useOAuthRig(clients: (app: Listener) => Parameters<typeof startIdp>[0]['clients']): OAuthRig {
  let app: Listener | undefined
  let idp: TestIdp | undefined
  beforeAll(async () => {
    app = await listen()
    idp = await startIdp({ clients: clients(app) })
  })
  afterAll(async () => {
    await closeListeners()
    await idp?.close()
  })
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the OAuth rig is used before its beforeAll has run')
    return value
  }
  return {
    get app() {
      return started(app)
    },
    get idp() {
      return started(idp)
    },
  }
}
