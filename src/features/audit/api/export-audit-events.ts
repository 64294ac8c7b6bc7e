/** The server-side `exportAuditEvents(filter)`: every matching event, as JSON lines, for the app's own admin code. */
import type { Api } from '../../../api/context.js'
import type { ResolvedConfig } from '../../../config/types.js'
import { UnknownActionError } from '../../../errors.js'
import { auditOf, type AuditAdapter } from '../config.js'
import type { AuditEventFilter } from '../types.js'

/**
 * Every audit event matching `filter` (any user's: no request, no permission check; call it from your
 * own admin or export code), newest first, one JSON object per line (`\n`-terminated), read from the
 * database a page at a time. `limit` is the page size (default 1,000).
 *
 * @throws UnknownActionError (`audit` off); the adapter's errors while iterating
 * @example
 * ```ts
 * import { createWriteStream } from 'node:fs'
 * import { pipeline } from 'node:stream/promises'
 * import { Readable } from 'node:stream'
 * await pipeline(Readable.from(exportAuditEvents({ since: new Date('2026-12-01') })), createWriteStream('audit.jsonl'))
 * ```
 */
export type ExportAuditEventsFunction = (filter?: AuditEventFilter) => AsyncIterable<string>

export function createExportAuditEvents(api: Api): ExportAuditEventsFunction {
  return (filter = {}) => {
    const adapter = auditAdapter(api.config, 'exportAuditEvents()')
    const page = Math.min(Math.max(Math.trunc(filter.limit ?? 1000), 1), 1000)
    return (async function* () {
      let before = filter.before
      let seen = new Set<string>()
      for (;;) {
        const limit = page + seen.size
        const rows = await adapter.listAuditEvents({ ...filter, limit, before })
        const fresh = rows.filter((row) => !seen.has(row.id))
        for (const row of fresh) yield `${JSON.stringify(row)}\n`
        if (rows.length < limit || fresh.length === 0) return
        // `before` is exclusive: the next page starts a millisecond after the last instant read, and
        // skips by id the events of that instant already written, so none is lost between pages.
        const last = fresh[fresh.length - 1]!.at.getTime()
        before = new Date(last + 1)
        seen = new Set(rows.filter((row) => row.at.getTime() === last).map((row) => row.id))
      }
    })()
  }
}

/**
 * The adapter, once `audit` is on.
 * @throws UnknownActionError when it is off.
 */
export function auditAdapter(config: ResolvedConfig, what: string): AuditAdapter {
  if (!auditOf(config)) throw new UnknownActionError(`${what}: the audit log is off. Set the audit option (and run the audit migration) to use it.`)
  return config.adapter as AuditAdapter
}
