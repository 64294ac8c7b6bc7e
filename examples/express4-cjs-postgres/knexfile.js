// Knex configuration, read by the Knex CLI (`npx knex migrate:latest`, which `npm start` runs
// first) and by server.js. Portcullis's tables come from the package's own migrations folder.
const path = require('node:path')

module.exports = {
  client: 'pg',
  connection: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/portcullis_example',
  pool: { min: 0, max: 10 },
  migrations: {
    // Wherever npm put the package (hoisted or not).
    directory: path.join(path.dirname(require.resolve('portcullis/package.json')), 'migrations'),
  },
}
