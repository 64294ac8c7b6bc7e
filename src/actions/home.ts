/** Where the built-in pages link back to the app: `pages.home`, or the site's root. */
import type { ActionContext } from './context.js'

/**
 * The absolute URL of the app's home page: `pages.home` (a path on this site, checked at init), or `/`.
 *
 * @example
 * homeUrl(ctx) // 'https://example.com/account' with pages: { home: '/account' }
 */
export function homeUrl(ctx: Pick<ActionContext, 'origin' | 'config'>): string {
  return new URL(ctx.config.pages.home ?? '/', `${ctx.origin}/`).href
}
