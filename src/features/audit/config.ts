/**
 * The `audit` option at init: how long events are kept, and what it needs (an adapter with the
 * audit methods, and the prune to delete old events), each with an error saying what to change.
 */
import { InvalidConfigurationError } from '../../errors.js'
import type { PortcullisConfig, ResolvedConfig } from '../../config/types.js'
import type { Adapter } from '../../types.js'
import './types.js'

/** The `audit` option, resolved. */
export interface ResolvedAudit {
  readonly retentionDays: number
}

/** The adapter methods the audit log calls. */
export const AUDIT_ADAPTER_METHODS = ['writeAuditEvents', 'listAuditEvents', 'pruneAuditEvents'] as const

/** An adapter with them (checked at init). */
export type AuditAdapter = Adapter & Required<Pick<Adapter, (typeof AUDIT_ADAPTER_METHODS)[number]>>

/** The resolved `audit` option of `config`; undefined when it is off. */
export function auditOf(config: ResolvedConfig): ResolvedAudit | undefined {
  return config.features.audit as ResolvedAudit | undefined
}

/**
 * Resolves `audit`: undefined when it is off.
 * @throws InvalidConfigurationError when it cannot work.
 */
export function resolveAudit(input: PortcullisConfig['audit'], adapter: Adapter | undefined): ResolvedAudit | undefined {
  if (input === undefined || input === false) return undefined
  if (input !== true && (input === null || typeof input !== 'object')) throw new InvalidConfigurationError('audit must be true or an object { retentionDays? }.')
  if (!adapter) throw new InvalidConfigurationError('audit stores the events in a table: it needs an adapter, e.g. adapter: KnexAdapter(knex) from "portcullis/adapters/knex" (run its migrations; the audit one creates the AuditEvent table).')
  const missing = AUDIT_ADAPTER_METHODS.filter((method) => typeof adapter[method] !== 'function')
  if (missing.length > 0) throw new InvalidConfigurationError(`audit: the adapter has no ${missing.join(', ')}. KnexAdapter has them (after the portcullis_audit_log migration); another adapter must implement them.`)
  const retentionDays = input === true || input.retentionDays === undefined ? 90 : input.retentionDays
  if (typeof retentionDays !== 'number' || !Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > 36_500) {
    throw new InvalidConfigurationError(`audit.retentionDays must be a whole number of days from 1 to 36500, e.g. 90; got ${String(retentionDays)}.`)
  }
  return Object.freeze({ retentionDays })
}

/**
 * Checks what the audit log needs of the rest: the prune, which deletes the events past their retention.
 * @throws InvalidConfigurationError
 */
export function assertAudit(config: ResolvedConfig): void {
  if (!auditOf(config)) return
  if (!config.features.prune) throw new InvalidConfigurationError('audit keeps events for retentionDays: it needs the prune option too (prune: { everyMinutes: 60 }), which deletes the older ones.')
}
