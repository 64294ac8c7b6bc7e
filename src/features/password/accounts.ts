/**
 * What the password provider does, for its routes and the server-side functions: sign in, sign up,
 * verify the address, send the verification link again, ask for a reset, reset, change. Loaded on
 * the first use of one of them, with the hashing and the mail code.
 *
 * No answer tells whether an address has an account: sign-up, "send again" and "forgot password"
 * answer the same way for every address (the owner of a taken address gets a mail instead), spend the
 * same hashing and store a link token either way, and send their mail after answering, so neither
 * the SMTP server's latency nor a failed delivery shows; the `createUser` event of a sign-up is not
 * waited for either, so neither is a slow handler of the app's. Password sign-in verifies against a
 * dummy hash when the user or their password is unknown, so a wrong address costs what a wrong
 * password does.
 */
import { randomBytes } from 'node:crypto'
import { askSignInCallback, finishSignIn } from '../../sign-in/finish.js'
import { claimUnverifiedAccount } from './claim.js'
import { markVerified, storedUserWithEmail } from '../../sign-in/users.js'
import { authUrl, pageUrl, type ActionContext } from '../../actions/context.js'
import { assertTrustedLinkOrigin } from '../../mail/site-url.js'
import type { PasswordAdapter, PasswordProvider, PasswordSettings } from './provider.js'
import { normalizeEmailAddress } from '../../mail/normalize.js'
import { linkBinding } from '../../mail/token.js'
import { CredentialsSignin, EmailSignInError, VerificationError } from '../../errors.js'
import { EmailNotVerifiedError, PasswordPolicyError } from './errors.js'
import { describeError, emitEvent, redactError } from '../../events.js'
import type { AuthResponse } from '../../http/respond.js'
import type { PasswordHashing, PasswordMail } from '../../providers/password.js'
import { limitSignInAttempt } from '../../security/rate-limit.js'
import type { OutgoingCookie } from '../../session/cookies.js'
import { revokeOwnSessions } from '../../session/devices.js'
import type { Account, AdapterUser, SecondFactorProof } from '../../types.js'
import { defaultPasswordHasher, isBcryptHash } from './hash.js'
import { createHashingLimit, type HashingLimit } from './limit.js'
import { issueLink, useLink, type LinkSubject } from './links.js'
import { sendPasswordMail, type MailExtras } from './mail.js'
import { issueSignUpCode, SIGN_UP_CODE_SECONDS, signUpCodeCookie, signUpCodePageUrl, unboundNonce } from './verify-code.js'
import { checkPassword, normalizePassword } from './policy.js'
import { afterFirstFactor } from '../../sign-in/further-factor.js'
import { acceptableUsername, claimUsername, isUsernameSignIn, signInKey, type UsernameAdapter, type Username } from './usernames.js'
import { logFields } from '../../logger.js'

type Hasher = Required<PasswordHashing>

// One hasher (and one dummy hash) per provider's settings, and one cap on concurrent hashes.
const hashers = new WeakMap<PasswordSettings, Hasher>()
const dummies = new WeakMap<Hasher, Promise<string>>()
const limits = new WeakMap<PasswordSettings, HashingLimit>()

function hasherOf(provider: PasswordProvider): Hasher {
  const settings = provider.password
  let hasher = hashers.get(settings)
  if (!hasher) {
    const own = settings.hashing
    hasher = own ? { hash: own.hash, verify: own.verify, needsRehash: own.needsRehash ?? (() => false) } : defaultPasswordHasher()
    hashers.set(settings, hasher)
  }
  return hasher
}

/**
 * Runs `task` (the hashing of one request, with what it looks up) under the provider's cap on
 * concurrent hashes (limit.ts).
 * @throws PasswordBusyError when the cap and its queue are full, before `task` starts.
 */
function limited<T>(provider: PasswordProvider, task: () => Promise<T>): Promise<T> {
  const settings = provider.password
  let limit = limits.get(settings)
  if (!limit) {
    limit = createHashingLimit(settings.hashingLimit)
    limits.set(settings, limit)
  }
  return limit.run(task)
}

