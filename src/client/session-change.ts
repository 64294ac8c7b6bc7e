/**
 * Following the session as it changes: in this tab (a sign-in or sign-out through this module),
 * in the other tabs of this origin (a BroadcastChannel), and when the user comes back to the tab
 * (focus, visibility), which catches what the other routes to the server changed (a sign-in that
 * went through an OAuth provider, a session that expired or was revoked).
 */
import { authUrl } from './config.js'
import { getSession } from './session.js'
import type { Session } from './types.js'

/** Called with the session (or null) each time it differs from what this listener last saw. */
export type SessionListener = (session: Session | null) => void

/** Which JSON of the session each listener last saw (undefined: nothing yet). */
const listeners = new Map<SessionListener, string | undefined>()
/** The session the tab last saw, as JSON. */
let lastSeen: string | undefined
let channel: BroadcastChannel | undefined
let requested = 0
let applied = 0

/**
 * Calls `listener` with the current session, then whenever it changes: after a sign-in or
 * sign-out in this tab or another one, and when the tab regains focus or becomes visible. A
 * refresh that fails (offline, store down) changes nothing. Returns the function that unsubscribes.
 *
 * @example
 * const stop = onSessionChange((session) => render(session ? session.user.name : 'signed out'))
 * @see https://html.spec.whatwg.org/multipage/web-messaging.html#broadcasting-to-other-browsing-contexts
 */
export function onSessionChange(listener: SessionListener): () => void {
  if (typeof listener !== 'function') throw new TypeError('onSessionChange(listener): listener must be a function.')
  listeners.set(listener, undefined)
  if (listeners.size === 1) follow()
  void refresh('subscribe')
  return () => {
    listeners.delete(listener)
    if (listeners.size === 0) unfollow()
  }
}

/**
 * Tells this tab's listeners and the other tabs that the session changed here (after a sign-in or
 * sign-out). The message carries nothing: each tab asks the server.
 */
export async function announceSessionChange(): Promise<void> {
  if (channel) channel.postMessage('changed')
  else if (typeof BroadcastChannel === 'function') {
    const once = new BroadcastChannel(channelName())
    once.postMessage('changed')
    once.close()
  }
  if (listeners.size > 0) await refresh('local')
}

function channelName(): string {
  return `portcullis.session ${authUrl('')}`
}

function follow(): void {
  // Without BroadcastChannel (an old embedded browser), other tabs are still caught on focus.
  if (typeof BroadcastChannel === 'function') {
    channel = new BroadcastChannel(channelName())
    channel.onmessage = () => void refresh('other tab')
  }
  addEventListener('focus', onFocus)
  document.addEventListener('visibilitychange', onFocus)
}

function unfollow(): void {
  channel?.close()
  channel = undefined
  removeEventListener('focus', onFocus)
  document.removeEventListener('visibilitychange', onFocus)
}

function onFocus(): void {
  if (document.visibilityState === 'visible') void refresh('focus')
}

/**
 * Asks the server for the session and tells the listeners that have not seen it. Of overlapping
 * refreshes (focus and visibilitychange come together), an answer older than one already applied
 * is dropped. A change this tab found by itself (on focus) is passed on to the other tabs; one
 * announced by another tab or by this module is not (the announcer told them).
 */
async function refresh(reason: 'subscribe' | 'local' | 'other tab' | 'focus'): Promise<void> {
  const request = ++requested
  let session: Session | null
  try {
    session = await getSession()
  } catch {
    return
  }
  if (request < applied) return
  applied = request
  const seen = JSON.stringify(session)
  if (reason === 'focus' && lastSeen !== undefined && seen !== lastSeen) channel?.postMessage('changed')
  lastSeen = seen
  for (const [listener, listenerSeen] of listeners) {
    if (listenerSeen === seen) continue
    listeners.set(listener, seen)
    try {
      listener(JSON.parse(seen) as Session | null)
    } catch (error) {
      // One failing listener must not keep the others from hearing of the change.
      reportError(error)
    }
  }
}
