/** KnexAdapter's API key methods on SQLite (see adapter-suite.ts). */
import { describeWithDatabase } from '../support/databases.js'
import { runApiKeyAdapterSuite } from './adapter-suite.js'

await describeWithDatabase('sqlite', 'KnexAdapter on SQLite', runApiKeyAdapterSuite)
