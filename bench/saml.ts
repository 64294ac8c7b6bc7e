/**
 * SAML benchmark (`npm run bench`): how many SAML responses the SSO wing's engine verifies per second
 * (`verifySamlResponse`: base64, the envelope's checks on the received document, node-saml's XML
 * signature check over the assertion, the identity read and checked from the signed bytes), with one
 * certificate in the connection and with two (a key rollover, the response signed by the second), and
 * what the refusal of a response whose signature does not verify costs (an attacker's flood).
 *
 * Method: responses signed by the tests' samlify IdP (test/sso/saml/idp.ts), RSA-2048 with SHA-256, made
 * once; verified at their issue time. 20 untimed verifications per row, then 3 rounds (BENCH_ROUNDS) of
 * 100 (BENCH_QUICK=1: 30), the rows taking turns, one at a time on the main thread (the check
 * is synchronous JavaScript and node:crypto: about one core). A row reports the median of its rounds'
 * verifications per second, their spread, and the CPU µs per verification (process.cpuUsage).
 *
 * Target (issue 65): none set; the figure is for sizing (a sign-in burst, a flood of forged responses).
 */
import { loadavg } from 'node:os'
import { parseIdpMetadata, verifySamlResponse, type SamlIdp } from '../src/features/sso/saml/index.js'
import { idpMetadata, idpResponseXml, NOW, SP, toBase64 } from '../test/sso/saml/idp.js'
import { QUICK, rounds } from './settings.js'
import { median, printTable, spread, thousands } from './table.js'

const ROUNDS = rounds(3)
const PER_ROUND = QUICK ? 30 : 100
const WARMUP = 20

interface Row {
  name: string
  run: () => Promise<unknown>
  rates: number[]
  cpuUs: number[]
}

const oneCertificate: SamlIdp = parseIdpMetadata(idpMetadata(['idp']))
const rollover: SamlIdp = parseIdpMetadata(idpMetadata(['idp', 'idp-next']))
const expected = (idp: SamlIdp) => ({ idp, sp: SP, expectedRequestId: null, nowMs: NOW, skewMs: 60_000 })
const signed = toBase64(await idpResponseXml())
const signedByNext = toBase64(await idpResponseXml({ key: 'idp-next' }))
const forged = toBase64(await idpResponseXml({ key: 'attacker' }))

const rows: Row[] = [
  { name: 'verify, one certificate', run: () => verifySamlResponse(signed, expected(oneCertificate)), rates: [], cpuUs: [] },
  { name: 'verify, two (signed by the second)', run: () => verifySamlResponse(signedByNext, expected(rollover)), rates: [], cpuUs: [] },
  {
    name: 'refuse a forged signature',
    run: () =>
      verifySamlResponse(forged, expected(oneCertificate)).then(
        () => Promise.reject(new Error('a forged response verified')),
        () => undefined,
      ),
    rates: [],
    cpuUs: [],
  },
]

// Each row once, so that a broken row fails before anything is timed.
for (const row of rows) await row.run()
for (const row of rows) for (let i = 0; i < WARMUP; i++) await row.run()
for (let round = 0; round < ROUNDS; round++) {
  for (let turn = 0; turn < rows.length; turn++) {
    const row = rows[(round + turn) % rows.length]!
    const cpu = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < PER_ROUND; i++) await row.run()
    const ms = performance.now() - start
    const used = process.cpuUsage(cpu)
    row.rates.push((PER_ROUND * 1000) / ms)
    row.cpuUs.push((used.user + used.system) / PER_ROUND)
  }
}

console.log(`\n## SAML responses verified (Node ${process.version}, load ${loadavg()[0]!.toFixed(2)}, ${ROUNDS} rounds of ${PER_ROUND})\n`)
printTable(
  ['row', 'verified/s', 'spread', 'CPU µs each'],
  rows.map((row) => [row.name, thousands(median(row.rates)), spread(row.rates, thousands), thousands(median(row.cpuUs))]),
)
