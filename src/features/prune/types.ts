/**
 * The prune wing's option, and what it adds to the shared types: the adapter's `prune` method and the
 * `prune` option (TypeScript declaration merging; `src/index.ts` re-exports this module).
 */

/**
 * The `prune` option: deletes expired sessions, verification tokens and rate-limit rows in the
 * background (`KnexAdapter`'s `prune`, and `pruneRateLimits` for a Knex rate-limit store). One
 * process of many prunes at a time (a database lock); failures are logged, never thrown into a request.
 */
export interface PruneOptions {
  /** Minutes between two prunes. The first runs at a random moment within the first interval. */
  everyMinutes: number
  /** Aborting it stops the background prune; one under way stops after its current statement. */
  signal?: AbortSignal
}

declare module '../../types.js' {
  interface Adapter {
    /**
     * Deletes rows that can never be used again (expired sessions, verification tokens) and returns
     * how many of each; `null` when another process is pruning. Run by the `prune` option.
     */
    prune?(options?: { signal?: AbortSignal }): Promise<Readonly<Record<string, number>> | null>
  }
}

declare module '../../config/types.js' {
  interface PortcullisConfig {
    /** Off by default. Prunes expired rows in the background: see `PruneOptions`. */
    prune?: PruneOptions | undefined
  }
}
