/**
 * `KnexAdapter` on one database server, with each naming preset: the shared conformance suite, then
 * what only SQL can show (the schema's constraints and cascades, one query per session read,
 * rollback).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import type { Knex } from 'knex'
import { KnexAdapter, migrationSource, resolveNaming, type KnexNamingPreset } from 'portcullis/adapters/knex'
import type { DatabaseServer, TestDatabase } from '../support/databases.js'
import { expectUniqueViolation, runAdapterConformance } from './conformance.js'

const NAMINGS: readonly KnexNamingPreset[] = ['default', 'snake_case']

/**
 * Declares the suites for one server: per naming, one fresh database, migrated, shared by the
 * conformance suite and the Knex-specific checks.
 */
export function runKnexAdapterSuites(server: DatabaseServer): void {
  for (const naming of NAMINGS) {
    describe(`${naming} names`, () => {
      let db: TestDatabase | undefined
      const knex = () => db!.knex

      beforeAll(async () => {
        db = await server.createDatabase()
        await db.knex.migrate.latest({ migrationSource: migrationSource({ naming }) })
        // The app's own user columns, as an app's migration adds them; `plan` under another column name.
        await db.knex.schema.alterTable(resolveNaming(naming).tables.users, (table) => {
          table.string('role', 50).nullable()
          table.string('plan_name', 50).nullable()
        })
      })
      afterAll(async () => {
        await db?.destroy()
      })

      runAdapterConformance(
        'conformance',
        async () => {
          const debugLines: string[] = []
          const logger = { debug: (code: string, ...message: unknown[]) => debugLines.push([code, ...message].join(' ')) }
          const withUserFields = KnexAdapter(knex(), { naming, userFields: { role: 'role', plan: 'plan_name' }, logger })
          return { adapter: KnexAdapter(knex(), { naming }), withUserFields: { adapter: withUserFields, debugLines }, teardown: async () => {} }
        },
        { authenticators: true, userFields: true, authenticatorExtras: true, twoFactor: true },
      )
      describeKnexSpecifics(server, naming, knex)
    })
  }
}

