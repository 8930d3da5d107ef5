/**
 * What the store client records, as an interface the store owns: the process's metrics registry
 * (`src/metrics.ts`) implements it, and a test or a CLI run may pass nothing at all.
 */

/** A counter with labels (a prom-client `Counter` fits). */
export interface LabelledCounter<L extends string> {
  inc(labels: Partial<Record<L, string>>): void;
}

/** A histogram with labels (a prom-client `Histogram` fits). */
export interface LabelledHistogram<L extends string> {
  observe(labels: Partial<Record<L, string>>, value: number): void;
}

/** A counter without labels (a prom-client `Counter` fits). */
export interface PlainCounter {
  inc(): void;
}

/** The metrics the store client records on. */
export interface StoreMetrics {
  /** Requests by endpoint template, method and status (`error` when none came back). */
  readonly storeRequests: LabelledCounter<'endpoint' | 'method' | 'status'>;
  /** Request duration in seconds by endpoint template and method. */
  readonly storeRequestDuration: LabelledHistogram<'endpoint' | 'method'>;
  /** Logins by outcome: success | failure. */
  readonly storeLogins: LabelledCounter<'outcome'>;
  /** Logins the store refused for the credentials (wrong user name or password, account blocked). */
  readonly storeAuthFailures: PlainCounter;
  /** Listings whose paging was stopped before an empty page, by resource and reason (`repeated-page`, `max-pages`). */
  readonly storePagingStopped: LabelledCounter<'resource' | 'reason'>;
}
