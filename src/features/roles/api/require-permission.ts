/**
 * `requirePermission(permissions)`: middleware that lets a request through only when its signed-in
 * user's roles grant every action named. Signed out: 401 for JSON clients (with the sign-in page's
 * URL), the sign-in page (coming back here) for browsers, as the `auth` middleware answers. Signed in
 * without the permission: 403, JSON or a short page.
 */
import type { ServerResponse } from 'node:http'
import type { Api } from '../../../api/context.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { acceptsHtml, refuse } from '../../../api/middleware.js'
import { wantsJson, type NodeRequest } from '../../../http/request.js'
import { sendResponse } from '../../../http/respond.js'
import type { NextFunction } from '../../../http/router.js'
import { escapeHtml } from '../../../pages/html.js'
import type { Session } from '../../../types.js'
import { checkedPermissions, type Permissions, type Statements } from '../access.js'
import { permissionSources, sessionGrants } from './has-permission.js'

/** Express/Connect middleware from `requirePermission()`. */
export type PermissionMiddleware = (req: NodeRequest, res: ServerResponse, next: NextFunction) => Promise<void>

/**
 * Builds middleware that refuses a request whose user is signed out (401, or the sign-in page for a
 * browser) or lacks one of the actions of `permissions` (403).
 *
 * @throws InvalidConfigurationError when neither the `roles` nor the `organizations` option is on; TypeError for permissions the statements do not have.
 * @example
 * ```ts
 * app.delete('/posts/:id', requirePermission({ post: ['delete'] }), (req, res) => res.status(204).end())
 * ```
 */
export type RequirePermissionFunction<P extends Statements = Statements> = (permissions: Permissions<P>) => PermissionMiddleware

export function createRequirePermission(api: Api): RequirePermissionFunction {
  return (permissions) => {
    // Checked once, here: a JavaScript caller's misspelt action fails at start-up, not as a 403 forever.
    const needed = checkedPermissions(knownStatements(api.config), permissions, 'requirePermission()')
    return async (req, res, next) => {
      let session: Session | null
      try {
        session = await api.session(req, res)
      } catch (error) {
        return next(error)
      }
      if (!session) return refuse(api, req, res, next, { scriptsGet401: true })
      if (!sessionGrants(api, session, needed)) return refuseForbidden(req, res)
      api.requestScope.runUntilClosed({ req, res }, () => next())
    }
  }
}

function refuseForbidden(req: NodeRequest, res: ServerResponse): void {
  const message = 'You do not have permission to do this.'
  if (!acceptsHtml(req) || wantsJson(req)) return sendResponse(req, res, { status: 403, json: { error: 'Forbidden', message } })
  sendResponse(req, res, { status: 403, html: `<!doctype html><html lang="en"><meta charset="utf-8"><title>Forbidden</title><h1>Forbidden</h1><p>${escapeHtml(message)}</p></html>` })
}

/** Every source's statements together: an action is known when one of them has it. */
function knownStatements(config: ResolvedConfig): Statements {
  const known: Record<string, string[]> = {}
  for (const source of permissionSources(config, 'requirePermission()')) {
    for (const [resource, actions] of Object.entries(source.access(config).statements)) known[resource] = [...new Set([...(known[resource] ?? []), ...actions])]
  }
  return known
}
