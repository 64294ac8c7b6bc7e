/**
 * The script of the SAML "continue" page: it posts the page's one form, at once. The only script
 * that page loads (its CSP allows this file alone, with its integrity value), so the identity
 * provider's answer crosses over to a same-site POST without a click where scripts run.
 */
import { createHash } from 'node:crypto'

export const CONTINUE_SCRIPT = "document.querySelector('form[data-saml-continue]')?.submit();\n"

let digest: { version: string; integrity: string } | undefined

/** The script's version (for its URL) and its Subresource Integrity value. */
export function continueScriptDigest(): { version: string; integrity: string } {
  if (!digest) {
    const hash = createHash('sha384').update(CONTINUE_SCRIPT).digest()
    digest = { version: hash.subarray(0, 8).toString('hex'), integrity: `sha384-${hash.toString('base64')}` }
  }
  return digest
}
