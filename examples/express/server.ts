/**
 * Runs the example: `npm start` (builds the package, then `tsx examples/express/server.ts`).
 * Set PORT to listen elsewhere, AUTH_SECRET to keep sessions across restarts.
 */
import { createApp } from './app.js'

const port = Number(process.env.PORT ?? 3000)

createApp().listen(port, () => {
  console.log(`Portcullis example running at http://localhost:${port}`)
})
