/**
 * One Portcullis process of the scale-out suite (scale-out.test.ts starts three behind a round-robin
 * proxy). Plain JavaScript on the built package, as an app would run it. Its settings come as JSON
 * in SCALE_CONFIG: { strategy, secret, url, issuer, clientId, clientSecret, redisUrl, keyPrefix, database }.
 * Every answer carries the process id in `x-process`, so the suite sees which process served it.
 * Prints `ready <port>` once listening. Roles are on (`DELETE /posts/1` needs `post: ['delete']`), and
 * `POST /admin/roles` stands for an app's own admin code calling `setRoles` (the rig has no other);
 * `POST /admin/ban` calls the admin API's `banUser` as the signed-in administrator. Organizations are
 * on (`POST /projects` needs `project: ['create']` in the active organization): `POST /orgs` creates
 * one as the signed-in user, `POST /admin/members` stands for the app's code calling `addMember`, and
 * `POST /orgs/role` calls `updateMemberRoles` as the signed-in owner.
 */
import express from 'express'
import { Redis } from 'ioredis'
import knex from 'knex'
import Portcullis, { adminStatements, defineAccess, RefreshAccessTokenError } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import OIDC from 'portcullis/providers/oidc'

const settings = JSON.parse(process.env.SCALE_CONFIG ?? '{}')
const redis = new Redis(settings.redisUrl, { lazyConnect: false })
const db = knex(settings.database)
const quiet = { error: (...line) => console.error(...line), warn: () => {}, debug: () => {} }

const access = defineAccess({ statements: { ...adminStatements, post: ['create', 'delete'] } })

const portcullis = Portcullis({
  roles: access,
  admin: true,
  organizations: { statements: { project: ['create'] }, roles: { member: { project: ['create'] }, viewer: {} } },
  secret: settings.secret,
  trustHost: true,
  logger: quiet,
  adapter: KnexAdapter(db),
  providers: [
    OIDC({
      id: 'corp',
      name: 'Corp SSO',
      issuer: settings.issuer,
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      dangerouslyAllowInsecureRequests: true,
      authorization: { params: { scope: 'openid profile email offline_access', prompt: 'consent' } },
    }),
    // Never signs anyone in: the rate-limit test counts its failed attempts.
    Credentials({ credentials: { username: {}, password: {} }, authorize: async () => null }),
  ],
  session: settings.strategy === 'jwt' ? { strategy: 'jwt', store: { redis, keyPrefix: `${settings.keyPrefix}:session` }, revocationCacheSeconds: 1 } : { strategy: 'database' },
  rateLimit: { store: { redis }, keyPrefix: `${settings.keyPrefix}:limits`, ip: false, identifier: { attempts: 3, windowSeconds: 60 } },
})

const app = express()
// The proxy on loopback sets X-Forwarded-For/-Host/-Proto.
app.set('trust proxy', 'loopback')
app.use((_req, res, next) => {
  res.setHeader('x-process', String(process.pid))
  next()
})
app.use('/api/auth', portcullis.handlers)
app.get('/me', async (req, res) => {
  res.json(await portcullis.auth(req, res))
})
app.delete('/posts/1', portcullis.requirePermission({ post: ['delete'] }), (_req, res) => {
  res.status(204).end()
})
app.post('/projects', portcullis.requirePermission({ project: ['create'] }), (_req, res) => {
  res.status(201).end()
})
// The rig's forms carry no CSRF token: the test posts directly.
app.post('/orgs', express.urlencoded({ extended: false }), async (req, res) => {
  res.json(await portcullis.createOrganization(req, { name: req.body.name, skipCsrfCheck: true }))
})
app.post('/orgs/role', express.urlencoded({ extended: false }), async (req, res) => {
  res.json(await portcullis.updateMemberRoles(req, { organizationId: req.body.organizationId, userId: req.body.userId, roles: req.body.roles.split(','), skipCsrfCheck: true }))
})
app.post('/admin/members', express.urlencoded({ extended: false }), async (req, res) => {
  res.json(await portcullis.addMember(req.body.organizationId, req.body.userId, req.body.roles.split(',')))
})
// The app's own admin code (a test rig: no check of who asks), on whichever process the proxy picks.
app.post('/admin/roles', express.urlencoded({ extended: false }), async (req, res) => {
  res.json(await portcullis.setRoles(req.body.userId, req.body.roles ? req.body.roles.split(',') : null))
})
// The admin API, as the signed-in administrator (the rig's forms carry no CSRF token: the test posts directly).
app.post('/admin/ban', express.urlencoded({ extended: false }), async (req, res) => {
  try {
    res.json(await portcullis.banUser(req, req.body.userId, { reason: 'scale test', skipCsrfCheck: true }))
  } catch (error) {
    res.status(403).json({ code: error.code ?? error.type })
  }
})
app.get(
  '/token',
  portcullis.auth(async (_req, res) => {
    try {
      res.json({ token: await portcullis.getAccessToken('corp') })
    } catch (error) {
      if (!(error instanceof RefreshAccessTokenError)) throw error
      res.status(401).json({ code: error.code })
    }
  }),
)

const server = app.listen(0, '127.0.0.1', () => console.log(`ready ${server.address().port}`))

process.on('SIGTERM', () => {
  server.closeAllConnections()
  server.close()
  Promise.allSettled([redis.quit(), db.destroy()]).then(() => process.exit(0))
})
