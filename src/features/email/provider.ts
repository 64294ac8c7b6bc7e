/**
 * E-mail providers at init: defaults applied, `AUTH_EMAIL_SERVER` / `AUTH_EMAIL_FROM` read,
 * options validated with errors that name the option or variable to set, the result frozen. Loads
 * nothing of the sending code (that is imported on the first e-mail).
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { EmailConfig, EmailProvider } from '../../providers/email.js'
import { sendVerificationRequest as nodemailerSend } from '../../providers/nodemailer.js'
import { normalizeEmailAddress } from '../../mail/normalize.js'
import { generateVerificationToken } from '../../mail/token.js'

const ONE_DAY = 24 * 60 * 60

/** The adapter methods e-mail sign-in calls. */
export const EMAIL_ADAPTER_METHODS = ['createVerificationToken', 'useVerificationToken', 'getUserByEmail', 'createUser', 'updateUser'] as const

/**
 * Resolves one e-mail provider.
 *
 * @param env For `AUTH_EMAIL_SERVER` and `AUTH_EMAIL_FROM`.
 * @param production `NODE_ENV=production`: the console transport is refused.
 * @throws InvalidConfigurationError naming the option (or variable) to fix.
 */
export function resolveEmailProvider(provider: EmailConfig, env: Readonly<Record<string, string | undefined>>, production: boolean): EmailProvider {
  const where = `E-mail provider "${provider.id}"`
  const maxAge = provider.maxAge ?? ONE_DAY
  if (typeof maxAge !== 'number' || !Number.isFinite(maxAge) || maxAge <= 0) {
    throw new InvalidConfigurationError(`${where}: maxAge must be a number of seconds above 0 (default 86400, 24 hours); got ${String(maxAge)}.`)
  }
  for (const option of ['sendVerificationRequest', 'generateVerificationToken', 'normalizeIdentifier'] as const) {
    const value = provider[option]
    if (value !== undefined && typeof value !== 'function') throw new InvalidConfigurationError(`${where}: ${option} must be a function.`)
  }
  if (typeof provider.sendVerificationRequest !== 'function') {
    throw new InvalidConfigurationError(
      `${where} has no sendVerificationRequest: give Email({ sendVerificationRequest }) a function that sends the link, or use Nodemailer({ server, from }) from "portcullis/providers/nodemailer".`,
    )
  }
  const resolved: EmailProvider = {
    ...provider,
    name: typeof provider.name === 'string' && provider.name ? provider.name : 'Email',
    type: 'email',
    maxAge,
    generateVerificationToken: provider.generateVerificationToken ?? generateVerificationToken,
    normalizeIdentifier: provider.normalizeIdentifier ?? normalizeEmailAddress,
    sendVerificationRequest: provider.sendVerificationRequest,
  }
  if (provider.sendVerificationRequest === nodemailerSend) Object.assign(resolved, nodemailerOptions(provider, env, production, where))
  return Object.freeze(resolved)
}

/** `server` and `from` of a Nodemailer provider, from its options or the environment. */
function nodemailerOptions(provider: EmailConfig, env: Readonly<Record<string, string | undefined>>, production: boolean, where: string): { server: unknown; from: string } {
  const server = provider.server ?? (env.AUTH_EMAIL_SERVER || undefined)
  // The console transport sends nothing, so it needs no sender.
  const from = provider.from ?? (env.AUTH_EMAIL_FROM || (server === 'console' ? 'no-reply@localhost' : undefined))
  // `??` has turned a null `server` into the environment's value or undefined.
  if (server === undefined || server === '') {
    throw new InvalidConfigurationError(
      `${where} has no SMTP server: set AUTH_EMAIL_SERVER (e.g. smtps://user:password@smtp.example.com:465) or pass server (a URL or nodemailer transport options); server: 'console' prints links in development.`,
    )
  }
  if (typeof server !== 'string' && typeof server !== 'object') {
    throw new InvalidConfigurationError(`${where}: server must be an SMTP URL, nodemailer transport options, or 'console'; got ${typeof server}.`)
  }
  if (server === 'console' && production) {
    throw new InvalidConfigurationError(
      `${where}: server 'console' only prints sign-in links, for development; with NODE_ENV=production set AUTH_EMAIL_SERVER (or server) to an SMTP server.`,
    )
  }
  if (typeof from !== 'string' || from.trim() === '') {
    throw new InvalidConfigurationError(`${where} has no sender: set AUTH_EMAIL_FROM (e.g. "Example <no-reply@example.com>") or pass from.`)
  }
  return { server, from }
}
