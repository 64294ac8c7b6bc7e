/**
 * KnexAdapter on MariaDB (the machine's or CI's server; see test/support/databases.ts): the
 * conformance suite and the Knex-specific checks, with the `default` and `snake_case` names.
 */
import { describeWithDatabase } from '../support/databases.js'
import { runKnexAdapterSuites } from './knex-suite.js'

await describeWithDatabase('mariadb', 'KnexAdapter on MariaDB', runKnexAdapterSuites)
