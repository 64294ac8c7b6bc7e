/**
 * The built-in SSO page of an organization (GET `/sso?organizationId=`): its connections, each with
 * what its identity provider needs of this site (the OIDC redirect URI; the SAML entity id, ACS URL
 * and metadata URL), its domains with the DNS TXT record each needs, and the forms that manage both
 * (CSRF-checked POSTs). The page runs no script and is never cached.
 */
import { html, type SafeHtml } from '../../../pages/html.js'
import { isSafePageUrl, renderLayout } from '../../../pages/theme.js'
import type { Theme } from '../../../types.js'
import type { SsoConnection, SsoDomain } from '../types.js'

/** What the SSO page needs. */
export interface SsoPageProps {
  organization: { id: string; name: string }
  connections: readonly SsoConnection[]
  domains: readonly SsoDomain[]
  /** The organization roles a connection may give its new members. */
  roleNames: readonly string[]
  defaultRole: string
  /** Why the last form was refused. */
  error?: string | undefined
  /** A SCIM token just made: shown this once. */
  scimToken?: { connectionId: string; token: string } | undefined
  csrfToken: string
  /** The routes' base, e.g. `/api/auth`. */
  basePath: string
  theme: Theme
  homeUrl?: string | undefined
}

/**
 * Renders the SSO page.
 * @throws {TypeError} If `basePath` is not a `/` path or an http(s) URL.
 * @example
 * renderSsoPage({ organization: { id: 'o1', name: 'Acme' }, connections: [], domains: [], roleNames: ['owner', 'admin', 'member'], defaultRole: 'member', csrfToken: 'token', basePath: '/api/auth', theme: {} })
 */
