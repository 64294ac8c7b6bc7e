/**
 * API keys owned by an organization (the `organizations` option), on SQLite, PostgreSQL and MariaDB:
 * created, listed, rotated and revoked by its members whose roles there grant `apiKey: ['manage']`
 * (owners and admins), through the JSON routes; refused to a plain member and to outsiders with the
 * same answer as a made-up id; the key outlives its creator's membership and account, and stops with
 * its organization.
 */
import { createHash } from 'node:crypto'
import { afterAll, describe, expect, it } from '@jest/globals'
import { closeAll } from '../support/app-rig.js'
import { describeWithDatabase, migratedDatabase, type DatabaseKind } from '../support/databases.js'
import { createKey, postJson, signedInBrowser, startKeysApp, withKey, type KeysApp } from './api-keys-app.js'

afterAll(closeAll)

async function organizationApp(knex: Parameters<typeof startKeysApp>[0]): Promise<KeysApp & { organizationId: string; memberId: string }> {
  const app = await startKeysApp(knex, { organizations: true, session: { strategy: 'database' } })
  const owner = await app.adapter.createUser({ email: 'owner@example.com', name: 'owner', emailVerified: null, image: null })
  const member = await app.adapter.createUser({ email: 'member@example.com', name: 'member', emailVerified: null, image: null })
  await app.adapter.createUser({ email: 'admin@example.com', name: 'admin', emailVerified: null, image: null })
  const { organization } = (await app.adapter.createOrganization({ name: 'Acme', slug: 'acme', logo: null, metadata: null }, { userId: owner.id, roles: ['owner'] }))!
  await app.adapter.addMember({ organizationId: organization.id, userId: member.id, roles: ['member'] })
  await app.adapter.addMember({ organizationId: organization.id, userId: (await app.adapter.getUserByEmail('admin@example.com'))!.id, roles: ['admin'] })
  return { ...app, organizationId: organization.id, memberId: member.id }
}

for (const kind of ['sqlite', 'postgres', 'mariadb'] as DatabaseKind[]) {
  await describeWithDatabase(kind, `an organization's API keys on ${kind}`, (server) => {
    const db = migratedDatabase(server)

    it('an admin creates one; it authenticates as the organization, outlives its creator, and the owner lists, rotates and revokes it', async () => {
      const app = await organizationApp(db.knex)
      const admin = await signedInBrowser(app, 'admin@example.com')
      const owner = await signedInBrowser(app, 'owner@example.com')
      const created = await createKey(admin, app, { organizationId: app.organizationId, name: 'Acme CI' })
      const answer = await withKey(`${app.url}/reports`, created.key)
      expect(answer.status).toBe(200)
      const { auth } = (await answer.json()) as { auth: { type: string; owner: unknown; user: { id: string; name: string } } }
      expect(auth).toMatchObject({ type: 'apiKey', owner: { type: 'organization', id: app.organizationId }, user: { id: app.organizationId, name: 'Acme' } })

      // The organization's keys are not the admin's own.
      const own = (await (await admin.request(`${app.url}/api/auth/api-keys`, { headers: { accept: 'application/json' } })).json()) as { keys: unknown[] }
      expect(own.keys).toEqual([])
      const listed = (await (await owner.request(`${app.url}/api/auth/api-keys?organizationId=${app.organizationId}`, { headers: { accept: 'application/json' } })).json()) as { keys: { id: string; owner: unknown }[] }
      expect(listed.keys.map((key) => [key.id, key.owner])).toEqual([[created.id, { type: 'organization', id: app.organizationId }]])

      // Its creator leaves and deletes their account: the organization's key goes on.
      const adminId = (await app.adapter.getUserByEmail('admin@example.com'))!.id
      await app.adapter.deleteUser(adminId)
      expect((await withKey(`${app.url}/reports`, created.key)).status).toBe(200)

      const rotated = await postJson(owner, app, 'api-keys/rotate', { id: created.id, organizationId: app.organizationId })
      expect(rotated.status).toBe(201)
      const fresh = (await rotated.json()) as { key: string; id: string }
      expect((await withKey(`${app.url}/reports`, created.key)).status).toBe(401)
      expect((await withKey(`${app.url}/reports`, fresh.key)).status).toBe(200)
      expect((await postJson(owner, app, 'api-keys/revoke', { id: fresh.id, organizationId: app.organizationId })).status).toBe(200)
      expect((await withKey(`${app.url}/reports`, fresh.key)).status).toBe(401)
    })

    it('a plain member, an outsider and a made-up organization get the same refusal, and nothing is created', async () => {
      const app = await organizationApp(db.knex)
      const member = await signedInBrowser(app, 'member@example.com')
      const outsider = await signedInBrowser(app, 'eve@example.com')
      const owner = await signedInBrowser(app, 'owner@example.com')
      const key = await createKey(owner, app, { organizationId: app.organizationId })
      const answers = []
      for (const [browser, organizationId] of [
        [member, app.organizationId],
        [outsider, app.organizationId],
        [outsider, 'made-up'],
      ] as const) {
        const response = await postJson(browser, app, 'api-keys', { name: 'Mine', scopes: ['reports:read'], organizationId })
        answers.push([response.status, await response.json()])
        const listed = await browser.request(`${app.url}/api/auth/api-keys?organizationId=${organizationId}`, { headers: { accept: 'application/json' } })
        answers.push([listed.status, await listed.json()])
        const revoked = await postJson(browser, app, 'api-keys/revoke', { id: key.id, organizationId })
        answers.push([revoked.status, await revoked.json()])
      }
      expect(answers.every(([status]) => status === 404)).toBe(true)
      expect(new Set(answers.map(([, body]) => JSON.stringify(body))).size).toBe(1)
      // Nor does an organization's key id work under the user's own keys.
      expect((await postJson(owner, app, 'api-keys/revoke', { id: key.id })).status).toBe(404)
      expect((await withKey(`${app.url}/reports`, key.key)).status).toBe(200)
      expect(await app.adapter.listApiKeys({ type: 'organization', id: app.organizationId })).toHaveLength(1)
    })

    it('deleting the organization deletes its keys, and the lookup refuses them', async () => {
      const app = await organizationApp(db.knex)
      const owner = await signedInBrowser(app, 'owner@example.com')
      const key = await createKey(owner, app, { organizationId: app.organizationId })
      expect((await withKey(`${app.url}/reports`, key.key)).status).toBe(200)
      await app.adapter.deleteOrganization(app.organizationId)
      expect(await app.adapter.listApiKeys({ type: 'organization', id: app.organizationId })).toEqual([])
      expect(await app.adapter.getApiKeyByHash(createHash('sha256').update(key.key).digest('hex'))).toBeNull()
    })
  })
}

describe('without the organizations option', () => {
  it('a key for an organization is refused with a clear error', async () => {
    // A database is not needed to be refused: the check comes before any lookup.
    const { default: knex } = await import('knex')
    const db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true })
    const { migrationSource } = await import('portcullis/adapters/knex')
    await db.migrate.latest({ migrationSource: migrationSource() })
    try {
      const app = await startKeysApp(db)
      const browser = await signedInBrowser(app, 'ada@example.com')
      const response = await postJson(browser, app, 'api-keys', { name: 'x', organizationId: 'acme' })
      expect(response.status).toBe(400)
      expect(((await response.json()) as { message: string }).message).toBe('Keys of an organization need the organizations option.')
    } finally {
      await db.destroy()
    }
  })
})
