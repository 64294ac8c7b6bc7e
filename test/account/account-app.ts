/**
 * Shared steps of the account suites: an app with the Password provider (its mails, and the
 * account's, to the in-process SMTP server) on a migrated database, `account` on, and the browser's
 * side of the account's forms. The clock is frozen (Date only) where a sign-in must grow old.
 */
import type { Knex } from 'knex'
import type { PortcullisConfig } from 'portcullis'
import { KnexAdapter } from 'portcullis/adapters/knex'
import Password from 'portcullis/providers/password'
import { authApp, type AuthApp } from '../support/app-rig.js'
import { SECRET } from '../support/flow.js'
import type { Listener } from '../support/oauth-app.js'
import type { TestSmtpServer } from '../support/smtp.js'
import { FAST_HASHING, FROM } from '../password/password-app.js'

export { Browser, GOOD_PASSWORD, csrfOf, nextLink, post, signIn, verifiedUser } from '../password/password-app.js'
export { freezeClock } from '../two-factor/two-factor-app.js'

/** Ten minutes and a second: past `account.recentSignInMaxAge`'s default. */
export const STALE_MS = 601_000

/** Portcullis on `listener`: the Password provider, the Knex adapter on `knex`, `account` on, its mails to `smtp` too. */
export function mountAccountApp(listener: Listener, knex: Knex, smtp: Pick<TestSmtpServer, 'url'>, config: Partial<PortcullisConfig> = {}): AuthApp {
  const app = authApp({ secret: SECRET, adapter: KnexAdapter(knex), providers: [Password({ server: smtp.url, from: FROM, hashing: FAST_HASHING })], account: { server: smtp.url, from: FROM }, ...config })
  app.app.get('/', (_req, res) => void res.send('home'))
  listener.mount(app.app)
  return app
}

/** The ids of the user rows, and how many rows of `userId` each of the other tables holds. */
export async function rowsOf(knex: Knex, userId: string): Promise<Record<string, number>> {
  const count = async (table: string) => Number((await knex(table).where({ userId }).count({ n: '*' }))[0]!.n)
  return {
    User: Number((await knex('User').where({ id: userId }).count({ n: '*' }))[0]!.n),
    Account: await count('Account'),
    Session: await count('Session'),
    Password: await count('Password'),
    TwoFactor: await count('TwoFactor'),
    RecoveryCode: await count('RecoveryCode'),
    Authenticator: await count('Authenticator'),
  }
}
