/** The authorization server's records on SQLite (see store-suite.ts). */
import { describeWithDatabase } from '../support/databases.js'
import { runRecordStoreSuite } from './store-suite.js'

await describeWithDatabase('sqlite', 'the authorization server on SQLite', runRecordStoreSuite)
