// An Express 4 app in CommonJS: Portcullis with database sessions on PostgreSQL (KnexAdapter) and
// a username/password sign-in. server.js listens; the test (test/examples/express4-cjs-postgres.test.ts)
// starts it with `npm start`.
const { scrypt, timingSafeEqual } = require('node:crypto')
const { promisify } = require('node:util')
const express = require('express')
// require() gives the init function itself; the providers' and adapter's entry points likewise.
const Portcullis = require('portcullis')
const { KnexAdapter } = require('portcullis/adapters/knex')
const Credentials = require('portcullis/providers/credentials')

const scryptAsync = promisify(scrypt)

// The demo account, `ada` / `lovelace`. The password is the app's business: only its salted scrypt
// hash is kept (derived with crypto.scryptSync('lovelace', salt, 64)). The profile lives in
// Portcullis's User table, where createApp puts it.
const DEMO = {
  username: 'ada',
  profile: { name: 'Ada Lovelace', email: 'ada@example.com' },
  salt: Buffer.from('J9_23oYHWgeHXNd2Sa2kMg', 'base64url'),
  hash: Buffer.from('xgaGwbvrbxvj2PNk8lBVPcdbuj6aTK_lnXD6gdWQCszRwjeZPe_cXACjdNVOUs0z-oywKPcLIFZVon2dS8zymA', 'base64url'),
}

/** True when the password matches. The hash is computed for unknown names too, so timing does not tell them apart. */
async function passwordMatches(username, password) {
  const key = await scryptAsync(password, DEMO.salt, 64)
  return timingSafeEqual(key, DEMO.hash) && username === DEMO.username
}

/**
 * Builds the app on a Knex instance whose database has Portcullis's tables (`knex migrate:latest`).
 * @param {import('knex').Knex} db
 */
async function createApp(db) {
  const adapter = KnexAdapter(db)
  if (!(await adapter.getUserByEmail(DEMO.profile.email))) await adapter.createUser(DEMO.profile)

  // With an adapter, sessions are database sessions: the cookie holds a random token, the row is
  // in the Session table, and sign-out deletes it. AUTH_SECRET comes from the environment.
  const { handlers, auth } = Portcullis({
    adapter,
    providers: [
      Credentials({
        credentials: { username: { label: 'Username' }, password: { label: 'Password', type: 'password' } },
        async authorize({ username, password }) {
          if (typeof username !== 'string' || typeof password !== 'string') return null
          // Database sessions point at a User row: return the stored user.
          return (await passwordMatches(username, password)) ? adapter.getUserByEmail(DEMO.profile.email) : null
        },
      }),
    ],
    callbacks: { authorized: ({ auth: session }) => !!session },
  })

  const app = express()
  // Behind a proxy (TLS ends there), also: app.set('trust proxy', 1)
  app.use('/api/auth', handlers)

  app.get('/', (req, res) => {
    res.type('text').send('Portcullis on Express 4 (CommonJS) and PostgreSQL. Sign in at /api/auth/signin (ada / lovelace), then see /me.\n')
  })

  // Express 4 does not catch a rejected promise of an async handler: pass failures to next().
  app.get('/me', async (req, res, next) => {
    try {
      const session = await auth(req, res)
      if (!session) return res.status(401).json({ message: 'Not authenticated' })
      res.json(session)
    } catch (error) {
      next(error)
    }
  })

  // The middleware form: runs callbacks.authorized, sends signed-out visitors to the sign-in page.
  app.use('/dashboard', auth)
  app.get('/dashboard', (req, res) => res.type('text').send(`Welcome, ${req.auth.user.name}.\n`))

  return app
}

module.exports = { createApp }
