/**
 * A local SAML 2.0 identity provider for the example, so single sign-on works offline on a fresh
 * clone: `samlify` in IdP mode in this process. Its login page takes any address of its domain (the
 * page says so) and answers the app's AuthnRequest with a signed assertion, posted back to the app's
 * Assertion Consumer Service by the browser, as a real IdP (Okta, Entra ID) does. server.ts starts it
 * next to the app (`DEV_SAML_IDP=off` skips it); the example registers it as the SAML connection of
 * the demo organization, whose domain is `analytical-engines.test`.
 *
 * DEVELOPMENT STAND-IN ONLY. NEVER USE IT IN PRODUCTION. Anyone who can reach it signs in as anyone of
 * its domain, and its signing key (dev-saml-idp-key.pem, beside this file) is published with the
 * example. `samlify` is a devDependency of Portcullis: `npm install && npm start` installs it.
 *
 * @see https://docs.oasis-open.org/security/saml/v2.0/saml-profiles-2.0-os.pdf §4.1 (Web Browser SSO)
 */
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { inflateRawSync } from 'node:zlib'
import { DOMParser } from '@xmldom/xmldom'
import samlify from 'samlify'

// samlify asks a schema validator of every message it parses; this IdP parses none of the app's with it.
samlify.setSchemaValidator({ validate: async () => 'skipped' })

const PRIVATE_KEY = readFileSync(new URL('dev-saml-idp-key.pem', import.meta.url), 'utf8')
const CERTIFICATE = readFileSync(new URL('dev-saml-idp-cert.pem', import.meta.url), 'utf8')
const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'

/** Options of `startDevSamlIdp`. */
export interface DevSamlIdpOptions {
  /** Port to listen on; default `0` (any free port). */
  port?: number
  /** The host name of its URLs and the interface to listen on; default `localhost` (`127.0.0.1` makes it another site than an app on `localhost`). */
  host?: string
  /** The domain of the addresses it signs in; default `analytical-engines.test`. */
  domain?: string
  /** The app's origin (`http://localhost:3000`): the only site it posts assertions to. */
  appOrigin: string
}

/** A running dev SAML IdP: what a SAML connection needs of it. */
export interface DevSamlIdp {
  /** Its entity id (its metadata URL). */
  entityId: string
  /** Where the app sends the browser with its AuthnRequest (HTTP-Redirect binding). */
  ssoUrl: string
  /** Its signing certificate, base64 DER as metadata carries it. */
  certificate: string
  /** Its metadata document. */
  metadataXml: string
  domain: string
  close(): Promise<void>
}

/**
 * Starts the dev SAML IdP: `GET /metadata` (its metadata), `GET /sso` (the AuthnRequest: a login page),
 * `POST /sso` (the address typed: a page that posts the signed response to the app's ACS), `/slo`
 * (nothing to end: it keeps no sessions).
 *
 * @example
 * const idp = await startDevSamlIdp({ port: 3002, appOrigin: 'http://localhost:3000' })
 * // register idp.entityId, idp.ssoUrl and idp.certificate as a SAML connection's IdP
 * await idp.close()
 */
export async function startDevSamlIdp({ port = 0, host = 'localhost', domain = 'analytical-engines.test', appOrigin }: DevSamlIdpOptions): Promise<DevSamlIdp> {
  const server = createServer()
  server.listen(port, host)
  await once(server, 'listening')
  const origin = `http://${host}:${(server.address() as AddressInfo).port}`
  const entityId = `${origin}/metadata`
  const ssoUrl = `${origin}/sso`
  const services = { nameIDFormat: [EMAIL_FORMAT], singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }], singleLogoutService: [{ Binding: REDIRECT, Location: `${origin}/slo` }] }
  const idp = samlify.IdentityProvider({ entityID: entityId, privateKey: PRIVATE_KEY, signingCert: CERTIFICATE, ...services, loginResponseTemplate: { context: TEMPLATE, attributes: [] } })
  const metadataXml = idp.getMetadata()

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void answer(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(`Dev SAML IdP: ${(error as Error).message}`)
    })
  })

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin)
    if (req.method === 'GET' && url.pathname === '/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml; charset=utf-8' }).end(metadataXml)
      return
    }
    if (req.method === 'GET' && url.pathname === '/sso') {
      const request = authnRequest(url.searchParams.get('SAMLRequest'), appOrigin)
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(loginPage(request, url.searchParams.get('RelayState'), domain))
      return
    }
    if (req.method === 'POST' && url.pathname === '/sso') {
      const form = new URLSearchParams(await bodyOf(req))
      const email = (form.get('email') ?? '').trim().toLowerCase()
      if (!email.endsWith(`@${domain}`) || email.length <= domain.length + 1) throw new Error(`sign in with an address of ${domain}`)
      const request = { id: form.get('requestId') ?? '', issuer: form.get('issuer') ?? '', acsUrl: form.get('acsUrl') ?? '' }
      if (!request.acsUrl.startsWith(`${appOrigin}/`)) throw new Error('the AuthnRequest names an ACS outside the app')
      const response = await signedResponse(idp, request, email, entityId)
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(postPage(request.acsUrl, response, form.get('relayState')))
      return
    }
    if (url.pathname === '/slo') {
      // It keeps no sessions: every sign-in asks for the address again, so there is nothing to end.
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('The dev SAML IdP keeps no sessions: nothing to sign out of.')
      return
    }
    res.writeHead(404).end()
  }

  return {
    entityId,
    ssoUrl,
    certificate: CERTIFICATE.replace(/-----(BEGIN|END) CERTIFICATE-----|\s+/g, ''),
    metadataXml,
    domain,
    close: () => close(server),
  }
}

