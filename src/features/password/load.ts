/** The password operations (accounts.ts), imported on first use with the hashing and the mail code. */
let accounts: Promise<typeof import('./accounts.js')> | undefined

/** The password operations, imported on first use with the hashing and the mail code. */
export function loadAccounts(): Promise<typeof import('./accounts.js')> {
  return (accounts ??= import('./accounts.js'))
}
