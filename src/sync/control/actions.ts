/**
 * What a control job runs. The daemon binds these to the inventory and sales flows (`runReconcile`,
 * `pullSales`); tests may pass their own.
 */

/** Progress a long action reports; it becomes the job's progress on the dashboard. */
export type ControlProgress = Record<string, unknown> | number;

/** An inventory reconcile as a control job asks for it. */
export interface ReconcileRequest {
  /** Only these SKUs; empty: every item. */
  skus: string[];
  /** Only this inventory source; unset: every enabled source. */
  source?: string;
  dryRun: boolean;
  force: boolean;
  /** Act on store items no ERP source has even past the mass guard. */
  confirmOrphans: boolean;
  onProgress: (progress: ControlProgress) => void;
  /** Aborted at the shutdown deadline. */
  signal: AbortSignal;
}

/** A sales re-pull as a control job asks for it. */
export interface SalesPullRequest {
  /** First day of the window, `YYYY-MM-DD` in the store's time zone. */
  from: string;
  /** Last day of the window (included), `YYYY-MM-DD`. */
  to: string;
  dryRun: boolean;
  signal: AbortSignal;
}

/** The actions; each resolves with its report, which becomes the job's return value. */
export interface ControlActions {
  reconcile(request: ReconcileRequest): Promise<unknown>;
  pullSales(request: SalesPullRequest): Promise<unknown>;
}
