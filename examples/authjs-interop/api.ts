/**
 * The Express API beside the Next.js front end. It reads the sessions Auth.js sets there, and its
 * own sign-in (for clients that do not go through the front end, e.g. a script or a mobile app)
 * sets sessions the front end's Auth.js reads. What makes that work, on both sides:
 *
 * - the same secret (AUTH_SECRET): the session token is a JWE whose key is derived from it and from
 *   the cookie name, the same way in Auth.js v5 and Portcullis;
 * - JWT sessions (no adapter here, as on the front end) under the same cookie name
 *   (`authjs.session-token`, `__Secure-authjs.session-token` over HTTPS: the default of both);
 * - a cookie both hosts receive: one site under one host (a path such as /api proxied to this
 *   server), or, for app.example.com and api.example.com, `cookies.sessionToken.options.domain`
 *   set to `example.com` on both sides.
 */
import express, { type Express } from 'express'
import Portcullis from 'portcullis'
import Credentials from 'portcullis/providers/credentials'
import { verifyPassword } from './users.js'

/** The API: Portcullis on /api/auth, and /api/me, which answers with the session whoever set it. */
export function createApi(secret: string): Express {
  const { handlers, auth } = Portcullis({
    secret,
    // The development server's own Host; in production set AUTH_URL instead.
    trustHost: true,
    session: { strategy: 'jwt' },
    providers: [
      Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        authorize: ({ username, password }) => verifyPassword(username, password),
      }),
    ],
  })

  const app = express()
  app.use('/api/auth', handlers)
  app.get('/api/me', async (req, res) => {
    const session = await auth(req, res)
    if (!session) return void res.status(401).json({ message: 'Not authenticated' })
    res.json({ user: session.user, expires: session.expires })
  })
  return app
}