function describeKnexSpecifics(server: DatabaseServer, naming: KnexNamingPreset, knex: () => Knex): void {
  const names = resolveNaming(naming)
  const { tables } = names
  const adapter = () => KnexAdapter(knex(), { naming })

  /** A user with one account and one session, written through the adapter. */
  async function userWithAccountAndSession() {
    const user = await adapter().createUser({ email: `${randomUUID()}@example.com` })
    const account = await adapter().linkAccount({ userId: user.id, type: 'oauth', provider: 'example', providerAccountId: randomUUID() })
    const session = await adapter().createSession({ sessionToken: randomUUID(), userId: user.id, expires: new Date(Date.now() + 3600_000) })
    return { user, account, session }
  }
  const countRows = async (table: string, where: Record<string, unknown>, db: Knex = knex()) => {
    const row = await db(table).where(where).count({ count: '*' }).first()
    return Number(row?.count)
  }

  describe('schema and SQL', () => {
    it('migrate.latest creates every table with every column under the naming’s names', async () => {
      const groups = ['users', 'accounts', 'sessions', 'verificationTokens', 'authenticators', 'passwords', 'twoFactors', 'recoveryCodes', 'apiKeys', 'usernames', 'auditEvents', 'oauthRecords', 'organizations', 'members', 'invitations', 'teams', 'teamMembers', 'ssoConnections', 'ssoDomains', 'ssoReplays'] as const
      expect([...groups].sort()).toEqual(Object.keys(tables).sort())
      for (const group of groups) {
        expect([tables[group], await knex().schema.hasTable(tables[group])]).toEqual([tables[group], true])
        for (const column of Object.values(names[group])) {
          expect([tables[group], column, await knex().schema.hasColumn(tables[group], column)]).toEqual([tables[group], column, true])
        }
      }
    })

    it('getSessionAndUser issues exactly one SQL query (a join), found or not', async () => {
      const { session } = await userWithAccountAndSession()
      const queries: string[] = []
      const record = (query: { sql: string }) => queries.push(query.sql)
      knex().on('query', record)
      try {
        expect(await adapter().getSessionAndUser(session.sessionToken)).not.toBeNull()
        expect(queries).toHaveLength(1)
        expect(queries[0]).toMatch(/\bjoin\b/i)
        expect(await adapter().getSessionAndUser(randomUUID())).toBeNull()
        expect(queries).toHaveLength(2)
      } finally {
        knex().removeListener('query', record)
      }
    })

    it('a session written by one app server expires at the same instant for another in a different time zone', async () => {
      // mysql2 converts DATETIMEs through the connection's time zone; the adapter must not depend on it.
      const base = knex().client.config as Knex.Config
      const connection = typeof base.connection === 'object' ? { ...(base.connection as object) } : base.connection
      const otherZone = server.kind === 'mariadb' ? { ...(connection as object), timezone: '+05:30' } : connection
      const other = (await import('knex')).default({ ...base, connection: otherZone } as Knex.Config)
      try {
        const { user } = await userWithAccountAndSession()
        const expires = new Date('2031-11-02T06:30:00.456Z')
        const sessionToken = randomUUID()
        await adapter().createSession({ sessionToken, userId: user.id, expires })
        const seen = await KnexAdapter(other, { naming }).getSessionAndUser(sessionToken)
        expect(seen?.session.expires.toISOString()).toBe(expires.toISOString())
      } finally {
        await other.destroy()
      }
    })

    it('deleting a user row directly cascades to its accounts and sessions (ON DELETE CASCADE)', async () => {
      const { user, account, session } = await userWithAccountAndSession()
      const bystander = await userWithAccountAndSession()
      expect(await countRows(tables.accounts, { [names.accounts.userId]: user.id })).toBe(1)
      expect(await countRows(tables.sessions, { [names.sessions.userId]: user.id })).toBe(1)

      await knex()(tables.users).where({ [names.users.id]: user.id }).del()

      expect(await countRows(tables.accounts, { [names.accounts.providerAccountId]: account.providerAccountId })).toBe(0)
      expect(await countRows(tables.sessions, { [names.sessions.sessionToken]: session.sessionToken })).toBe(0)
      expect(await countRows(tables.accounts, { [names.accounts.userId]: bystander.user.id })).toBe(1)
      expect(await countRows(tables.sessions, { [names.sessions.userId]: bystander.user.id })).toBe(1)
    })

    it('the schema itself rejects duplicates: email, (provider, providerAccountId), sessionToken, (identifier, token), token', async () => {
      const { user, account, session } = await userWithAccountAndSession()
      const { users, accounts, sessions, verificationTokens } = names
      const expires = new Date(Date.now() + 3600_000)

      await expectUniqueViolation(knex()(tables.users).insert({ [users.id]: randomUUID(), [users.email]: user.email }))
      await expectUniqueViolation(
        knex()(tables.accounts).insert({
          [accounts.id]: randomUUID(),
          [accounts.userId]: user.id,
          [accounts.type]: 'oauth',
          [accounts.provider]: account.provider,
          [accounts.providerAccountId]: account.providerAccountId,
        }),
      )
      await expectUniqueViolation(
        knex()(tables.sessions).insert({
          [sessions.id]: randomUUID(),
          [sessions.sessionToken]: session.sessionToken,
          [sessions.userId]: user.id,
          [sessions.expires]: expires,
        }),
      )

      const token = { [verificationTokens.identifier]: user.email, [verificationTokens.token]: randomUUID(), [verificationTokens.expires]: expires }
      await knex()(tables.verificationTokens).insert(token)
      await expectUniqueViolation(knex()(tables.verificationTokens).insert(token))
      await expectUniqueViolation(knex()(tables.verificationTokens).insert({ ...token, [verificationTokens.identifier]: 'eve@example.com' }))
    })

    it('50 parallel getSessionAndUser and updateSession calls leave exactly one session row', async () => {
      const { session } = await userWithAccountAndSession()
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          Promise.all([
            adapter().getSessionAndUser(session.sessionToken),
            adapter().updateSession({ sessionToken: session.sessionToken, expires: new Date(session.expires.getTime() + i * 1000) }),
          ]),
        ),
      )
      expect(await countRows(tables.sessions, { [names.sessions.sessionToken]: session.sessionToken })).toBe(1)
    })

    it('deleting a user row directly cascades to its authenticators (ON DELETE CASCADE)', async () => {
      const { user } = await userWithAccountAndSession()
      const credentialID = randomUUID()
      await adapter().createAuthenticator({
        credentialID,
        userId: user.id,
        providerAccountId: credentialID,
        credentialPublicKey: 'key',
        counter: 0,
        credentialDeviceType: 'singleDevice',
        credentialBackedUp: false,
      })
      await knex()(tables.users).where({ [names.users.id]: user.id }).del()
      expect(await countRows(tables.authenticators, { [names.authenticators.credentialID]: credentialID })).toBe(0)
    })

    it('deleting a user row directly cascades to its two-factor enrolment and recovery codes (ON DELETE CASCADE)', async () => {
      const { user } = await userWithAccountAndSession()
      const bystander = await userWithAccountAndSession()
      for (const { id } of [user, bystander.user]) {
        const secret = randomUUID()
        await adapter().startTwoFactor(id, secret)
        await adapter().enableTwoFactor(id, { secret, step: 1, enabledAt: new Date(), recoveryCodes: [randomUUID(), randomUUID()] })
      }
      await knex()(tables.users).where({ [names.users.id]: user.id }).del()
      expect(await countRows(tables.twoFactors, { [names.twoFactors.userId]: user.id })).toBe(0)
      expect(await countRows(tables.recoveryCodes, { [names.recoveryCodes.userId]: user.id })).toBe(0)
      expect(await countRows(tables.twoFactors, { [names.twoFactors.userId]: bystander.user.id })).toBe(1)
      expect(await countRows(tables.recoveryCodes, { [names.recoveryCodes.userId]: bystander.user.id })).toBe(2)
    })

    it('the schema itself keeps one enrolment a user and each recovery code once, and refuses rows of an unknown user', async () => {
      const { user } = await userWithAccountAndSession()
      const { twoFactors, recoveryCodes } = names
      const enrolment = { [twoFactors.userId]: user.id, [twoFactors.secret]: 'sealed', [twoFactors.updatedAt]: new Date() }
      const code = { [recoveryCodes.userId]: user.id, [recoveryCodes.codeHash]: 'hash' }
      await knex()(tables.twoFactors).insert(enrolment)
      await expectUniqueViolation(knex()(tables.twoFactors).insert({ ...enrolment, [twoFactors.secret]: 'other' }))
      await knex()(tables.recoveryCodes).insert(code)
      await expectUniqueViolation(knex()(tables.recoveryCodes).insert(code))
      await expect(adapter().startTwoFactor(randomUUID(), 'sealed')).rejects.toBeDefined()
      await expect(knex()(tables.recoveryCodes).insert({ ...code, [recoveryCodes.userId]: randomUUID() })).rejects.toBeDefined()
    })

    it('useTwoFactorStep and enableTwoFactor refuse a time step that is not a non-negative integer (TypeError), before any SQL', async () => {
      const { user } = await userWithAccountAndSession()
      for (const step of ['59000000', 1.5, -1, Number.NaN, 2 ** 53] as unknown as number[]) {
        await expect(adapter().useTwoFactorStep(user.id, step)).rejects.toThrow(new TypeError('useTwoFactorStep: step must be a non-negative integer (an RFC 6238 time step).'))
        await expect(adapter().enableTwoFactor(user.id, { secret: 's', step, enabledAt: new Date(), recoveryCodes: [] })).rejects.toThrow(
          new TypeError('enableTwoFactor: step must be a non-negative integer (an RFC 6238 time step).'),
        )
      }
    })

    it('updateUser changes that user only; with nothing to change it answers the stored user; an unknown id is an error that names it', async () => {
      const { user } = await userWithAccountAndSession()
      const { user: bystander } = await userWithAccountAndSession()
      expect(await adapter().updateUser({ id: user.id, name: 'Renamed' })).toMatchObject({ id: user.id, name: 'Renamed' })
      expect(await adapter().getUser(bystander.id)).toEqual(bystander)
      expect(await adapter().updateUser({ id: user.id })).toEqual({ ...user, name: 'Renamed' })
      await expect(adapter().updateUser({ id: 'no-such-user', name: 'Nobody' })).rejects.toThrow('updateUser: there is no user with id "no-such-user".')
    })

    if (server.kind === 'sqlite') {
      it('deleteUser deletes the user’s rows of every table itself, and no one else’s, without the foreign keys’ cascade (which the sqlite3 driver does not enforce)', async () => {
        const own = await server.createDatabase()
        try {
          await own.knex.migrate.latest({ migrationSource: migrationSource({ naming }) })
          const ownAdapter = KnexAdapter(own.knex, { naming })
          /** A user with a row in every table. */
          const everywhere = async (name: string) => {
            const user = await ownAdapter.createUser({ email: `${name}@example.com` })
            await ownAdapter.linkAccount({ userId: user.id, type: 'oauth', provider: 'example', providerAccountId: name })
            await ownAdapter.createSession({ sessionToken: randomUUID(), userId: user.id, expires: new Date(Date.now() + 3600_000) })
            await ownAdapter.createAuthenticator({ credentialID: name, userId: user.id, providerAccountId: name, credentialPublicKey: 'key', counter: 0, credentialDeviceType: 'singleDevice', credentialBackedUp: false })
            await ownAdapter.setUserPassword(user.id, '$scrypt$hash')
            await ownAdapter.startTwoFactor(user.id, 'sealed')
            await ownAdapter.enableTwoFactor(user.id, { secret: 'sealed', step: 1, enabledAt: new Date(), recoveryCodes: [`${name}-code`] })
            return user
          }
          const rowsOf = async (id: string) => ({
            users: await countRows(tables.users, { [names.users.id]: id }, own.knex),
            accounts: await countRows(tables.accounts, { [names.accounts.userId]: id }, own.knex),
            sessions: await countRows(tables.sessions, { [names.sessions.userId]: id }, own.knex),
            authenticators: await countRows(tables.authenticators, { [names.authenticators.userId]: id }, own.knex),
            passwords: await countRows(tables.passwords, { [names.passwords.userId]: id }, own.knex),
            twoFactors: await countRows(tables.twoFactors, { [names.twoFactors.userId]: id }, own.knex),
            recoveryCodes: await countRows(tables.recoveryCodes, { [names.recoveryCodes.userId]: id }, own.knex),
          })
          const user = await everywhere('cascade')
          const bystander = await everywhere('bystander')
          await own.knex.raw('PRAGMA foreign_keys = OFF')
          expect(await ownAdapter.deleteUser(user.id)).toEqual(user)
          expect(await rowsOf(user.id)).toEqual({ users: 0, accounts: 0, sessions: 0, authenticators: 0, passwords: 0, twoFactors: 0, recoveryCodes: 0 })
          // Each DELETE is the user's alone.
          expect(await rowsOf(bystander.id)).toEqual({ users: 1, accounts: 1, sessions: 1, authenticators: 1, passwords: 1, twoFactors: 1, recoveryCodes: 1 })
        } finally {
          await own.destroy()
        }
      })
    }

    it('KnexAdapter refuses userFields that clash with a built-in field or column, or name no column', () => {
      const column = names.users.emailVerified
      expect(() => KnexAdapter(knex(), { naming, userFields: { email: 'contact' } })).toThrow(/built-in user field/)
      expect(() => KnexAdapter(knex(), { naming, userFields: { verifiedAt: column } })).toThrow(/already used/)
      expect(() => KnexAdapter(knex(), { naming, userFields: { role: 'r', level: 'r' } })).toThrow(/already used/)
      expect(() => KnexAdapter(knex(), { naming, userFields: { role: '' } })).toThrow(/non-empty/)
    })

    it('deleteUser works before the authenticator migration has run (no such table yet)', async () => {
      const own = await server.createDatabase()
      try {
        await own.knex.migrate.up({ migrationSource: migrationSource({ naming }) })
        await own.knex.migrate.up({ migrationSource: migrationSource({ naming }) })
        expect(await own.knex.schema.hasTable(tables.authenticators)).toBe(false)
        const early = KnexAdapter(own.knex, { naming })
        const user = await early.createUser({ email: 'early@example.com' })
        expect(await early.deleteUser(user.id)).toEqual(user)
        expect(await early.getUser(user.id)).toBeNull()
      } finally {
        await own.destroy()
      }
    })

    it('deleteUser works before the two-factor migration has run (migrated up to the password table only)', async () => {
      const own = await server.createDatabase()
      try {
        for (let i = 0; i < 6; i++) await own.knex.migrate.up({ migrationSource: migrationSource({ naming }) })
        expect(await own.knex.schema.hasTable(tables.passwords)).toBe(true)
        expect(await own.knex.schema.hasTable(tables.twoFactors)).toBe(false)
        const early = KnexAdapter(own.knex, { naming })
        const user = await early.createUser({ email: 'early@example.com' })
        await early.setUserPassword(user.id, '$scrypt$hash')
        expect(await early.deleteUser(user.id)).toEqual(user)
        expect(await early.getUser(user.id)).toBeNull()
        expect(await early.getUserPassword(user.id)).toBeNull()
      } finally {
        await own.destroy()
      }
    })

    it('the SSO, organizations, authorization server, impersonation, bans, audit, roles, deletion and usernames migrations’ downs drop their tables and columns, the account one’s its two columns, the two-factor one’s its two tables, and nothing else; up creates them again', async () => {
      const own = await server.createDatabase()
      try {
        const source = { migrationSource: migrationSource({ naming }) }
        await own.knex.migrate.latest(source)
        const ownAdapter = KnexAdapter(own.knex, { naming })
        const user = await ownAdapter.createUser({ email: 'down@example.com' })
        await ownAdapter.setUserPassword(user.id, '$scrypt$hash')
        await ownAdapter.startTwoFactor(user.id, 'sealed')
        expect(await ownAdapter.setUsername(user.id, 'down', 'down')).toBe(true)

        await ownAdapter.setUserRoles(user.id, ['admin'])
        expect(await ownAdapter.banUser(user.id, { at: new Date(), reason: 'spam', expiresAt: null })).toBe(true)
        const expires = new Date(Date.now() + 3_600_000)
        await ownAdapter.createSession({ sessionToken: 'impersonated', userId: user.id, expires, impersonatedBy: 'admin-id' })
        expect((await ownAdapter.getSessionAndUser('impersonated', { with: ['impersonatedBy'] }))?.session.impersonatedBy).toBe('admin-id')
        expect((await ownAdapter.getSessionAndUser('impersonated'))?.session.impersonatedBy).toBeUndefined()
        await ownAdapter.upsertOAuthRecord({ model: 'Grant', id: 'grant-1', payload: { accountId: user.id, clientId: 'cli' }, expiresAt: null })
        // The eighteenth (single sign-on's) first: its three tables, and nothing else.
        const down = (await ownAdapter.createOrganization({ name: 'Down', slug: 'down', logo: null, metadata: null }, { userId: user.id, roles: ['owner'] }))!.organization
        await ownAdapter.createSsoDomain({ organizationId: down.id, domain: 'down.example', token: 't' })
        await ownAdapter.claimSsoAssertion('k'.repeat(64), expires)
        await own.knex.migrate.down(source)
        for (const table of [tables.ssoConnections, tables.ssoDomains, tables.ssoReplays]) expect([table, await own.knex.schema.hasTable(table)]).toEqual([table, false])
        expect(await ownAdapter.getOrganization({ id: down.id })).toMatchObject({ slug: 'down' })
        // The seventeenth (organizations') next: its five tables and the sessions' column, and nothing else.
        await own.knex.migrate.down(source)
        for (const table of [tables.organizations, tables.members, tables.invitations, tables.teams, tables.teamMembers]) expect([table, await own.knex.schema.hasTable(table)]).toEqual([table, false])
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.activeOrganizationId)).toBe(false)
        expect(await own.knex.schema.hasTable(tables.oauthRecords)).toBe(true)
        expect((await ownAdapter.getSessionAndUser('impersonated', { with: ['impersonatedBy'] }))?.session.impersonatedBy).toBe('admin-id')
        // The sixteenth (the authorization server's) next: its table, and nothing else.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasTable(tables.oauthRecords)).toBe(false)
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.impersonatedBy)).toBe(true)
        // Then the fifteenth (impersonation's): the sessions' column, and nothing else; the session stays,
        // read as the user's own, and a new impersonation says which migration to run.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.impersonatedBy)).toBe(false)
        const unimpersonated = KnexAdapter(own.knex, { naming })
        expect((await unimpersonated.getSessionAndUser('impersonated', { with: ['impersonatedBy'] }))?.session).toMatchObject({ userId: user.id })
        expect((await unimpersonated.getSessionAndUser('impersonated', { with: ['impersonatedBy'] }))?.session.impersonatedBy).toBeUndefined()
        await expect(unimpersonated.createSession({ sessionToken: 'another', userId: user.id, expires, impersonatedBy: 'admin-id' })).rejects.toThrow('20270112000000_portcullis_impersonation.js')
        // Then the fourteenth (the bans'): the users' three ban columns, and nothing else; the user stays.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.bannedAt)).toBe(false)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.roles)).toBe(true)
        expect((await ownAdapter.getUser(user.id))?.email).toBe('down@example.com')
        expect(await KnexAdapter(own.knex, { naming }).getUserBan(user.id)).toBeNull()
        // Then the thirteenth (the audit log's): its table, and nothing else; deleteUser works without it.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasTable(tables.auditEvents)).toBe(false)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.roles)).toBe(true)
        // A new adapter (one asks whether a wing's table exists until it has found it, then never again).
        const unaudited = KnexAdapter(own.knex, { naming })
        await unaudited.deleteUser((await unaudited.createUser({ email: 'audit-gone@example.com' })).id)
        // Then the twelfth (the roles'): the users' roles, and nothing else; the user stays, and the
        // roles' methods then say which migration to run.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.roles)).toBe(false)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.deletedAt)).toBe(true)
        expect((await ownAdapter.getUser(user.id))?.email).toBe('down@example.com')
        await expect(KnexAdapter(own.knex, { naming }).getUserRoles(user.id)).rejects.toThrow('20261231000000_portcullis_roles.js')

        await ownAdapter.markUserDeleted(user.id, new Date())
        // Then the eleventh (the deletion grace period's): the users' mark, and nothing else; the user stays.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.deletedAt)).toBe(false)
        expect(await own.knex.schema.hasTable(tables.usernames)).toBe(true)
        expect((await ownAdapter.getUser(user.id))?.email).toBe('down@example.com')
        // Then the tenth (usernames): its table, and nothing else; deleteUser works without it.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasTable(tables.usernames)).toBe(false)
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.confirmedAt)).toBe(true)
        const gone = await ownAdapter.createUser({ email: 'gone@example.com' })
        await ownAdapter.deleteUser(gone.id)
        // Then the ninth (the account's): the sessions' two confirmation columns, and nothing else.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.confirmedAt)).toBe(false)
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.userAgent)).toBe(true)
        expect(await own.knex.schema.hasTable(tables.apiKeys)).toBe(true)
        // Then the eighth (API keys), then the seventh.
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasTable(tables.apiKeys)).toBe(false)
        expect(await own.knex.schema.hasTable(tables.twoFactors)).toBe(true)
        await own.knex.migrate.down(source)
        expect(await own.knex.schema.hasTable(tables.twoFactors)).toBe(false)
        expect(await own.knex.schema.hasTable(tables.recoveryCodes)).toBe(false)
        expect(await own.knex.schema.hasTable(tables.passwords)).toBe(true)
        expect(await ownAdapter.getUserPassword(user.id)).toBe('$scrypt$hash')

        await own.knex.migrate.up(source)
        expect(await own.knex.schema.hasTable(tables.apiKeys)).toBe(false)
        expect(await ownAdapter.getTwoFactor(user.id)).toBeNull()
        await own.knex.migrate.up(source)
        expect(await own.knex.schema.hasTable(tables.apiKeys)).toBe(true)
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.confirmedWith)).toBe(false)
        await own.knex.migrate.up(source)
        expect(await own.knex.schema.hasColumn(tables.sessions, names.sessions.confirmedWith)).toBe(true)
        expect(await own.knex.schema.hasTable(tables.usernames)).toBe(false)
        expect(await ownAdapter.startTwoFactor(user.id, 'sealed')).toBe(true)
        await own.knex.migrate.up(source)
        expect(await ownAdapter.setUsername(user.id, 'down', 'down')).toBe(true)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.deletedAt)).toBe(false)
        await own.knex.migrate.up(source)
        expect(await own.knex.schema.hasColumn(tables.users, names.users.deletedAt)).toBe(true)
        expect(await ownAdapter.listUsersMarkedDeleted(new Date(Date.now() + 1000), 10)).toEqual([])
        await own.knex.migrate.up(source)
        const fresh = KnexAdapter(own.knex, { naming })
        expect(await fresh.getUserRoles(user.id)).toBeNull()
        expect(await fresh.setUserRoles(user.id, ['editor'])).toBe(true)
        expect(await fresh.getUserRoles(user.id)).toEqual(['editor'])
        await own.knex.migrate.up(source)
        expect(await own.knex.schema.hasTable(tables.auditEvents)).toBe(true)
        await own.knex.migrate.up(source)
        expect(await KnexAdapter(own.knex, { naming }).getUserBan(user.id)).toBeNull()
      } finally {
        await own.destroy()
      }
    })

    it('keeps a session’s last confirmation: written at creation, changed by updateSession, read by getSessionConfirmation only', async () => {
      const user = await adapter().createUser({ email: `${randomUUID()}@example.com` })
      const sessionToken = randomUUID()
      const createdAt = new Date(Date.UTC(2026, 11, 20, 12, 0, 0, 123))
      await adapter().createSession({ sessionToken, userId: user.id, expires: new Date(createdAt.getTime() + 86_400_000), createdAt, confirmedAt: createdAt, confirmedWith: 'password' })
      expect(await adapter().getSessionConfirmation(sessionToken)).toEqual({ createdAt, confirmedAt: createdAt, confirmedWith: 'password' })
      const later = new Date(createdAt.getTime() + 601_456)
      await adapter().updateSession({ sessionToken, confirmedAt: later, confirmedWith: 'two-factor' })
      expect(await adapter().getSessionConfirmation(sessionToken)).toEqual({ createdAt, confirmedAt: later, confirmedWith: 'two-factor' })
      // The session read's row carries none of it (its query is unchanged).
      const found = await adapter().getSessionAndUser(sessionToken)
      expect(found?.session).not.toHaveProperty('confirmedAt')
      expect(await adapter().getSessionConfirmation('no-such-token')).toBeNull()
    })

    it('migrate.rollback drops every table (on a database of its own)', async () => {
      const own = await server.createDatabase()
      try {
        const source = { migrationSource: migrationSource({ naming }) }
        await own.knex.migrate.latest(source)
        const present = () => Promise.all(Object.values(tables).map((table) => own.knex.schema.hasTable(table)))
        const all = (value: boolean) => Object.values(tables).map(() => value)
        expect(await present()).toEqual(all(true))

        await own.knex.migrate.rollback(source)
        expect(await present()).toEqual(all(false))

        // And the migration runs again after a rollback.
        await own.knex.migrate.latest(source)
        expect(await present()).toEqual(all(true))
      } finally {
        await own.destroy()
      }
    })
  })
}
