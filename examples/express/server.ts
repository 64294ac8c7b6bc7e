/**
 * Runs the example: `npm start` (`tsx examples/express/server.ts`). Sessions and users live in a
 * SQLite file (DATABASE_FILE, default examples/express/example.sqlite), created and migrated at
 * start. Set PORT to listen elsewhere, AUTH_SECRET to keep sign-ins working across restarts.
 */
import { fileURLToPath } from 'node:url'
import { createApp } from './app.js'

const port = Number(process.env.PORT ?? 3000)
const databaseFile = process.env.DATABASE_FILE ?? fileURLToPath(new URL('example.sqlite', import.meta.url))

const { app } = await createApp({ databaseFile })
app.listen(port, () => {
  console.log(`Portcullis example running at http://localhost:${port} (database: ${databaseFile})`)
})