/** A hash of a random password, made once: what an unknown user's sign-in is checked against. */
function dummyHash(hasher: Hasher): Promise<string> {
  let dummy = dummies.get(hasher)
  if (!dummy) {
    dummy = hasher.hash(randomBytes(18).toString('base64'))
    dummies.set(hasher, dummy)
    // A hasher that failed once (out of memory) is asked again next time, not failed for good.
    void dummy.catch(() => dummies.delete(hasher))
  }
  return dummy
}

/** Who a sign-in names: an address, or a username's skeleton. */
type SignInName = { email: string } | { key: string }

/**
 * The user of this address (or username) and their password hash, or nulls; verified against the dummy hash when
 * either is missing, so every answer costs one verification.
 *
 * A stored hash of another algorithm or parameters (an imported bcrypt hash, scrypt from before the
 * parameters were raised) could answer several times faster than an unknown address: it is verified
 * alongside the dummy hash, so the answer takes as long as the slower of the two. Both overlap, not
 * add up: scrypt and Argon2id run in libuv's thread pool, bcryptjs on this thread in slices between its turns.
 * One dearer than the dummy (scrypt or bcrypt under the default Argon2id) still answers slower, until
 * its user's next sign-in replaces it (docs/passwords.md, "Sign-in").
 *
 * The whole check holds one place of the cap on concurrent hashes, taken before the user is looked
 * up: a refusal for want of a place (503) is the same for every address.
 * @throws PasswordBusyError
 */
function checkCredentials(ctx: ActionContext, provider: PasswordProvider, who: SignInName, password: string, raw: unknown): Promise<{ user: AdapterUser; stored: string } | null> {
  return limited(provider, () => checkCredentialsNow(ctx, provider, who, password, raw))
}

async function checkCredentialsNow(ctx: ActionContext, provider: PasswordProvider, who: SignInName, password: string, raw: unknown): Promise<{ user: AdapterUser; stored: string } | null> {
  const adapter = ctx.config.adapter as PasswordAdapter
  const hasher = hasherOf(provider)
  const user = 'email' in who ? await storedUserWithEmail(adapter, who.email) : await (adapter as UsernameAdapter).getUserByUsername(who.key)
  const stored = user ? await adapter.getUserPassword(user.id) : null
  if (!user || stored === null) {
    await hasher.verify(password, await dummyHash(hasher))
    return null
  }
  const verified = () => passwordMatches(hasher, password, raw, stored)
  let beside: Promise<unknown> | undefined
  if (hasher.needsRehash(stored)) {
    // Its outcome is of no interest, its failure neither: the real verification's answer stands.
    const dummy = await dummyHash(hasher).catch(() => undefined)
    // Started first: bcryptjs computes its first 100 ms before its compare() returns, which would
    // hold back the dummy's start by as much; scrypt hands its work to the pool before it returns.
    if (dummy !== undefined) beside = hasher.verify(password, dummy).catch(() => undefined)
  }
  const [right] = await Promise.all([verified(), beside])
  return right ? { user, stored } : null
}

/**
 * Whether `password` (the NFKC form) is the one `stored` was made from. An imported bcrypt hash was
 * made from the password as typed (`raw`), which NFKC may have changed: it is tried that way too.
 */
async function passwordMatches(hasher: Hasher, password: string, raw: unknown, stored: string): Promise<boolean> {
  return (await hasher.verify(password, stored)) || (isBcryptHash(stored) && typeof raw === 'string' && raw !== password && (await hasher.verify(raw, stored)))
}

/** The submitted address, normalised, or undefined when it is no address. */
function addressOf(value: unknown): string | undefined {
  try {
    return normalizeEmailAddress(value)
  } catch {
    return undefined
  }
}

