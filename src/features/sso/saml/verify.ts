// PROVISIONAL (not to be committed): the helper's verify.ts replaces it.
import type { SamlIdentity, SamlIdp, SamlServiceProvider } from './types.js'
export async function verifySamlResponse(_samlResponse: string, _expected: { idp: SamlIdp; sp: SamlServiceProvider; expectedRequestId: string | null; nowMs: number; skewMs: number }): Promise<SamlIdentity> {
  throw new Error('provisional')
}
