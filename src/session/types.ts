/**
 * What reading and writing a session take and give, shared by the two strategies
 * (jwt-strategy.ts, database-strategy.ts) and the dispatcher above them (strategy.ts).
 */
import type { IncomingMessage } from 'node:http'
import type { CookieSet, ResolvedConfig } from '../config/types.js'
import type { JWT, Profile, Session } from '../types.js'
import type { OutgoingCookie } from './cookies.js'

/** What one request needs to read or write its session. */
export interface SessionRequest {
  readonly config: ResolvedConfig
  readonly cookieSet: CookieSet
  readonly requestCookies: Readonly<Record<string, string | undefined>>
  /** Seconds since the epoch. */
  readonly now: number
  /** The request, for what a user recognises a session by (address, browser). */
  readonly req?: IncomingMessage | undefined
}

/** The session of a request and the cookies to send back (none in the common case); `token` with JWT sessions only. */
export interface SessionResult {
  session: Session | null
  token: JWT | null
  cookies: OutgoingCookie[]
}

/** What the `jwt` callback learns about a sign-in besides the user and account. */
export interface SignInDetails {
  /** OAuth/OIDC: the provider's profile. */
  profile?: Profile
  /** True when this sign-in created the user (`trigger: 'signUp'`). */
  isNewUser?: boolean
  /** How the user proved who they are (the provider's id): the session's first confirmation (confirmation.ts). */
  method?: string | undefined
  /** An administrator starts this session as the user (impersonation): it ends at `until`, never extended. */
  impersonation?: Impersonation | undefined
}

/** Who starts a session on the user's behalf, and until when. */
export interface Impersonation {
  /** The administrator's user id. */
  readonly by: string
  /** When it ends, in seconds since the epoch. */
  readonly until: number
}
