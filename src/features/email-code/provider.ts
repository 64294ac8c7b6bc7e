/**
 * The sign-in code provider at init: defaults applied, `AUTH_EMAIL_SERVER` / `AUTH_EMAIL_FROM`
 * read, options checked with errors that name what to change, the result frozen. Loads nothing of
 * the sending code.
 */
import type { ConfiguredProvider } from '../../config/types.js'
import { InvalidConfigurationError } from '../../errors.js'
import { normalizeEmailAddress } from '../../mail/normalize.js'
import type { EmailCodeConfig, SendCodeParams } from '../../providers/email-code.js'
import type { Awaitable } from '../../types.js'

const TEN_MINUTES = 10 * 60
// A code is typed from another app's screen: long enough for that, short enough that a guessed one is stale.
const MAX_AGE_LIMIT = 60 * 60

/** The adapter methods the code sign-in calls. */
export const EMAIL_CODE_ADAPTER_METHODS = ['createVerificationToken', 'useVerificationToken', 'getUserByEmail', 'createUser', 'updateUser'] as const

/** A sign-in code provider as Portcullis uses it. */
export interface EmailCodeProvider extends ConfiguredProvider {
  readonly type: 'email'
  /** Seconds a code works. */
  readonly maxAge: number
  readonly normalizeIdentifier: (identifier: string) => string
  /** Your `sendCode`, or undefined to send through `server` and `from`. */
  readonly sendCode: ((params: SendCodeParams) => Awaitable<void>) | undefined
  /**
   * The SMTP route when there is no `sendCode`. Not `server`/`from` at the top: the password provider
   * borrows those of a Nodemailer provider, and this is none.
   */
  readonly mail: { readonly server: unknown; readonly from: string } | undefined
  /** The marker, as given. */
  readonly emailCode: object
}

/**
 * Resolves one sign-in code provider.
 * @throws InvalidConfigurationError naming the option (or variable) to fix.
 */
export function resolveEmailCodeProvider(provider: EmailCodeConfig, env: Readonly<Record<string, string | undefined>>, production: boolean): EmailCodeProvider {
  const where = `E-mail code provider "${provider.id}"`
  const options = provider.emailCode
  const maxAge = options.maxAge ?? TEN_MINUTES
  if (typeof maxAge !== 'number' || !Number.isFinite(maxAge) || maxAge <= 0 || maxAge > MAX_AGE_LIMIT) {
    throw new InvalidConfigurationError(`${where}: maxAge must be a number of seconds above 0 and at most ${MAX_AGE_LIMIT} (default ${TEN_MINUTES}, 10 minutes); got ${String(maxAge)}.`)
  }
  for (const option of ['sendCode', 'normalizeIdentifier'] as const) {
    if (options[option] !== undefined && typeof options[option] !== 'function') throw new InvalidConfigurationError(`${where}: ${option} must be a function.`)
  }
  const mail = options.sendCode ? undefined : Object.freeze(mailRoute(options, env, production, where))
  return Object.freeze({
    id: provider.id,
    name: typeof provider.name === 'string' && provider.name ? provider.name : 'Email code',
    type: 'email',
    maxAge,
    normalizeIdentifier: options.normalizeIdentifier ?? normalizeEmailAddress,
    sendCode: options.sendCode,
    mail,
    emailCode: provider.emailCode,
  })
}

/** `server` and `from`, from the options or the environment. */
function mailRoute(options: EmailCodeConfig['emailCode'], env: Readonly<Record<string, string | undefined>>, production: boolean, where: string): { server: unknown; from: string } {
  const server = options.server ?? (env.AUTH_EMAIL_SERVER || undefined)
  const from = options.from ?? (env.AUTH_EMAIL_FROM || (server === 'console' ? 'no-reply@localhost' : undefined))
  if (server === undefined || server === '') {
    throw new InvalidConfigurationError(`${where} has no way to send its mail: set AUTH_EMAIL_SERVER (e.g. smtps://user:password@smtp.example.com:465), pass server, or pass sendCode.`)
  }
  if (typeof server !== 'string' && typeof server !== 'object') {
    throw new InvalidConfigurationError(`${where}: server must be an SMTP URL, nodemailer transport options, or 'console'; got ${typeof server}.`)
  }
  if (server === 'console' && production) {
    throw new InvalidConfigurationError(`${where}: server 'console' only prints codes, for development; with NODE_ENV=production set AUTH_EMAIL_SERVER (or server) to an SMTP server.`)
  }
  if (typeof from !== 'string' || from.trim() === '') {
    throw new InvalidConfigurationError(`${where} has no sender: set AUTH_EMAIL_FROM (e.g. "Example <no-reply@example.com>") or pass from.`)
  }
  return { server, from }
}
