/**
 * A minimal in-memory adapter written to `@auth/core`'s `Adapter` interface, for bench/signin-peers.ts's
 * `@auth/express` e-mail rows: Auth.js's e-mail provider needs an adapter, and no Auth.js adapter is
 * installed here (no `@auth/knex-adapter`; adding a dependency for a bench row was not worth it). It
 * keeps what an e-mail sign-in with JWT sessions touches, users and verification tokens, in `Map`s,
 * so the row measures Auth.js rather than a database driver. Portcullis's e-mail row uses its Knex
 * adapter on SQLite in memory, which does more (SQL) per call: that favours Auth.js, not Portcullis.
 */
import { randomUUID } from 'node:crypto'
import type { Adapter, AdapterAccount, AdapterUser, VerificationToken } from '@auth/core/adapters'

export function memoryAdapter(): Adapter {
  const users = new Map<string, AdapterUser>()
  const byEmail = new Map<string, string>()
  const accounts = new Map<string, string>()
  const tokens = new Map<string, VerificationToken>()
  const tokenKey = (identifier: string, token: string) => `${identifier}\n${token}`
  return {
    createUser: (user) => {
      const created: AdapterUser = { ...user, id: randomUUID() }
      users.set(created.id, created)
      byEmail.set(created.email, created.id)
      return created
    },
    getUser: (id) => users.get(id) ?? null,
    getUserByEmail: (email) => users.get(byEmail.get(email) ?? '') ?? null,
    getUserByAccount: ({ provider, providerAccountId }) => users.get(accounts.get(`${provider}\n${providerAccountId}`) ?? '') ?? null,
    updateUser: (user) => {
      const updated = { ...users.get(user.id)!, ...user } as AdapterUser
      users.set(updated.id, updated)
      return updated
    },
    linkAccount: (account: AdapterAccount) => {
      accounts.set(`${account.provider}\n${account.providerAccountId}`, account.userId)
      return account
    },
    createVerificationToken: (token) => {
      tokens.set(tokenKey(token.identifier, token.token), token)
      return token
    },
    useVerificationToken: ({ identifier, token }) => {
      const key = tokenKey(identifier, token)
      const found = tokens.get(key) ?? null
      tokens.delete(key)
      return found
    },
  }
}
