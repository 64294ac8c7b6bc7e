/**
 * The demo accounts of the authorization server and MCP examples: `ada` / `lovelace` and `grace` /
 * `hopper`. Portcullis's users table holds the profiles; the passwords stay here, as salted scrypt
 * hashes, checked by a Credentials provider's `authorize`.
 */
import { scrypt, timingSafeEqual, type BinaryLike } from 'node:crypto'

/** A demo account. */
export interface DemoUser {
  username: string
  name: string
  email: string
  /** base64url scrypt salt and 64-byte derived key (scrypt defaults N=16384, r=8, p=1). */
  password: { salt: string; hash: string }
}

export const demoUsers: readonly DemoUser[] = [
  // crypto.scryptSync('lovelace', salt, 64)
  { username: 'ada', name: 'Ada Lovelace', email: 'ada@example.com', password: { salt: 'J9_23oYHWgeHXNd2Sa2kMg', hash: 'xgaGwbvrbxvj2PNk8lBVPcdbuj6aTK_lnXD6gdWQCszRwjeZPe_cXACjdNVOUs0z-oywKPcLIFZVon2dS8zymA' } },
  // crypto.scryptSync('hopper', salt, 64)
  { username: 'grace', name: 'Grace Hopper', email: 'grace@example.com', password: { salt: 'rcRcRhQl65fIOz0mbWEXKA', hash: 'qN58B8dBdoFBIbYUCIkGtjbpCJKbVxVypwGhMgJUFD0g4qdWjCOlubJLqorplyfz3lI2sb-_z3_pU-2v5JCQIQ' } },
]

function scryptKey(password: BinaryLike, salt: BinaryLike): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, 64, (error, key) => (error ? reject(error) : resolve(key))))
}

/** The user whose password matches, or null. An unknown name is checked against a real hash too, so timing tells nothing. */
export async function verifyDemoUser(username: string, password: string): Promise<DemoUser | null> {
  const user = demoUsers.find((candidate) => candidate.username === username)
  const stored = (user ?? demoUsers[0]!).password
  const actual = await scryptKey(password, Buffer.from(stored.salt, 'base64url'))
  return user && timingSafeEqual(actual, Buffer.from(stored.hash, 'base64url')) ? user : null
}
