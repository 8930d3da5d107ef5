/**
 * The deletions query of a source (ERPNext's `tabDeleted Document`): SKUs the ERP names as deleted,
 * read with the same cursor rules as the changes (overlap, paging, a cursor stored once queued, under
 * `state:inv-deletions:cursor:{source}`), each vanished at once with the source's action and versioned
 * by its deletion's cursor, so that a change newer than the deletion brings the SKU back and an older
 * one (re-read by the overlap) does not.
 */
import { cursorToVersion } from '../../../erp/cursor.js';
import type { ChangeSource, Cursor } from '../../../erp/types.js';
import { drainSource, SourceCursors } from '../../drain-source.js';
import type { InventoryRuntime } from '../runtime.js';
import { targetKey } from '../target-key.js';
import { DiffState } from './diff-state.js';
import { providedElsewhere } from './snapshot-diff.js';
import { vanish, type VanishedAction, type Vanishing } from './vanished.js';

/** Full batches read in one round before yielding to the next tick. */
const MAX_ROUNDS = 50;

/** How to read a source's deletions. */
export interface DeletionOptions {
  action: VanishedAction;
  limit: number;
  initialCursor: Cursor;
  /** The other enabled inventory sources: a SKU one of them still provides has not vanished. */
  otherSources: readonly string[];
}

/** Reads the deletions since the stored cursor and vanishes the SKUs they name; returns how many. */
export async function pollDeletions(rt: InventoryRuntime, source: ChangeSource, options: DeletionOptions): Promise<number> {
  const readDeletions = source.readDeletions?.bind(source);
  if (!readDeletions) return 0;
  const cursors = new SourceCursors(rt.redis, rt.config.redis.prefix, 'inv-deletions');
  const diffState = new DiffState(rt.redis, rt.config.redis.prefix);
  let deleted = 0;
  const from = (await cursors.get(source.name)) ?? options.initialCursor;
  await drainSource(
    { name: source.name, kind: source.kind, readChanges: readDeletions, close: () => Promise.resolve() },
    {
      cursor: from,
      limit: options.limit,
      maxRounds: MAX_ROUNDS,
      queue: async (batch) => {
        // The newest deletion of each SKU in the batch.
        const byKey = new Map<string, Vanishing>();
        for (const record of batch.records) {
          const key = targetKey(record, rt.config.inventory.priceLists);
          if (key === undefined) continue;
          const version = cursorToVersion(record.cursor) ?? undefined;
          const known = byKey.get(key);
          if (known && (known.version ?? 0) >= (version ?? 0)) continue;
          byKey.set(key, { key, cursor: record.cursor, ...(version === undefined ? {} : { version }) });
        }
        // A deletion re-read by the overlap was applied already.
        const recorded = await diffState.vanished(source.name, [...byKey.keys()]);
        const fresh = [...byKey.values()].filter(({ key, version }) => {
          const entry = recorded.get(key);
          return !(entry?.reason === 'deleted' && (entry.version ?? 0) >= (version ?? 0));
        });
        const elsewhere = await providedElsewhere(rt, diffState, source.name, fresh.map(({ key }) => key), options.otherSources);
        const items = fresh.filter(({ key }) => !elsewhere.has(key));
        await vanish(rt, diffState, source.name, items, { action: options.action, reason: 'deleted' });
        deleted += items.length;
      },
      saveCursor: (next) => cursors.set(source.name, next),
    },
  );
  return deleted;
}
