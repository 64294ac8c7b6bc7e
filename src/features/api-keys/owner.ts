/** The owner of a user's own keys. */
import type { ApiKeyOwner } from './types.js'

/** The owner of the keys of user `userId`. */
export function userOwner(userId: string): ApiKeyOwner {
  return { type: 'user', id: userId }
}