export function renderSsoPage(props: SsoPageProps): string {
  if (!isSafePageUrl(props.basePath)) throw new TypeError('SSO page: basePath must be a path or an http(s) URL.')
  const { organization } = props
  const verified = props.domains.filter((domain) => domain.verified).length
  const body = html`<style>[data-connections] code,[data-domains] code{overflow-wrap:anywhere}textarea{width:100%;box-sizing:border-box;font:inherit}</style>
<h1>${organization.name}: single sign-on</h1>
${props.error ? html`<p class="alert" role="alert">${props.error}</p>` : ''}
${props.scimToken ? scimTokenNotice(props, props.scimToken) : ''}
<p>People whose address is in a verified domain sign in through the organization's identity provider, and become members at their first sign-in.</p>
<h2>Domains</h2>
${props.domains.length === 0 ? html`<p>No domain yet: add the domain of your people's addresses, then publish its DNS record.</p>` : html`<ul class="sessions" data-domains>${props.domains.map((domain) => domainRow(domain, props))}</ul>`}
${verified === 0 && props.domains.length > 0 ? html`<p><small>No domain is verified yet: the connections sign nobody in until one is.</small></p>` : ''}
${addDomainForm(props)}
<h2>Connections</h2>
${props.connections.length === 0 ? html`<p>No connection yet.</p>` : html`<ul class="sessions" data-connections>${props.connections.map((connection) => connectionRow(connection, props))}</ul>`}
<h2>Add a connection</h2>
${oidcForm(props)}
${samlForm(props)}
<p class="links" style="margin-top:1.5rem"><a href="${props.basePath}/organizations/members?organizationId=${encodeURIComponent(organization.id)}">← ${organization.name}</a></p>`
  return renderLayout({ title: `${organization.name}: single sign-on`, theme: props.theme, body, home: props.homeUrl })
}

function hiddenFields(props: SsoPageProps): SafeHtml {
  return html`<input type="hidden" name="csrfToken" value="${props.csrfToken}">
<input type="hidden" name="organizationId" value="${props.organization.id}">`
}

function domainRow(domain: SsoDomain, props: SsoPageProps): SafeHtml {
  return html`<li data-domain-id="${domain.id}">
<strong>${domain.domain}</strong> <small style="display:inline" data-domain-state>${domain.verified ? `verified (${domain.verifiedBy === 'admin' ? "the app's word" : 'DNS'})` : 'not verified'}</small>
${domain.verified ? '' : html`<small>Publish this TXT record, then verify:</small>
<small><code data-record-name>${domain.record.name}</code></small>
<small><code data-record-value>${domain.record.value}</code></small>
${smallForm(props, '/sso/domains/verify', 'domainId', domain.id, 'Verify')}`}
${smallForm(props, '/sso/domains/delete', 'domainId', domain.id, 'Remove')}
</li>`
}

function connectionRow(connection: SsoConnection, props: SsoPageProps): SafeHtml {
  const facts: SafeHtml[] = []
  if (connection.oidc) {
    facts.push(html`<small>OpenID Connect · issuer <code>${connection.oidc.issuer}</code> · client <code>${connection.oidc.clientId}</code></small>`)
    facts.push(html`<small>Redirect URI to register: <code data-redirect-uri>${connection.redirectUri ?? ''}</code></small>`)
  }
  if (connection.saml) {
    const { saml } = connection
    facts.push(html`<small>SAML 2.0 · IdP <code>${saml.idpEntityId}</code> · ${saml.certificates === 1 ? 'one certificate' : `${saml.certificates} certificates`}${saml.allowIdpInitiated ? ' · IdP-initiated sign-in allowed' : ''}</small>`)
    facts.push(html`<small>Entity ID: <code data-sp-entity-id>${saml.spEntityId}</code></small>`)
    facts.push(html`<small>ACS URL: <code data-acs-url>${saml.acsUrl}</code></small>`)
    facts.push(html`<small><a href="${saml.spMetadataUrl}">Service provider metadata</a></small>`)
  }
  facts.push(html`<small data-scim>SCIM provisioning: ${connection.scim.enabled ? html`on since ${connection.scim.createdAt ?? ''} · base URL <code data-scim-base-url>${connection.scim.baseUrl}</code>` : 'off'}</small>`)
  return html`<li data-connection-id="${connection.id}">
<strong>${connection.name}</strong> <small style="display:inline" data-connection-state>${connection.enabled ? 'enabled' : 'disabled'}${connection.ssoOnly ? ' · SSO only' : ''} · new members: ${connection.defaultRole}</small>
${facts}
${toggleForm(props, connection, 'enabled', connection.enabled ? 'Disable' : 'Enable')}
${toggleForm(props, connection, 'ssoOnly', connection.ssoOnly ? 'Allow other sign-in methods' : 'Require single sign-on')}
${smallForm(props, '/sso/connections/scim-token', 'connectionId', connection.id, connection.scim.enabled ? 'Make a new SCIM token' : 'Make a SCIM token')}
${connection.scim.enabled ? smallForm(props, '/sso/connections/scim-token/delete', 'connectionId', connection.id, 'Revoke the SCIM token') : ''}
${smallForm(props, '/sso/connections/delete', 'connectionId', connection.id, 'Remove')}
</li>`
}

function scimTokenNotice(props: SsoPageProps, made: { connectionId: string; token: string }): SafeHtml {
  const connection = props.connections.find((candidate) => candidate.id === made.connectionId)
  return html`<div class="alert" role="status" data-scim-token-made>
<p>The SCIM token of ${connection?.name ?? 'the connection'}, shown this once: give it to the identity provider now (Okta: HTTP Header; Entra ID: Secret Token), with the base URL <code>${connection?.scim.baseUrl ?? ''}</code>.</p>
<p><code data-scim-token>${made.token}</code></p>
</div>`
}

function toggleForm(props: SsoPageProps, connection: SsoConnection, field: 'enabled' | 'ssoOnly', label: string): SafeHtml {
  return html`<form method="post" action="${props.basePath}/sso/connections/update">
${hiddenFields(props)}
<input type="hidden" name="connectionId" value="${connection.id}">
<input type="hidden" name="${field}" value="${connection[field] ? 'false' : 'true'}">
<button type="submit" class="secondary">${label}</button>
</form>`
}

function smallForm(props: SsoPageProps, path: string, name: string, value: string, label: string): SafeHtml {
  return html`<form method="post" action="${props.basePath}${path}">
${hiddenFields(props)}
<input type="hidden" name="${name}" value="${value}">
<button type="submit" class="secondary">${label}</button>
</form>`
}

function addDomainForm(props: SsoPageProps): SafeHtml {
  return html`<form method="post" action="${props.basePath}/sso/domains" data-add-domain>
${hiddenFields(props)}
<div><label for="sso-domain">Domain</label><input id="sso-domain" name="domain" placeholder="acme.example" required></div>
<button type="submit">Add the domain</button>
</form>`
}

function commonFields(props: SsoPageProps, prefix: string): SafeHtml {
  return html`<div><label for="${prefix}-name">Name</label><input id="${prefix}-name" name="name" placeholder="${prefix === 'oidc' ? 'Acme Okta' : 'Acme Entra ID'}" required maxlength="255"></div>
<div><label for="${prefix}-role">Role of new members</label><select id="${prefix}-role" name="defaultRole">${props.roleNames.map((role) => html`<option value="${role}"${role === props.defaultRole ? html` selected` : ''}>${role}</option>`)}</select></div>
<div><label><input type="checkbox" name="ssoOnly" value="true"> Members sign in only through this identity provider</label></div>`
}

function oidcForm(props: SsoPageProps): SafeHtml {
  return html`<form method="post" action="${props.basePath}/sso/connections" data-add-oidc>
<h3>OpenID Connect</h3>
${hiddenFields(props)}
<input type="hidden" name="type" value="oidc">
${commonFields(props, 'oidc')}
<div><label for="oidc-issuer">Issuer</label><input id="oidc-issuer" name="issuer" type="url" placeholder="https://acme.okta.com" required></div>
<div><label for="oidc-client">Client ID</label><input id="oidc-client" name="clientId" required></div>
<div><label for="oidc-secret">Client secret</label><input id="oidc-secret" name="clientSecret" type="password" autocomplete="off" required></div>
<button type="submit">Add the OpenID Connect connection</button>
</form>`
}

function samlForm(props: SsoPageProps): SafeHtml {
  return html`<form method="post" action="${props.basePath}/sso/connections" data-add-saml>
<h3>SAML 2.0</h3>
${hiddenFields(props)}
<input type="hidden" name="type" value="saml">
${commonFields(props, 'saml')}
<div><label for="saml-url">Identity provider metadata URL</label><input id="saml-url" name="metadataUrl" type="url" placeholder="https://idp.acme.example/metadata"></div>
<div><label for="saml-xml">…or its metadata XML</label><textarea id="saml-xml" name="metadataXml" rows="4"></textarea></div>
<button type="submit">Add the SAML connection</button>
</form>`
}
