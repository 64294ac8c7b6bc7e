/**
 * KnexAdapter on SQLite (better-sqlite3, always run): the
 * conformance suite and the Knex-specific checks, with the `default` and `snake_case` names.
 */
import { describeWithDatabase } from '../support/databases.js'
import { runKnexAdapterSuites } from './knex-suite.js'

await describeWithDatabase('sqlite', 'KnexAdapter on SQLite', runKnexAdapterSuites)
