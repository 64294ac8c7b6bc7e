/**
 * The server of bench/steady-split.ts: the HTTP bench's Portcullis app (bench/http-portcullis-app.ts)
 * with two routes more, each a part of what `GET /me` does, on the same Express route as the rest:
 *
 *   /read        the session read alone, called as `auth()` calls it (src/session/strategy.ts's
 *                readSession on a config of its own), answered at once: no `await`, no record of
 *                the read on the request, no `req.auth`
 *   /read-await  the same read's result awaited first, as `/me` awaits `auth()`'s promise
 *
 * `node --import tsx bench/steady-split-server.ts <port>` prints `ready` once listening on loopback.
 */
import type { RequestHandler } from 'express'
// The read's own modules, which dist/ does not export, from src/, compiled by tsx as esbuild compiles
// dist/; `/me` and the rest of the app run dist/.
import { resolveConfig } from '../src/config/resolve.js'
import { FEATURES } from '../src/features/index.js'
import Credentials from '../src/providers/credentials.js'
import { readSession } from '../src/session/strategy.js'
import { sessionRequestFor } from '../src/http/request.js'
import { HOST, SECRET } from './http-sessions.js'
import { portcullisBenchApp } from './http-portcullis-app.js'

// The bench app's options (trustHost, the secret), resolved once as Portcullis() resolves them.
const config = resolveConfig({ secret: SECRET, trustHost: true, providers: [Credentials({ authorize: () => null })] }, FEATURES)

/** The read's session; a read that is not synchronous (none of these cookies) is an error here. */
function readNow(req: Parameters<RequestHandler>[0]) {
  const result = readSession(sessionRequestFor(req, config))
  if (result instanceof Promise) throw new Error('/read: the session read did not complete synchronously')
  return result.session
}

const parts: Record<string, RequestHandler> = {
  '/read': (req, res) => {
    res.json(readNow(req))
  },
  '/read-await': async (req, res) => {
    res.json(await readNow(req))
  },
}

const port = Number(process.argv[2])
portcullisBenchApp({}, undefined, parts).listen(port, HOST, () => console.log('ready'))
