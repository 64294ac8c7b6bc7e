// The single-page app: everything it knows about the session comes from portcullis/client, which
// talks to the server's /api/auth routes. No page reloads for credentials, e-mail or sign-out;
// OAuth and OIDC leave for the provider and come back here.
import { getProviders, onSessionChange, signIn, signOut } from 'portcullis/client'

const $ = (id) => document.getElementById(id)

/** What to tell the user for each code the server can answer (see the AuthErrorCode type). */
const MESSAGES = {
  CredentialsSignin: 'Wrong username or password.',
  RateLimited: 'Too many attempts: wait a little and try again.',
  EmailSignInError: 'The e-mail could not be sent. Check the address.',
  OAuthAccountNotLinked: 'That e-mail address already signs in another way: use that one.',
  AccessDenied: 'This account may not sign in here.',
  Verification: 'The sign-in link was used or has expired: ask for a new one.',
  NetworkError: 'The server cannot be reached.',
}

function say(text) {
  $('message').textContent = text
}

function sayError(error) {
  say(MESSAGES[error] ?? `Sign-in failed (${error}).`)
}

/** Renders the page for a session (or null): called now and on every change, from any tab. */
function render(session) {
  $('status').textContent = session ? `Signed in as ${session.user.name ?? session.user.email} (${session.user.email ?? 'no e-mail'}).` : 'You are not signed in.'
  $('signed-in').hidden = !session
  $('signed-out').hidden = !!session
  if (!session) $('api-answer').hidden = true
}

// Buttons for the providers that sign in by redirect (OAuth, OIDC), as the server lists them.
async function drawProviderButtons() {
  for (const provider of Object.values(await getProviders())) {
    if (provider.type !== 'oauth' && provider.type !== 'oidc') continue
    const button = document.createElement('button')
    button.textContent = `Sign in with ${provider.name}`
    button.addEventListener('click', () => signIn(provider.id, { callbackUrl: '/' }))
    $('oauth').append(button)
  }
}

$('credentials').addEventListener('submit', async (event) => {
  event.preventDefault()
  const form = new FormData(event.target)
  const result = await signIn('credentials', { username: form.get('username'), password: form.get('password'), redirect: false })
  if (result.ok) {
    event.target.reset()
    say('')
  } else sayError(result.error)
})

$('email').addEventListener('submit', async (event) => {
  event.preventDefault()
  const email = new FormData(event.target).get('email')
  const result = await signIn('nodemailer', { email, callbackUrl: '/', redirect: false })
  if (result.ok) say(`A sign-in link is on its way to ${email}.`)
  else sayError(result.error)
})

$('sign-out').addEventListener('click', async () => {
  await signOut({ redirect: false })
  say('Signed out.')
})

$('call-api').addEventListener('click', async () => {
  const response = await fetch('/api/me')
  $('api-answer').hidden = false
  $('api-answer').textContent = `${response.status} ${JSON.stringify(await response.json(), null, 2)}`
})

onSessionChange(render)
drawProviderButtons().catch(() => sayError('NetworkError'))
