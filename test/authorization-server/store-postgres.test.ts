/** The authorization server's records on PostgreSQL (see store-suite.ts). */
import { describeWithDatabase } from '../support/databases.js'
import { runRecordStoreSuite } from './store-suite.js'

await describeWithDatabase('postgres', 'the authorization server on PostgreSQL', runRecordStoreSuite)
