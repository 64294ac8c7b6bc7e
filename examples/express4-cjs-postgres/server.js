// `npm start` runs the migrations (knex migrate:latest) and then this file.
const knex = require('knex')
const knexConfig = require('./knexfile')
const { createApp } = require('./app')

const port = Number(process.env.PORT || 3000)
// Loopback only by default, so a development server is not reachable from the network.
const host = process.env.HOST || 'localhost'
const db = knex(knexConfig)

createApp(db).then(
  (app) => {
    const server = app.listen(port, host, () => console.log(`Portcullis Express 4 example running at http://localhost:${port}`))
    process.on('SIGTERM', () => server.close(() => db.destroy()))
  },
  (error) => {
    console.error(error)
    process.exit(1)
  },
)
