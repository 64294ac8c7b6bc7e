/**
 * GET /webauthn.js: the passkey script of the built-in pages. Asked for with its current version
 * (`?v=<hash>`, as the pages link it), it may be cached for a year; otherwise for five minutes.
 */
import { WEBAUTHN_SCRIPT, webauthnScriptDigest } from '../pages/webauthn-script.js'
import type { Action } from '../../../actions/context.js'

export const webauthnScript: Action = async (ctx) => {
  const { version } = webauthnScriptDigest()
  const immutable = ctx.query.get('v') === version
  return {
    text: WEBAUTHN_SCRIPT,
    headers: {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
      ETag: `"${version}"`,
    },
  }
}
