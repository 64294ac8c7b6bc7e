/**
 * The demo account both sides know (`ada` / `lovelace`), as a users service shared by the front end
 * and the API would hold it: the password only as a salted scrypt hash.
 */
import { scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>

/** The profile a sign-in puts in the session token. (A type, not an interface: it must fit both libraries' open `User` types.) */
export type DemoUser = {
  id: string
  name: string
  email: string
}

const ADA = {
  user: { id: 'user-ada', name: 'Ada Lovelace', email: 'ada@example.com' },
  username: 'ada',
  // crypto.scryptSync('lovelace', salt, 64), scrypt defaults (N=16384, r=8, p=1).
  salt: Buffer.from('J9_23oYHWgeHXNd2Sa2kMg', 'base64url'),
  hash: Buffer.from('xgaGwbvrbxvj2PNk8lBVPcdbuj6aTK_lnXD6gdWQCszRwjeZPe_cXACjdNVOUs0z-oywKPcLIFZVon2dS8zymA', 'base64url'),
}

/** The user whose username and password match, or null. The hash is computed for any name, so timing tells nothing. */
export async function verifyPassword(username: unknown, password: unknown): Promise<DemoUser | null> {
  if (typeof username !== 'string' || typeof password !== 'string') return null
  const key = await scryptAsync(password, ADA.salt, 64)
  return timingSafeEqual(key, ADA.hash) && username === ADA.username ? { ...ADA.user } : null
}
