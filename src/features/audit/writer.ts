/**
 * The audit log's writes: rows queued by the event observer, written after the response in one
 * statement per batch. Never in the request's way: the observer only queues; the write starts once
 * the current response has finished (or on the next turn of the event loop outside a request), and
 * a failed write is logged and its rows dropped, never thrown into a request.
 */
import { currentRequest } from '../../http/request-scope.js'
import type { ResolvedConfig } from '../../config/types.js'
import { describeError } from '../../events.js'
import type { AuditAdapter } from './config.js'
import type { AuditEvent } from './types.js'

/** Rows waiting at most; past it the oldest are dropped (a database down for long must not grow the heap without end). */
const MAX_QUEUED = 10_000
/** Rows one statement writes at most. */
const BATCH = 500

interface Queue {
  rows: AuditEvent[]
  scheduled: boolean
  /** The write under way: one at a time, which takes the rows queued meanwhile too. */
  writing: Promise<void> | undefined
  dropped: number
}

const queues = new WeakMap<ResolvedConfig, Queue>()

function queueOf(config: ResolvedConfig): Queue {
  let queue = queues.get(config)
  if (!queue) queues.set(config, (queue = { rows: [], scheduled: false, writing: undefined, dropped: 0 }))
  return queue
}

/** Queues `row`; its write starts once the current response is sent. */
export function enqueueAuditEvent(config: ResolvedConfig, row: AuditEvent): void {
  const queue = queueOf(config)
  queue.rows.push(row)
  if (queue.rows.length > MAX_QUEUED) {
    queue.rows.splice(0, queue.rows.length - MAX_QUEUED)
    if (queue.dropped++ === 0) config.logger.warn('AuditEventsDropped', `More than ${MAX_QUEUED} audit events were waiting to be written (is the database down?): the oldest are dropped.`)
  }
  if (queue.scheduled) return
  queue.scheduled = true
  const res = currentRequest()?.res
  if (res && !res.writableFinished) {
    // After the response, whether it finished or the client went away.
    let started = false
    const start = () => {
      if (started) return
      started = true
      setImmediate(() => void write(config, queue))
    }
    res.once('finish', start)
    res.once('close', start)
  } else {
    setImmediate(() => void write(config, queue))
  }
}

/** Forgets `userId` in the rows still waiting (the user was deleted: deleteUser cleared the stored ones). */
export function forgetQueuedUser(config: ResolvedConfig, userId: string): void {
  for (const row of queues.get(config)?.rows ?? []) {
    if (row.userId === userId) row.userId = null
    if (row.actorId === userId) row.actorId = null
  }
}

async function write(config: ResolvedConfig, queue: Queue): Promise<void> {
  queue.scheduled = false
  if (queue.writing) return queue.writing
  const run = async () => {
    while (queue.rows.length > 0) {
      const batch = queue.rows.splice(0, BATCH)
      try {
        await (config.adapter as AuditAdapter).writeAuditEvents(batch)
      } catch (error) {
        config.logger.error('AuditWriteFailed', `${batch.length} audit event${batch.length === 1 ? '' : 's'} could not be written and ${batch.length === 1 ? 'is' : 'are'} lost: ${describeError(error)}`)
      }
    }
  }
  queue.writing = run().finally(() => {
    queue.writing = undefined
  })
  return queue.writing
}
