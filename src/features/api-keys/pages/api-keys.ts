/**
 * The built-in API keys page (GET `/api-keys`): the signed-in user's keys, a form to create one, and
 * per key a button to rotate or revoke it. A new key is shown once, on the answer to the POST that
 * made it ("copy it now, you will not see it again"); the page is never cached. Every button is a
 * CSRF-checked POST form; the page runs no script.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'
import type { ApiKeyInfo, CreatedApiKey } from '../types.js'

/** What the API keys page needs. */
export interface ApiKeysPageProps {
  keys: readonly ApiKeyInfo[]
  /** A key just made, shown once. */
  created?: CreatedApiKey | undefined
  /** Why the last form was refused. */
  error?: string | undefined
  /** The scopes a key may be given (checkboxes), or undefined for a free text field. */
  scopes?: readonly string[] | undefined
  csrfToken: string
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  theme: Theme
  homeUrl?: string | undefined
}

const EXPIRIES: readonly [string, string][] = [
  ['2592000', '30 days'],
  ['7776000', '90 days'],
  ['31536000', '1 year'],
  ['', 'No expiry'],
]

/**
 * Renders the API keys page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderApiKeysPage({ keys: [], csrfToken: 'token', basePath: '/api/auth', theme: {} })
 */
export function renderApiKeysPage(props: ApiKeysPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('API keys page: basePath must be a path or an http(s) URL.')
  const now = Date.now()
  const valid = props.keys.filter((key) => key.revokedAt === null && (key.expiresAt === null || Date.parse(key.expiresAt) > now))
  const body = html`<h1>API keys</h1>
${props.error ? html`<p class="alert" role="alert">${props.error}</p>` : ''}
${props.created ? createdKey(props.created) : ''}
<p>${valid.length === 0 ? 'You have no API keys yet.' : valid.length === 1 ? 'You have one API key.' : `You have ${valid.length} API keys.`} Scripts and services send a key as <code>Authorization: Bearer …</code>.</p>
${valid.length > 0 ? html`<ul class="sessions">${valid.map((key) => keyRow(key, props))}</ul>` : ''}
${createForm(props)}`
  return renderLayout({ title: 'API keys', theme: props.theme, body, home: props.homeUrl })
}

function createdKey(created: CreatedApiKey): SafeHtml {
  return html`<div class="alert" role="status" data-created-key>
<strong>Copy your new key “${created.name}” now: you will not see it again.</strong>
<code class="secret" data-key>${created.key}</code>
<small>Store it in your secret manager; this page keeps only its hash.</small>
</div>`
}

function keyRow(key: ApiKeyInfo, props: ApiKeysPageProps): SafeHtml {
  return html`<li data-key-id="${key.id}">
<strong>${key.name}</strong> <code>${key.display}</code>
<small>${key.scopes.length > 0 ? `scopes: ${key.scopes.join(', ')}` : 'no scopes'}</small>
<small>created ${day(key.createdAt)} · ${key.lastUsedAt ? `last used ${day(key.lastUsedAt)}` : 'never used'} · ${key.expiresAt ? `expires ${day(key.expiresAt)}` : 'no expiry'}</small>
${button(props, '/api-keys/rotate', 'Rotate', key.id)}
${button(props, '/api-keys/revoke', 'Revoke', key.id)}
</li>`
}

function button(props: ApiKeysPageProps, path: string, label: string, id: string): SafeHtml {
  return html`<form method="post" action="${props.basePath}${path}">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="id" value="${id}">
<button type="submit" class="secondary">${label}</button>
</form>`
}

function createForm(props: ApiKeysPageProps): SafeHtml {
  const scopes = props.scopes
    ? html`<fieldset style="margin:0;padding:.5rem .75rem;border:1px solid var(--border);border-radius:.5rem"><legend style="font-size:.875rem;font-weight:600">Scopes</legend>${props.scopes.map((scope) => html`<label style="font-weight:400"><input type="checkbox" name="scopes" value="${scope}" style="display:inline;width:auto;margin-right:.375rem"><code>${scope}</code></label>`)}</fieldset>`
    : html`<div><label for="scopes">Scopes</label><input id="scopes" name="scopes" autocomplete="off" placeholder="reports:read reports:write"><span class="hint">Separated by spaces.</span></div>`
  return html`<form method="post" action="${props.basePath}/api-keys">
<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<div><label for="name">Name</label><input id="name" name="name" required maxlength="100" autocomplete="off" placeholder="CI deploys"></div>
${scopes}
<div><label for="expiresIn">Expires</label><select id="expiresIn" name="expiresIn">${EXPIRIES.map(([value, label]) => html`<option value="${value}"${value === '7776000' ? html` selected` : ''}>${label}</option>`)}</select></div>
<button type="submit">Create key</button>
</form>`
}

function day(iso: string): string {
  return iso.slice(0, 10)
}
