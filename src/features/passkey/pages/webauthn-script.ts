/**
 * The passkey script of the built-in pages (`GET <basePath>/webauthn.js`): a small file of plain
 * browser JavaScript, served by the router, so apps need no build step and the pages keep a CSP
 * without inline scripts. It drives every `<form data-passkey="authenticate|register">` of a page:
 *
 * - the form's button fetches the options (`data-passkey-options`, `?action=`), asks the browser
 *   (`navigator.credentials.get` / `.create`), and submits the form with `action` and `data` (the
 *   response as JSON), as Auth.js's script does, so the server answers with an ordinary redirect;
 * - a sign-in form marked `data-passkey-conditional` also starts conditional mediation when the
 *   browser supports it and the page has an `autocomplete="… webauthn"` field: the passkeys appear in
 *   that field's autofill, and picking one signs in;
 * - a failure (cancelled, timed out, no passkey) is written to the form's `[data-passkey-status]`;
 * - a registration refused for a stale session (`403 RecentSignInRequired`, the `account` option)
 *   goes to the confirmation page the answer names (same-origin only), which comes back.
 *
 * The page loads it as `webauthn.js?v=<hash>`, so it can be cached for a year and still change.
 *
 * @see https://www.w3.org/TR/webauthn-3/#sctn-api
 * @see https://github.com/w3c/webauthn/wiki/Explainer:-WebAuthn-Conditional-UI
 */
import { createHash } from 'node:crypto'

/** The script's source. */
export const WEBAUTHN_SCRIPT = `// Portcullis passkey script: see src/features/passkey/pages/webauthn-script.ts.
(() => {
  'use strict'
  const toBytes = (value) => {
    const base64 = value.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(value.length / 4) * 4, '=')
    const binary = atob(base64)
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes.buffer
  }
  const toBase64url = (buffer) => {
    let binary = ''
    for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte)
    return btoa(binary).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '')
  }
  const withIds = (list) => (list || []).map((credential) => ({ ...credential, id: toBytes(credential.id) }))
  const creationOptions = (options) => ({ ...options, challenge: toBytes(options.challenge), user: { ...options.user, id: toBytes(options.user.id) }, excludeCredentials: withIds(options.excludeCredentials) })
  const requestOptions = (options) => ({ ...options, challenge: toBytes(options.challenge), allowCredentials: withIds(options.allowCredentials) })
  const credentialJson = (credential) => {
    const response = credential.response
    const json = {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults ? credential.getClientExtensionResults() : {},
      response: { clientDataJSON: toBase64url(response.clientDataJSON) },
    }
    if (response.attestationObject) {
      json.response.attestationObject = toBase64url(response.attestationObject)
      json.response.transports = response.getTransports ? response.getTransports() : []
    } else {
      json.response.authenticatorData = toBase64url(response.authenticatorData)
      json.response.signature = toBase64url(response.signature)
      if (response.userHandle) json.response.userHandle = toBase64url(response.userHandle)
    }
    return json
  }
  const supported = () => typeof window.PublicKeyCredential === 'function' && !!navigator.credentials
  const status = (form, text) => {
    const element = form.querySelector('[data-passkey-status]')
    if (element) element.textContent = text
  }
  // The pending conditional request: a button press aborts it (a browser runs one request at a time).
  let conditional = null

  async function options(form, action) {
    const url = new URL(form.getAttribute('data-passkey-options'), location.href)
    url.searchParams.set('action', action)
    const answer = await fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } })
    const body = await answer.json().catch(() => null)
    // A stale session adding a passkey: to the confirmation page, which comes back to this one.
    if (answer.status === 403 && body && body.error === 'RecentSignInRequired' && typeof body.url === 'string' && new URL(body.url, location.href).origin === location.origin) {
      location.assign(body.url)
      return new Promise(() => {})
    }
    if (!answer.ok || !body || !body.options) throw new Error((body && body.message) || 'Passkeys are not available right now.')
    return body.options
  }

  function submit(form, action, credential) {
    for (const [name, value] of [['action', action], ['data', JSON.stringify(credentialJson(credential))]]) {
      const input = document.createElement('input')
      input.type = 'hidden'
      input.name = name
      input.value = value
      form.appendChild(input)
    }
    HTMLFormElement.prototype.submit.call(form)
  }

  async function run(form, mediation) {
    const action = form.getAttribute('data-passkey') === 'register' ? 'register' : 'authenticate'
    if (!mediation && conditional) {
      conditional.abort()
      conditional = null
    }
    if (!mediation) status(form, '')
    try {
      const publicKey = await options(form, action)
      let credential
      if (action === 'register') {
        credential = await navigator.credentials.create({ publicKey: creationOptions(publicKey) })
      } else {
        const controller = new AbortController()
        if (mediation) conditional = controller
        credential = await navigator.credentials.get({ publicKey: requestOptions(publicKey), mediation, signal: controller.signal })
      }
      if (credential) submit(form, action, credential)
    } catch (error) {
      // An aborted conditional request, or one the user ignored, is not worth a message.
      if (mediation || (error && error.name === 'AbortError')) return
      const cancelled = error && error.name === 'NotAllowedError'
      status(form, cancelled ? 'The passkey request was cancelled or timed out.' : error && error.name === 'InvalidStateError' ? 'This passkey is registered already.' : (error && error.message) || 'The passkey could not be used.')
    }
  }

  async function start() {
    for (const form of document.querySelectorAll('form[data-passkey]')) {
      if (!supported()) {
        status(form, 'This browser does not support passkeys.')
        for (const button of form.querySelectorAll('button')) button.disabled = true
        continue
      }
      form.addEventListener('submit', (event) => {
        event.preventDefault()
        run(form, undefined)
      })
      const autofill = form.hasAttribute('data-passkey-conditional') && document.querySelector('input[autocomplete$="webauthn"]')
      if (autofill && PublicKeyCredential.isConditionalMediationAvailable && (await PublicKeyCredential.isConditionalMediationAvailable())) run(form, 'conditional')
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start)
  else start()
})()
`

let digest: { version: string; integrity: string } | undefined

/** The script's version (in its URL: `?v=`) and its Subresource Integrity value, computed once. */
export function webauthnScriptDigest(): { version: string; integrity: string } {
  if (!digest) {
    const hash = createHash('sha256').update(WEBAUTHN_SCRIPT).digest()
    digest = { version: hash.toString('hex').slice(0, 16), integrity: `sha256-${hash.toString('base64')}` }
  }
  return digest
}