/** @throws EmailSignInError when the address is refused. */
function requireAddress(value: unknown): string {
  try {
    return normalizeEmailAddress(value)
  } catch (error) {
    throw new EmailSignInError(`The e-mail address was refused: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/**
 * The new password, normalised and checked against the policy.
 * @throws PasswordPolicyError
 */
export async function acceptablePassword(provider: PasswordProvider, value: unknown): Promise<string> {
  const { minLength, maxLength, isBreached } = provider.password
  const password = normalizePassword(value, maxLength)
  if (password === null) {
    if (typeof value !== 'string') throw new PasswordPolicyError('too_short', 'No password was given.')
    throw new PasswordPolicyError('too_long', `The password is longer than ${maxLength} characters.`)
  }
  const problem = await checkPassword(password, { minLength, maxLength, isBreached })
  if (problem) throw new PasswordPolicyError(problem, POLICY_MESSAGES[problem](provider.password))
  return password
}

const POLICY_MESSAGES = {
  too_short: ({ minLength }: PasswordSettings) => `The password must have at least ${minLength} characters.`,
  too_long: ({ maxLength }: PasswordSettings) => `The password must have at most ${maxLength} characters.`,
  common: () => 'This password is one of the most common ones, which are tried first: choose another.',
  breached: () => 'This password has appeared in a data breach: choose another.',
}

/** The account of a password sign-in. */
function passwordAccount(provider: PasswordProvider, user: AdapterUser): Account {
  return { provider: provider.id, type: 'credentials', providerAccountId: user.id, userId: user.id }
}

/**
 * POST /callback/password, and `signIn('password', { email, password })`.
 * @throws CredentialsSignin (wrong address or password, the same for both), EmailNotVerifiedError,
 *   RateLimitedError, PasswordBusyError (503), AccessDeniedError, AdapterError
 */
export async function signInWithPassword(ctx: ActionContext, provider: PasswordProvider, fields: Record<string, unknown>): Promise<AuthResponse> {
  const who = signInNameOf(provider, fields.email)
  // Counted before any check, against the address (or the username's skeleton, so that lookalikes
  // share one count), or against what was typed when it is neither.
  const attempt = await limitSignInAttempt(ctx, provider, who ? ('email' in who ? who.email : `username:${who.key}`) : typeof fields.email === 'string' ? fields.email : undefined)
  const password = normalizePassword(fields.password, provider.password.maxLength)
  // Malformed input says nothing about anyone's account: refused without hashing (a 1 MB password too).
  if (who === undefined || password === null) throw new CredentialsSignin('The e-mail address (or username) or the password is malformed.')
  const checked = await checkCredentials(ctx, provider, who, password, fields.password)
  if (!checked) throw new CredentialsSignin()
  await attempt.succeeded()
  const { user, stored } = checked
  await rehashIfNeeded(ctx, provider, user, stored, password)
  if (provider.password.requireEmailVerification && !user.emailVerified) throw new EmailNotVerifiedError()
  // What the sign-in had in hand for what follows: the stored address (a username's user has one too).
  const email = 'email' in who ? who.email : (user.email ?? '')
  // An enrolled user gives a second factor first (features/two-factor/pending.ts).
  const pending = await afterFirstFactor(ctx, user.id, { kind: 'password', pid: provider.id, email })
  return pending ?? completePasswordSignIn(ctx, provider, user, email)
}

/** The typed sign-in name: an address, or (usernames on, no `@`) a username; undefined when malformed. */
function signInNameOf(provider: PasswordProvider, value: unknown): SignInName | undefined {
  if (isUsernameSignIn(provider, value)) {
    const key = signInKey(value)
    return key === undefined ? undefined : { key }
  }
  const email = addressOf(value)
  return email === undefined ? undefined : { email }
}

/**
 * A password sign-in once its factors are checked: the `signIn` callback, the session, the redirect.
 * Also where the second page resumes it.
 */
export async function completePasswordSignIn(ctx: ActionContext, provider: PasswordProvider, user: AdapterUser, email: string, twoFactor?: SecondFactorProof): Promise<AuthResponse> {
  const account = passwordAccount(provider, user)
  const elsewhere = await askSignInCallback(ctx, { user, account, credentials: { email }, ...(twoFactor && { twoFactor }) })
  return elsewhere ?? finishSignIn(ctx, { user, account, isNewUser: false })
}

/** A hash made with older parameters (or imported from bcrypt) is replaced while the password is at hand. */
async function rehashIfNeeded(ctx: ActionContext, provider: PasswordProvider, user: AdapterUser, stored: string, password: string): Promise<void> {
  const hasher = hasherOf(provider)
  if (!hasher.needsRehash(stored)) return
  try {
    // Under the cap too; refused for want of a place, it waits for the next sign-in.
    await (ctx.config.adapter as PasswordAdapter).setUserPassword(user.id, await limited(provider, () => hasher.hash(password)))
  } catch (error) {
    // The sign-in stands; the next one tries again.
    ctx.config.logger.warn('PasswordRehashFailed', `The password hash of user ${user.id} could not be upgraded: ${describeError(redactError(error, [password]))}`, logFields({ userId: user.id }))
  }
}

/** What a sign-up is given. */
export interface SignUpInput {
  email: unknown
  password: unknown
  name?: unknown
  /** The username asked for (the `usernames` option); ignored when it is off. */
  username?: unknown
  /** Where the verification link leads after signing in (through the `redirect` callback already). */
  callbackUrl: string
}

/**
 * POST /signup and `signUp()`: a new user with the password and a verification link, or, for a
 * taken address, a mail to its owner; the same answer either way (the "check your e-mail" page).
 * A username another user has is answered as a free one too: the user is made without it, and the
 * verification mail says so.
 * @throws EmailSignInError (not an address), PasswordPolicyError, UsernameError (the rules, never
 *   `taken`), RateLimitedError, PasswordBusyError, AdapterError
 */
export async function signUp(ctx: ActionContext, provider: PasswordProvider, input: SignUpInput): Promise<AuthResponse> {
  assertTrustedLinkOrigin(ctx)
  const email = requireAddress(input.email)
  await limitSignInAttempt(ctx, { id: `${provider.id}-signup`, type: 'email' }, email)
  const password = await acceptablePassword(provider, input.password)
  const chosen = chosenUsername(provider, input.username)
  // Hashed whether or not the address is taken: the answer takes as long either way.
  const hasher = hasherOf(provider)
  const hash = await limited(provider, () => hasher.hash(password))
  const adapter = ctx.config.adapter as PasswordAdapter
  const name = typeof input.name === 'string' && input.name.trim() ? input.name.trim().slice(0, 255) : null
  const existing = await storedUserWithEmail(adapter, email)
  const created = existing ? null : await createPasswordUser(ctx, adapter, email, name, hash)
  if (created) {
    // A taken username changes nothing in the answer: the account is made without it, and its mail says so.
    const taken = chosen !== null && !(await claimUsername(ctx, created, chosen))
    const about = taken ? { usernameTaken: chosen.username, usernameUrl: authUrl(ctx, '/username') } : {}
    return mailVerification(ctx, provider, email, input.callbackUrl, about)
  }
  // Taken: its owner gets a sign-in link, and one to set a new password (as "forgot password" sends).
  const owner = existing ?? (await storedUserWithEmail(adapter, email))
  const { token, expires } = await issueLink(ctx, await resetSubject(adapter, owner), email, provider.password.resetMaxAge)
  deliver(ctx, provider, 'address-taken', email, pageUrl(ctx, 'signIn', '/signin'), expires, { resetUrl: linkUrl(ctx, '/reset-password', token, email) })
  // No code is stored for a taken address: one guessed would sign its owner's account in.
  return checkYourMail(ctx, provider, 'signup', randomBytes(32).toString('hex'), { email, callbackUrl: input.callbackUrl, nonce: unboundNonce() })
}

/**
 * Mails `email` what verifies it (`verifyBy`: the link, the code, or both) and answers with the page
 * that says so: the core's "check your e-mail" page, or with codes the page that asks for it.
 */
async function mailVerification(ctx: ActionContext, provider: PasswordProvider, email: string, callbackUrl: string, about: MailExtras = {}): Promise<AuthResponse> {
  const by = provider.password.verifyBy
  const link = by === 'code' ? undefined : await issueLink(ctx, { purpose: 'verify-email' }, email, provider.password.verificationMaxAge)
  const code = by === 'link' ? undefined : await issueSignUpCode(ctx, email)
  const url = link ? linkUrl(ctx, '/verify-email', link.token, email, callbackUrl) : signUpCodePageUrl(ctx, email, callbackUrl)
  const mailed = code && { code: code.code, minutes: SIGN_UP_CODE_SECONDS / 60, withLink: link !== undefined }
  deliver(ctx, provider, 'verify-email', email, url, link?.expires ?? code?.expires, { ...about, code: mailed })
  return checkYourMail(ctx, provider, 'signup', link?.token ?? randomBytes(32).toString('hex'), { email, callbackUrl, nonce: code?.nonce ?? unboundNonce() })
}

/**
 * The username a sign-up asked for, checked against the rules (not against other users: that is
 * the claim's, after the user is made); null when usernames are off or none was given.
 * @throws UsernameError
 */
function chosenUsername(provider: PasswordProvider, value: unknown): Username | null {
  const settings = provider.password.usernames
  return settings ? acceptableUsername(settings, value) : null
}

/** The new user with the password; null when the address was taken meanwhile (a concurrent sign-up). */
async function createPasswordUser(ctx: ActionContext, adapter: PasswordAdapter, email: string, name: string | null, hash: string): Promise<AdapterUser | null> {
  let user: AdapterUser
  try {
    user = await adapter.createUser({ email, name, emailVerified: null })
  } catch (error) {
    if (await storedUserWithEmail(adapter, email)) return null
    throw error
  }
  await adapter.setUserPassword(user.id, hash)
  // Not awaited, as the mail is not: an app's handler (a welcome mail, a CRM call) taking its time
  // would make a free address answer slower than a taken one. emitEvent logs a handler's failure.
  void emitEvent(ctx.config, 'createUser', { user })
  return user
}

/** A reset link's subject: bound to the password stored now, which it stops matching once that changes. */
async function resetSubject(adapter: PasswordAdapter, user: AdapterUser | null): Promise<LinkSubject> {
  return { purpose: 'reset-password', storedPassword: user ? await adapter.getUserPassword(user.id) : null }
}

function linkUrl(ctx: ActionContext, path: string, token: string, email: string, callbackUrl?: string): string {
  const params = new URLSearchParams({ token, email })
  if (callbackUrl !== undefined) params.set('callbackUrl', callbackUrl)
  return `${authUrl(ctx, path)}?${params}`
}

/**
 * The "check your e-mail" page, with the cookie that lets the verification link sign in at once in
 * this browser (a random one when there is no link: the answer's headers are the same).
 */
function checkYourMail(ctx: ActionContext, provider: PasswordProvider, type: 'signup' | 'reset', token: string, code?: { email: string; callbackUrl: string; nonce: string }): AuthResponse {
  const binding = ctx.cookieSet.cookies.emailLink
  const cookies: OutgoingCookie[] =
    type === 'signup' ? [{ name: binding.name, value: linkBinding(token, ctx.config.secrets[0]!), options: { ...binding.options, maxAge: provider.password.verificationMaxAge } }] : []
  if (type === 'signup' && code && provider.password.verifyBy !== 'link') {
    // The page that asks for the code, and the cookie binding it to this browser (bound to nothing
    // when no code was stored: the answer is the same).
    return { redirect: signUpCodePageUrl(ctx, code.email, code.callbackUrl), cookies: [...cookies, signUpCodeCookie(ctx, code.nonce)] }
  }
  return { redirect: pageUrl(ctx, 'verifyRequest', '/verify-request', { provider: provider.id, type }), cookies }
}

/** Sends after answering: the SMTP server's latency must not tell a taken address from a new one. */
function deliver(ctx: ActionContext, provider: PasswordProvider, kind: PasswordMail['kind'], to: string, url: string, expires: Date | undefined, extra: MailExtras = {}): void {
  void sendPasswordMail(ctx, provider, kind, to, url, expires, extra).catch((error: unknown) => {
    ctx.config.logger.error('PasswordMailError', `The ${kind} mail of the "${provider.id}" provider could not be sent: ${describeError(redactError(error, [url, to, ...(extra.resetUrl ? [extra.resetUrl] : [])]))}`)
  })
}

/**
 * POST /verify-email/resend: a new verification link for an unverified password account; the same
 * answer for every address.
 * @throws EmailSignInError (not an address), RateLimitedError, AdapterError
 */
export async function resendVerification(ctx: ActionContext, provider: PasswordProvider, input: { email: unknown; callbackUrl: string }): Promise<AuthResponse> {
  assertTrustedLinkOrigin(ctx)
  const email = requireAddress(input.email)
  await limitSignInAttempt(ctx, { id: `${provider.id}-signup`, type: 'email' }, email)
  const adapter = ctx.config.adapter as PasswordAdapter
  const user = await storedUserWithEmail(adapter, email)
  const waiting = user !== null && !user.emailVerified && (await adapter.getUserPassword(user.id)) !== null
  if (waiting && provider.password.verifyBy !== 'link') return mailVerification(ctx, provider, email, input.callbackUrl)
  // A token is stored either way (one write, whoever asks); only a waiting account's is mailed. No
  // code is stored for another address: one guessed would sign its account in.
  const { token, expires } = await issueLink(ctx, { purpose: 'verify-email' }, email, provider.password.verificationMaxAge)
  if (waiting) deliver(ctx, provider, 'verify-email', email, linkUrl(ctx, '/verify-email', token, email, input.callbackUrl), expires)
  return checkYourMail(ctx, provider, 'signup', waiting ? token : randomBytes(32).toString('hex'), { email, callbackUrl: input.callbackUrl, nonce: unboundNonce() })
}

/**
 * Uses a verification link: the address is marked verified and the user signed in.
 * @throws VerificationError (unknown, used, expired, another address's), AccessDeniedError, AdapterError
 */
export async function verifyEmail(ctx: ActionContext, provider: PasswordProvider, token: string, identifier: string): Promise<AuthResponse> {
  if (!(await useLink(ctx, { purpose: 'verify-email' }, identifier, token))) throw new VerificationError('The verification link is unknown, already used, expired, or for another address.')
  return signInVerified(ctx, provider, identifier)
}

/**
 * The address proven (by the link, or the code: verify-code.ts): marked verified, and the user
 * signed in (after the second factor of an enrolled user).
 * @throws VerificationError (no account any more), AccessDeniedError, AdapterError
 */
export async function signInVerified(ctx: ActionContext, provider: PasswordProvider, identifier: string): Promise<AuthResponse> {
  const adapter = ctx.config.adapter as PasswordAdapter
  const found = await storedUserWithEmail(adapter, identifier)
  if (!found) throw new VerificationError('The verification link is for an address that has no account (any more).')
  const user = found.emailVerified ? found : await markVerified(ctx, adapter, found, new Date(Date.now()))
  // The link proves the mailbox, not the second factor: an enrolled user still gives a code.
  const pending = await afterFirstFactor(ctx, user.id, { kind: 'password', pid: provider.id, email: identifier })
  if (pending) return pending
  const account = passwordAccount(provider, user)
  const elsewhere = await askSignInCallback(ctx, { user, account })
  if (elsewhere) return elsewhere
  const response = await finishSignIn(ctx, { user, account, isNewUser: false })
  return offerPasskey(ctx, user, response)
}

/**
 * The end of a sign-up, when passkeys are configured and the user has none: the passkeys page first,
 * which offers to add one and goes on to where the sign-in was headed ("Not now" too).
 */
async function offerPasskey(ctx: ActionContext, user: AdapterUser, response: AuthResponse): Promise<AuthResponse> {
  const adapter = ctx.config.adapter as PasswordAdapter
  if (!response.redirect || !ctx.config.providers.some((candidate) => candidate.type === 'webauthn') || typeof adapter.listAuthenticatorsByUserId !== 'function') return response
  if ((await adapter.listAuthenticatorsByUserId(user.id)).length > 0) return response
  return { ...response, redirect: `${authUrl(ctx, '/passkeys')}?${new URLSearchParams({ callbackUrl: response.redirect })}` }
}

/**
 * POST /forgot-password: a reset link for the address when it has an account; the same answer (and
 * one stored token) for every address.
 * @throws EmailSignInError (not an address), RateLimitedError, AdapterError
 */
export async function requestPasswordReset(ctx: ActionContext, provider: PasswordProvider, input: { email: unknown }): Promise<AuthResponse> {
  assertTrustedLinkOrigin(ctx)
  const email = requireAddress(input.email)
  await limitSignInAttempt(ctx, { id: `${provider.id}-reset`, type: 'email' }, email)
  const adapter = ctx.config.adapter as PasswordAdapter
  const user = await storedUserWithEmail(adapter, email)
  // An unknown address stores a token too (bound to "no password"), as every address does.
  const { token, expires } = await issueLink(ctx, await resetSubject(adapter, user), email, provider.password.resetMaxAge)
  if (user) deliver(ctx, provider, 'reset-password', email, linkUrl(ctx, '/reset-password', token, email), expires)
  return checkYourMail(ctx, provider, 'reset', token)
}

/**
 * A reset link mailed to `user` at an administrator's request (the admin wing's
 * `sendPasswordResetLink`): the same link as "forgot password" sends, bound to the password stored
 * now, without the per-address rate limit (the caller is an administrator). Awaited: a failed
 * delivery is logged (the link and address redacted) and answered with null.
 * @returns When the link expires; null when the mail could not be sent.
 * @throws InvalidConfigurationError (untrusted link origin), EmailSignInError (not an address), AdapterError
 */
export async function mailResetLink(ctx: ActionContext, provider: PasswordProvider, user: AdapterUser, email: string): Promise<Date | null> {
  assertTrustedLinkOrigin(ctx)
  const address = requireAddress(email)
  const { token, expires } = await issueLink(ctx, await resetSubject(ctx.config.adapter as PasswordAdapter, user), address, provider.password.resetMaxAge)
  const url = linkUrl(ctx, '/reset-password', token, address)
  try {
    await sendPasswordMail(ctx, provider, 'reset-password', address, url, expires)
  } catch (error) {
    ctx.config.logger.error('PasswordMailError', `The reset-password mail of the "${provider.id}" provider could not be sent: ${describeError(redactError(error, [url, address]))}`)
    return null
  }
  return expires
}

/**
 * POST /reset-password: the link's token used (once; of concurrent resets one wins), the new
 * password stored, the address marked verified (the link proved it), every session of the user
 * ended, and this browser signed in.
 * @throws PasswordPolicyError and PasswordBusyError (before the token is used), VerificationError, AccessDeniedError, AdapterError
 */
export async function resetPassword(ctx: ActionContext, provider: PasswordProvider, input: { token: string; email: string; password: unknown }): Promise<AuthResponse> {
  const password = await acceptablePassword(provider, input.password)
  const email = addressOf(input.email)
  const adapter = ctx.config.adapter as PasswordAdapter
  const found = email === undefined ? null : await storedUserWithEmail(adapter, email)
  const hasher = hasherOf(provider)
  // The place under the cap on hashes is taken before the token is used: refused for want of one
  // (503), the link still works.
  const reset = await limited(provider, async () => {
    // Checked against the password stored now: a link mailed before the last reset or change is not found.
    if (email === undefined || !(await useLink(ctx, await resetSubject(adapter, found), email, input.token))) {
      throw new VerificationError('The reset link is unknown, already used, expired, for another address, or older than the password.')
    }
    if (!found) throw new VerificationError('The reset link is for an address that has no account (any more).')
    // The link proves the address: an account a sign-up made without that proof loses what it was given.
    await claimUnverifiedAccount(ctx, found, provider.id)
    await adapter.setUserPassword(found.id, await hasher.hash(password))
    return found
  })
  const user = reset.emailVerified ? reset : await adapter.updateUser({ id: reset.id, emailVerified: new Date(Date.now()) })
  await emitEvent(ctx.config, 'updateUser', { user })
  await emitEvent(ctx.config, 'passwordChanged', { user, by: 'reset' })
  await revokeOwnSessions(ctx, { userId: user.id, sessionId: undefined }, {}, 'resetPassword', { everyToken: true })
  // The password is new, but whoever holds the mailbox signs in only with the second factor too.
  const pending = await afterFirstFactor(ctx, user.id, { kind: 'password', pid: provider.id, email })
  if (pending) return pending
  const account = passwordAccount(provider, user)
  const elsewhere = await askSignInCallback(ctx, { user, account })
  return elsewhere ?? finishSignIn(ctx, { user, account, isNewUser: false })
}

/**
 * A fresh sign-in's confirmation by password (the account's confirmation page): checked and
 * rate-limited as a sign-in attempt of the user's.
 * @throws PasswordPolicyError `wrong_password`, RateLimitedError, PasswordBusyError, AdapterError
 */
export async function confirmPassword(ctx: ActionContext, provider: PasswordProvider, userId: string, password: unknown): Promise<void> {
  const adapter = ctx.config.adapter as PasswordAdapter
  const user = await adapter.getUser(userId)
  if (!user) throw new PasswordPolicyError('wrong_password', 'The signed-in user is not in the database any more.')
  const attempt = await limitSignInAttempt(ctx, provider, user.email ?? user.id)
  const given = normalizePassword(password, provider.password.maxLength)
  const stored = await adapter.getUserPassword(user.id)
  if (given === null || stored === null || !(await limited(provider, () => passwordMatches(hasherOf(provider), given, password, stored)))) {
    throw new PasswordPolicyError('wrong_password', 'The password is wrong.')
  }
  await attempt.succeeded()
}

/**
 * `changePassword()`: the current password checked (rate-limited as a sign-in), the new one against
 * the policy, then stored; the user's other sessions end, this one stays.
 * @throws PasswordPolicyError (`wrong_password` included), RateLimitedError, PasswordBusyError, AdapterError
 */
export async function changePassword(
  ctx: ActionContext,
  provider: PasswordProvider,
  owner: { userId: string; sessionId: string | undefined },
  input: { currentPassword: unknown; newPassword: unknown },
): Promise<void> {
  const adapter = ctx.config.adapter as PasswordAdapter
  const user = await adapter.getUser(owner.userId)
  if (!user) throw new PasswordPolicyError('wrong_password', 'The signed-in user is not in the database any more.')
  const attempt = await limitSignInAttempt(ctx, provider, user.email ?? user.id)
  const current = normalizePassword(input.currentPassword, provider.password.maxLength)
  const stored = await adapter.getUserPassword(user.id)
  const hasher = hasherOf(provider)
  const right = current !== null && stored !== null && (await limited(provider, () => passwordMatches(hasher, current, input.currentPassword, stored)))
  if (!right) {
    throw new PasswordPolicyError('wrong_password', stored === null ? 'The user has no password yet: "Forgot your password?" sets one.' : 'The current password is wrong.')
  }
  await attempt.succeeded()
  const next = await acceptablePassword(provider, input.newPassword)
  await adapter.setUserPassword(user.id, await limited(provider, () => hasher.hash(next)))
  await emitEvent(ctx.config, 'updateUser', { user })
  await emitEvent(ctx.config, 'passwordChanged', { user, by: 'change' })
  await revokeOwnSessions(ctx, owner, { except: owner.sessionId ?? '' }, 'changePassword', { everyToken: true })
}
