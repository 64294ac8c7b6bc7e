/**
 * Runs the single-page app example: `npm run build && npx tsx examples/spa/server.ts` (see README.md).
 *
 * The server is the Express example's (examples/express/app.ts: Portcullis on /api/auth with
 * credentials, e-mail links and the local dev identity provider, database sessions in SQLite, and
 * the JSON route /api/me). In front of it, this serves the static page of public/ at `/` and the
 * browser module `portcullis/client` at /portcullis/client/, where the page's import map finds it.
 *
 * Environment: PORT (default 3000), HOST (default localhost), DEV_IDP_PORT (default 3001),
 * DEV_IDP=off, DATABASE_FILE (default examples/spa/example.sqlite), AUTH_SECRET, AUTH_EMAIL_SERVER.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import express from 'express'
import { createApp } from '../express/app.js'

const port = Number(process.env.PORT ?? 3000)
const host = process.env.HOST ?? 'localhost'
const databaseFile = process.env.DATABASE_FILE ?? fileURLToPath(new URL('example.sqlite', import.meta.url))

// The browser module ships in the package's dist/client (in an app: node_modules/portcullis/dist/client;
// here, this repository's own build). A bundler would take it from `import ... from 'portcullis/client'` instead.
const clientDir = join(dirname(createRequire(import.meta.url).resolve('portcullis/package.json')), 'dist', 'client')
if (!existsSync(join(clientDir, 'index.js'))) {
  console.error(`${clientDir}/index.js is missing: run \`npm run build\` first.`)
  process.exit(1)
}

let devIdp: { issuer: string; clientId: string; clientSecret: string } | undefined
if (process.env.DEV_IDP !== 'off') {
  const { startDevIdp } = await import('../express/dev-idp.js')
  devIdp = await startDevIdp({ port: Number(process.env.DEV_IDP_PORT ?? 3001), clientRedirectUri: `http://localhost:${port}/api/auth/callback/dev-idp` })
  console.log(`Local dev identity provider (development only: any name signs in) at ${devIdp.issuer}`)
}

const { app: authApp } = await createApp({ databaseFile, ...(devIdp ? { devIdp } : {}) })
const app = express()
app.use(express.static(fileURLToPath(new URL('public/', import.meta.url))))
app.use('/portcullis/client', express.static(clientDir, { index: false }))
// /api/auth/*, /api/me, /dashboard: the Express example's routes.
app.use(authApp)
app.listen(port, host, () => {
  console.log(`Portcullis SPA example running at http://localhost:${port} (listening on ${host}; database: ${databaseFile})`)
})
