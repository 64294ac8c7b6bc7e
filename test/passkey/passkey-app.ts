/**
 * The app of the passkey suites: Portcullis with a Credentials provider (to be signed in before
 * registering a passkey: it signs in an e-mail address that is in the database) and the Passkey
 * provider, database sessions on a migrated in-memory SQLite, mounted at /api/auth with `GET /me`
 * (the session as JSON), and any other providers a suite adds. The Passkey provider's origin is given, since the apps listen on ports
 * chosen at run time.
 */
import knex, { type Knex } from 'knex'
import { KnexAdapter, migrationSource, type KnexAdapterInstance } from 'portcullis/adapters/knex'
import Credentials from 'portcullis/providers/credentials'
import Passkey, { type PasskeyOptions } from 'portcullis/providers/passkey'
import type { PortcullisConfig } from 'portcullis'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { recordingLogger, type RecordingLogger } from '../support/logger.js'

export const SECRET = 'passkey-suite-secret-0123456789abcdef'

/** The app, its database and adapter, its log. */
export interface PasskeyApp extends AuthApp {
  db: Knex
  adapter: KnexAdapterInstance
  logger: RecordingLogger
}

/** A migrated in-memory SQLite database. */
export async function passkeyDatabase(): Promise<Knex> {
  const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
  await db.migrate.latest({ migrationSource: migrationSource() })
  return db
}

/** The app on `db`, its passkeys bound to `origin`. */
export function passkeyApp(db: Knex, origin: string, options: { passkey?: PasskeyOptions; config?: Partial<PortcullisConfig>; otherProviders?: PortcullisConfig['providers'] } = {}): PasskeyApp {
  const adapter = KnexAdapter(db)
  const logger = recordingLogger()
  const app = authApp({
    secret: SECRET,
    adapter,
    logger,
    providers: [
      Credentials({
        credentials: { email: { label: 'E-mail', type: 'email' } },
        authorize: async ({ email }) => (typeof email === 'string' ? adapter.getUserByEmail(email) : null),
      }),
      Passkey({ relayingParty: { origin, name: 'Portcullis tests' }, ...options.passkey }),
      ...(options.otherProviders ?? []),
    ],
    ...options.config,
  })
  return { ...app, db, adapter, logger }
}
