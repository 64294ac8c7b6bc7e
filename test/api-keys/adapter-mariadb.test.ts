/** KnexAdapter's API key methods on MariaDB (see adapter-suite.ts). */
import { describeWithDatabase } from '../support/databases.js'
import { runApiKeyAdapterSuite } from './adapter-suite.js'

await describeWithDatabase('mariadb', 'KnexAdapter on MariaDB', runApiKeyAdapterSuite)
