/**
 * node-saml's refusals as `SamlResponseError` codes. node-saml throws plain `Error`s told apart only by
 * their messages; the ones below are node-saml 5.1's. The message of the result is the engine's own:
 * node-saml's can quote the response (an audience, an issuer), which must not reach the log.
 */
import { SamlResponseError, type SamlResponseCode } from '../errors.js'

const CODES: ReadonlyArray<readonly [RegExp, SamlResponseCode, string]> = [
  [/multiple assertions|Missing SAML assertion/i, 'assertion_count', 'not exactly one assertion'],
  [/encrypted|decryption/i, 'encrypted_assertion', 'an encrypted assertion'],
  [/signature|signed|referenced node|ID cannot refer|transforms/i, 'signature', 'no valid signature of a configured IdP certificate over the assertion'],
  [/audience/i, 'audience', 'an audience that is not this service provider'],
  [/not yet valid/i, 'not_yet_valid', 'an assertion not valid yet'],
  [/expired/i, 'expired', 'an expired assertion'],
  [/InResponseTo/i, 'in_response_to', 'an InResponseTo that does not match'],
  [/issuer/i, 'issuer', 'an Issuer that is not the IdP'],
]

/** The `SamlResponseError` for an error node-saml threw while validating a response. */
export function fromNodeSamlError(error: unknown): SamlResponseError {
  if (error instanceof SamlResponseError) return error
  if (error instanceof TypeError && /required|not provided|PEM|base64/i.test(error.message) && !/decryption/i.test(error.message)) {
    // A configuration problem (no certificate, a certificate node-saml cannot read) is the caller's to fix.
    throw error
  }
  const message = error instanceof Error ? error.message : ''
  if (error instanceof Error && error.name === 'SamlStatusError') return new SamlResponseError('status', 'SAML response refused by node-saml: its status is not Success.')
  for (const [pattern, code, what] of CODES) {
    if (pattern.test(message)) return new SamlResponseError(code, `SAML response refused by node-saml: ${what}.`)
  }
  return new SamlResponseError('malformed', 'SAML response refused by node-saml: it could not be read.')
}
