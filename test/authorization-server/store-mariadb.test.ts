/** The authorization server's records on MariaDB (see store-suite.ts). */
import { describeWithDatabase } from '../support/databases.js'
import { runRecordStoreSuite } from './store-suite.js'

await describeWithDatabase('mariadb', 'the authorization server on MariaDB', runRecordStoreSuite)
