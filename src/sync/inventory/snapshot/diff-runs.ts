/**
 * How the inventory flow runs the snapshot diff of its sources: on each source's `diff.schedule`
 * (`inventory:diff:{source}`), one run at a time per source beside its polls, with the source's
 * deletions read first. The report is emitted as `inventory:diff:done` (the activity log writes one
 * info line per diff that moved something).
 */
import { vanishedOptions } from '../../../config/diff-options.js';
import { INVENTORY_FIELDS } from '../../../erp/fields.js';
import { createSource } from '../../../erp/index.js';
import { ConfigError } from '../../../errors.js';
import type { ScheduledRun } from '../../../queue/schedule.js';
import type { FlowDeps } from '../../flow.js';
import { type PolledSource, polledSource } from '../../lifecycle.js';
import { type InventoryRuntime, openInventoryRuntime } from '../runtime.js';
import type { DiffReport } from '../types.js';
import { pollDeletions } from './deletions.js';
import { DiffState } from './diff-state.js';
import { diffSource } from './snapshot-diff.js';

/** The other enabled inventory sources than `name`. */
function otherSources(rt: InventoryRuntime, name: string): string[] {
  return rt.config.inventory.sources.filter((source) => source.enabled && source.name !== name).map((source) => source.name);
}

function sourceConfig(rt: InventoryRuntime, name: string) {
  const config = rt.config.inventory.sources.find((source) => source.name === name);
  if (!config) throw new Error(`inventory source "${name}" is not configured`);
  return config;
}

/** Reads the deletions of polled source `name` (none without a deletions query); returns how many SKUs they vanished. */
export async function deletionsOf(rt: InventoryRuntime, sources: ReadonlyMap<string, PolledSource>, name: string): Promise<number> {
  const { source, limit, initialCursor } = polledSource('inventory', sources, name);
  if (!source.readDeletions) return 0;
  return pollDeletions(rt, source, { action: vanishedOptions(sourceConfig(rt, name)).action, limit, initialCursor, otherSources: otherSources(rt, name) });
}

/** Diffs polled source `name` now (its deletions first); see snapshot-diff.ts. */
export async function runDiff(rt: InventoryRuntime, sources: ReadonlyMap<string, PolledSource>, name: string, signal?: AbortSignal): Promise<DiffReport> {
  const { source } = polledSource('inventory', sources, name);
  const deleted = await deletionsOf(rt, sources, name);
  const report = await diffSource(rt, source, {
    vanished: vanishedOptions(sourceConfig(rt, name)),
    otherSources: otherSources(rt, name),
    ...(signal ? { signal } : {}),
  });
  report.deleted = deleted;
  rt.metrics.erpRecordsRead.inc({ source: name }, report.read);
  rt.metrics.markSuccess('inventory', rt.now());
  // The operator's line is the activity log's (src/ops/activity-log.ts), from this event.
  rt.logger.debug({ ...report }, 'snapshot diff done');
  rt.events.emit('inventory:diff:done', report);
  return report;
}

/** One scheduled diff per source with a `diff`, named `inventory:diff:{source}`. */
export function diffRuns(rt: InventoryRuntime, sources: ReadonlyMap<string, PolledSource>, diff: (name: string, signal: AbortSignal) => Promise<DiffReport>): ScheduledRun[] {
  return [...sources.keys()].flatMap((name) => {
    const schedule = sourceConfig(rt, name).diff?.schedule;
    if (schedule === undefined) return [];
    return [
      {
        name: `inventory:diff:${name}`,
        expression: schedule,
        run: (signal: AbortSignal) =>
          diff(name, signal).then(
            () => undefined,
            (error: Error) => {
              if (signal.aborted) return;
              rt.logger.error({ source: name, err: error }, 'inventory snapshot diff failed; no fingerprint changed');
              rt.events.emit('inventory:diff:failed', { source: name, error });
            },
          ),
      },
    ];
  });
}

/** Diffs configured source `name` once, with its own runtime and source (`storesync inventory diff`). */
export async function diffOnce(deps: FlowDeps, name: string): Promise<DiffReport> {
  const config = deps.config.inventory.sources.find((source) => source.name === name);
  if (!config) throw new ConfigError([`inventory.sources: no source named "${name}"`]);
  if (config.diff === undefined) throw new ConfigError([`inventory.sources.${name}: has no diff (set diff.schedule)`]);
  const rt = openInventoryRuntime(deps);
  const source = createSource(config, { fields: INVENTORY_FIELDS, logger: rt.logger });
  try {
    const sources = new Map<string, PolledSource>([[name, { source, limit: config.limit, initialCursor: 'initialCursor' in config ? config.initialCursor : null, schedule: config.schedule }]]);
    return await runDiff(rt, sources, name);
  } finally {
    await source.close();
    await rt.close();
  }
}

/**
 * Keeps `storesync_vanished_held` true to Redis before each scrape: a confirm from the CLI (another
 * process) or another instance's diff changes the held set too. Returns the function that stops it.
 */
export function collectHeld(rt: InventoryRuntime, sources: ReadonlyMap<string, PolledSource>): () => void {
  const names = [...sources.keys()].filter((name) => sourceConfig(rt, name).diff !== undefined);
  if (names.length === 0) return () => undefined;
  const diffState = new DiffState(rt.redis, rt.config.redis.prefix);
  return rt.metrics.addCollector(async () => {
    for (const name of names) rt.metrics.vanishedHeld.set({ source: name }, await diffState.heldCount(name));
  });
}
