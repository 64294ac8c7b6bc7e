/**
 * The credentials wing's errors, re-exported by the package's entry point; their types join `ErrorTypes`
 * (declaration merging), so src/errors.ts names no feature.
 */
import { AuthError } from '../../errors.js'

declare module '../../errors.js' {
  interface ErrorTypes {
    MissingAuthorize: true
  }
}

/** A credentials provider without an `authorize` function. */
export class MissingAuthorizeError extends AuthError {
  constructor(providerId: string) {
    super('MissingAuthorize', `The credentials provider "${providerId}" has no authorize(credentials, req) function.`)
  }
}
