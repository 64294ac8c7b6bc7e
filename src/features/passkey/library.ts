/**
 * `@simplewebauthn/server`, imported on the first passkey request and kept: an optional peer
 * dependency, never loaded to read sessions (init checked that it is installed).
 */
let library: Promise<typeof import('@simplewebauthn/server')> | undefined

/** The library's module. */
export function loadSimpleWebAuthn(): Promise<typeof import('@simplewebauthn/server')> {
  return (library ??= import('@simplewebauthn/server'))
}