// The response the IdP signs (samlify signs the Assertion with the key above); {…} are its fields.
const TEMPLATE =
  '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="{ID}" Version="2.0" IssueInstant="{IssueInstant}" Destination="{Destination}" InResponseTo="{InResponseTo}">' +
  '<saml:Issuer>{Issuer}</saml:Issuer><samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>' +
  '<saml:Assertion ID="{AssertionID}" Version="2.0" IssueInstant="{IssueInstant}"><saml:Issuer>{Issuer}</saml:Issuer>' +
  `<saml:Subject><saml:NameID Format="${EMAIL_FORMAT}">{NameID}</saml:NameID>` +
  '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="{NotOnOrAfter}" Recipient="{Destination}" InResponseTo="{InResponseTo}"/></saml:SubjectConfirmation></saml:Subject>' +
  '<saml:Conditions NotBefore="{NotBefore}" NotOnOrAfter="{NotOnOrAfter}"><saml:AudienceRestriction><saml:Audience>{Audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>' +
  '<saml:AuthnStatement AuthnInstant="{IssueInstant}" SessionIndex="{AssertionID}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>' +
  '<saml:AttributeStatement><saml:Attribute Name="email"><saml:AttributeValue>{NameID}</saml:AttributeValue></saml:Attribute><saml:Attribute Name="displayName"><saml:AttributeValue>{DisplayName}</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>' +
  '</saml:Assertion></samlp:Response>'

async function signedResponse(idp: ReturnType<typeof samlify.IdentityProvider>, request: { id: string; issuer: string; acsUrl: string }, email: string, entityId: string): Promise<string> {
  const now = Date.now()
  const name = email.slice(0, email.indexOf('@'))
  const fields = {
    ID: `_${randomBytes(16).toString('hex')}`,
    AssertionID: `_${randomBytes(16).toString('hex')}`,
    IssueInstant: new Date(now).toISOString(),
    NotBefore: new Date(now - 30_000).toISOString(),
    NotOnOrAfter: new Date(now + 5 * 60_000).toISOString(),
    Destination: request.acsUrl,
    InResponseTo: request.id,
    Issuer: entityId,
    Audience: request.issuer,
    NameID: escapeXml(email),
    DisplayName: escapeXml(name.charAt(0).toUpperCase() + name.slice(1)),
  }
  const sp = samlify.ServiceProvider({ entityID: request.issuer, assertionConsumerService: [{ Binding: POST, Location: request.acsUrl }], wantAssertionsSigned: true })
  const { context } = await idp.createLoginResponse(sp, { extract: {} }, 'post', {}, (template: string) => ({ id: fields.ID, context: samlify.SamlLib.replaceTagsByValue(template, fields) }))
  return context
}

/** The AuthnRequest of an HTTP-Redirect URL (Bindings §3.4.4.1: base64 of the raw DEFLATE of the XML). */
function authnRequest(encoded: string | null, appOrigin: string): { id: string; issuer: string; acsUrl: string } {
  if (!encoded) throw new Error('no SAMLRequest')
  const xml = inflateRawSync(Buffer.from(encoded, 'base64')).toString('utf8')
  const request = new DOMParser().parseFromString(xml, 'text/xml').documentElement
  if (!request || request.localName !== 'AuthnRequest') throw new Error('the SAMLRequest is no AuthnRequest')
  const issuer = request.getElementsByTagNameNS('urn:oasis:names:tc:SAML:2.0:assertion', 'Issuer')[0]?.textContent ?? ''
  const acsUrl = request.getAttribute('AssertionConsumerServiceURL') ?? ''
  if (!acsUrl.startsWith(`${appOrigin}/`)) throw new Error('the AuthnRequest names an ACS outside the app')
  return { id: request.getAttribute('ID') ?? '', issuer, acsUrl }
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

const escapeHtml = escapeXml

const STYLE = 'body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;line-height:1.5}input,button{font:inherit;padding:.4rem;width:100%;box-sizing:border-box;margin:.3rem 0}'

function loginPage(request: { id: string; issuer: string; acsUrl: string }, relayState: string | null, domain: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dev SAML identity provider</title><style>${STYLE}</style></head><body>
<h1>Dev SAML identity provider</h1>
<p class="dev-saml-idp-note">Development identity provider: any address of <code>${escapeHtml(domain)}</code> signs you in, no password.</p>
<form method="post" action="/sso">
<input type="hidden" name="requestId" value="${escapeHtml(request.id)}">
<input type="hidden" name="issuer" value="${escapeHtml(request.issuer)}">
<input type="hidden" name="acsUrl" value="${escapeHtml(request.acsUrl)}">
${relayState !== null ? `<input type="hidden" name="relayState" value="${escapeHtml(relayState)}">` : ''}
<label>E-mail address <input name="email" type="email" placeholder="babbage@${escapeHtml(domain)}" required></label>
<button type="submit">Sign in</button>
</form></body></html>`
}

/** The page that posts the response to the app's ACS at once (HTTP-POST binding, Bindings §3.5). */
function postPage(acsUrl: string, samlResponse: string, relayState: string | null): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signing you in</title></head><body>
<form method="post" action="${escapeHtml(acsUrl)}">
<input type="hidden" name="SAMLResponse" value="${escapeHtml(samlResponse)}">
${relayState ? `<input type="hidden" name="RelayState" value="${escapeHtml(relayState)}">` : ''}
<noscript><button type="submit">Continue</button></noscript>
</form>
<script>document.forms[0].submit()</script>
</body></html>`
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
      if (body.length > 64 * 1024) req.destroy(new Error('the form is too large'))
    })
    req.on('end', () => resolve(body))
    req.on('error', reject)
  })
}

async function close(server: Server): Promise<void> {
  const closed = once(server, 'close')
  server.close()
  server.closeAllConnections()
  await closed
}
