/**
 * The control actions bound to the real flows: the inventory reconcile and the sales pull, each
 * opening what it needs with the daemon's dependencies and closing it again.
 */
import type { FlowDeps } from '../flow.js';
import { runReconcile } from '../inventory/index.js';
import { pullSales } from '../sales/index.js';
import type { ControlActions } from './actions.js';

/** Control actions running `runReconcile` and `pullSales`. */
export function flowActions(deps: FlowDeps): ControlActions {
  return {
    reconcile: ({ skus, source, dryRun, force, confirmOrphans, onProgress, signal }) =>
      runReconcile(deps, {
        ...(skus.length > 0 ? { skus } : {}),
        ...(source === undefined ? {} : { source }),
        dryRun,
        force,
        confirmOrphans,
        signal,
        onProgress: (done, total) => onProgress({ done, total }),
      }),
    // A re-pull of a past window: sales already exported are acknowledged, not exported again.
    pullSales: ({ from, to, dryRun }) => pullSales(deps, { from, to, dryRun }),
  };
}
