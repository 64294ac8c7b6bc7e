/**
 * A certificate for `127.0.0.1` and `localhost`, made by the machine's openssl (one day, P-256), for
 * a test server that must speak https (a client ID metadata document), and an undici dispatcher for
 * `fetch` that trusts it.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A self-signed certificate and its key, PEM. */
export function selfSignedCertificate(): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-tls-'))
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' })
    return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A dispatcher of Node's own undici (the one global `fetch` uses) that trusts `ca`. */
export function trustingDispatcher(ca: string): unknown {
  // Node loads its undici lazily; touching Response loads it and sets the global dispatcher.
  void Response
  const global = (globalThis as Record<symbol, { constructor: new (options: unknown) => unknown } | undefined>)
  const Agent = (global[Symbol.for('undici.globalDispatcher.2')] ?? global[Symbol.for('undici.globalDispatcher.1')])?.constructor
  if (!Agent) throw new Error('Node\'s undici dispatcher was not found')
  return new Agent({ connect: { ca } })
}
