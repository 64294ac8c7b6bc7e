/**
 * The session list: a user's sessions on every device (`listSessions`), ending one, the others, or
 * all (`revokeSession`, `revokeOtherSessions`, `signOutEverywhere`), and the sessions page. The
 * sessions themselves, and ending all of a user's, are the core's (session/devices.ts).
 */
import type { Feature } from '../../composition/index.js'
import { createListSessions, type ListSessionsFunction } from './api/list-sessions.js'
import { createRevokeOtherSessions, type RevokeOtherSessionsFunction } from './api/revoke-other-sessions.js'
import { createRevokeSession, type RevokeSessionFunction } from './api/revoke-session.js'
import { createSignOutEverywhere, type SignOutEverywhereFunction } from './api/sign-out-everywhere.js'

/** The server-side functions of this feature, as `Portcullis()` returns them. */
export interface SessionsApi {
  /** The signed-in user's sessions on every device, the request's own marked. */
  listSessions: ListSessionsFunction
  /** Ends one of the signed-in user's sessions (CSRF-checked). */
  revokeSession: RevokeSessionFunction
  /** Ends every session of the signed-in user but this one (CSRF-checked). */
  revokeOtherSessions: RevokeOtherSessionsFunction
  /** Ends every session of the signed-in user, this one included (CSRF-checked). */
  signOutEverywhere: SignOutEverywhereFunction
}

export const sessionsFeature: Feature = {
  name: 'sessions',
  // Always on: each route and function says what it needs (database sessions, or JWT ones with a store).
  enabled: () => true,
  routes: [
    { method: 'GET', path: '/sessions', page: true, load: async () => (await import('./routes/page.js')).sessionsPage },
    { method: 'GET', path: '/sessions/list', page: true, load: async () => (await import('./routes/list.js')).listSessions },
    { method: 'POST', path: '/sessions/revoke', csrf: true, load: async () => (await import('./routes/revoke.js')).revokeSession },
    { method: 'POST', path: '/sessions/revoke-others', csrf: true, load: async () => (await import('./routes/revoke-others.js')).revokeOtherSessions },
    { method: 'POST', path: '/sessions/signout-everywhere', csrf: true, load: async () => (await import('./routes/signout-everywhere.js')).signOutEverywhere },
  ],
  api: (api): SessionsApi => ({
    listSessions: createListSessions(api),
    revokeSession: createRevokeSession(api),
    revokeOtherSessions: createRevokeOtherSessions(api),
    signOutEverywhere: createSignOutEverywhere(api),
  }),
  adapterMethods: ['listSessionsByUserId', 'deleteSessionsByUserId'],
  events: ['sessionRevoked'],
}
