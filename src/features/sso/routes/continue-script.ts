/** GET /saml-continue.js: the SAML continue page's script, cached a year when asked for with its version. */
import type { Action } from '../../../actions/context.js'
import { CONTINUE_SCRIPT, continueScriptDigest } from '../pages/continue-script.js'

export const continueScript: Action = async (ctx) => {
  const { version } = continueScriptDigest()
  return {
    text: CONTINUE_SCRIPT,
    headers: {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': ctx.query.get('v') === version ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
      ETag: `"${version}"`,
    },
  }
}
