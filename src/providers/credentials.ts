/**
 * Sign-in with whatever the user types into a form: username and password, a one-time code, an
 * API key. Your `authorize` decides; Portcullis handles the form, CSRF, the session and the errors.
 *
 * Works with JWT sessions and, unlike Auth.js, with database sessions too.
 */
import type { AuthIncomingRequest, User } from '../types.js'

/** One field of the built-in sign-in form. */
export interface CredentialInput {
  label?: string | undefined
  /** The HTML input type, e.g. `text`, `password`, `email`. Default `text`. */
  type?: string | undefined
  placeholder?: string | undefined
  required?: boolean | undefined
  [attribute: string]: unknown
}

/**
 * Your check of the submitted fields: every field of the posted form but Portcullis's own (`csrfToken`,
 * `callbackUrl`, `redirect`, `redirectTo`). Return the user, or `null` (or throw `CredentialsSignin`) to refuse.
 */
export type Authorize<Fields extends string = string> = (
  credentials: Partial<Record<Fields, unknown>>,
  request: AuthIncomingRequest,
) => User | null | Promise<User | null>

/** Options of `Credentials(...)`. */
export interface CredentialsOptions<Fields extends string = string> {
  /** Provider id, used in URLs (`/callback/<id>`). Default `credentials`. */
  id?: string | undefined
  /** Shown on the sign-in button. Default `Credentials`. */
  name?: string | undefined
  /** The form fields: their keys are the names `authorize` receives. */
  credentials?: Record<Fields, CredentialInput> | undefined
  authorize?: Authorize<Fields> | undefined
}

/** A configured credentials provider. */
export interface CredentialsProvider<Fields extends string = string> {
  readonly id: string
  readonly name: string
  readonly type: 'credentials'
  readonly credentials: Readonly<Record<Fields, CredentialInput>>
  readonly authorize: Authorize<Fields> | undefined
}

/**
 * Creates a credentials provider.
 *
 * @param options `authorize` plus the form fields.
 * @example
 * ```ts
 * Credentials({
 *   credentials: { email: { label: 'E-mail', type: 'email' }, password: { label: 'Password', type: 'password' } },
 *   authorize: async ({ email, password }) => (await users.check(String(email), String(password))) ?? null,
 * })
 * ```
 */
export default function Credentials<Fields extends string = string>(options: CredentialsOptions<Fields> = {}): CredentialsProvider<Fields> {
  return Object.freeze({
    id: options.id ?? 'credentials',
    name: options.name ?? 'Credentials',
    type: 'credentials' as const,
    credentials: Object.freeze({ ...(options.credentials ?? ({} as Record<Fields, CredentialInput>)) }),
    authorize: options.authorize,
  })
}

export { CredentialsSignin } from '../errors.js'
