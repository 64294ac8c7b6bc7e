/** KnexAdapter's API key methods on PostgreSQL (see adapter-suite.ts). */
import { describeWithDatabase } from '../support/databases.js'
import { runApiKeyAdapterSuite } from './adapter-suite.js'

await describeWithDatabase('postgres', 'KnexAdapter on PostgreSQL', runApiKeyAdapterSuite)
