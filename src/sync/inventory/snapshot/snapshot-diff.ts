/**
 * The snapshot diff (issue 22): a source's full current set, read on `diff.schedule`, compared SKU by
 * SKU with the fingerprints of its previous complete snapshot (`DiffState`), so that a change the
 * source never announced (no cursor moved: a merge, a DBA fix, a table without a change column) is
 * still queued, and a SKU gone from the set has vanished.
 *
 * Nothing is compared until the read is complete: a snapshot that fails or is cut short (an error, a
 * shutdown) queues nothing and changes no fingerprint. Then, in this order: the changed SKUs are
 * merged and queued (versioned as `snapshotEntries` says, flagged `resend` so that the worker's change
 * detection, not the version, decides), the vanished SKUs are vanished or held, and only last the
 * fingerprints move. A crash in between re-queues the same values next time, which changes nothing.
 *
 * The mass guard: a diff that would vanish more than `vanished.maxFraction` of the previous snapshot's
 * SKUs, and more than 10, vanishes none; they are held (`inv:held:{source}`, the vanished_held gauge,
 * an error line) until a person confirms (`confirmHeld`) or they come back. Their fingerprints stay, so
 * a SKU that comes back unchanged writes nothing.
 */
import { cursorToVersion } from '../../../erp/cursor.js';
import type { ChangeSource, Cursor, SourceRecord } from '../../../erp/types.js';
import { formatIssue } from '../../../errors.js';
import { enqueueSkus } from '../enqueue.js';
import { inventoryRecordIssues } from '../producer.js';
import type { InventoryRuntime } from '../runtime.js';
import { type PriceList, siteIdsOf, targetKey, targetLabel, targetParts } from '../target-key.js';
import type { DiffReport } from '../types.js';
import { DiffState, fingerprint } from './diff-state.js';
import { exceedsMassGuard } from './mass-guard.js';
import { snapshotEntries, type SnapshotRow, targetRows } from './snapshot-entries.js';
import { announceVanished, vanish, type VanishedAction } from './vanished.js';

/** How to diff a source. */
export interface DiffOptions {
  /** The source's `vanished` options. */
  vanished: { action: VanishedAction; maxFraction: number };
  /** The other enabled inventory sources: a SKU one of them still provides has not vanished. */
  otherSources: readonly string[];
  /** Stops the read between two chunks (shutdown): a cut-short diff changes nothing. */
  signal?: AbortSignal;
}

/** SKUs merged and queued per round. */
const QUEUE_CHUNK = 1000;

/** Rows compared per round trip to Redis (a source's chunk is split in these). */
const COMPARE_CHUNK = 1000;

/** What the read of a complete snapshot gave (the rows themselves are staged in Redis: diff-state.ts). */
interface SnapshotRead {
  read: number;
  /** Target keys whose values changed, or are new. */
  changed: number;
  refused: number;
  refusedSample: string[];
}

/** A changed row as staged: its Code, cursor and values (without `Code`). */
type StagedRow = [string, Cursor, Record<string, unknown>];

/** Diffs `source`'s snapshot against its previous complete one; see the module comment. */
export async function diffSource(rt: InventoryRuntime, source: ChangeSource, options: DiffOptions): Promise<DiffReport> {
  if (!source.snapshot) throw new Error(`inventory source ${source.name} has no snapshot to diff`);
  const diffState = new DiffState(rt.redis, rt.config.redis.prefix);
  // `newestStock` reads the state hashes: the layout before them is converted first (../state.ts).
  await rt.state.ensureLayout();
  // Every value of the snapshot was read after this instant (../listing/reservations.ts).
  const observedAt = rt.now();
  // A diff cut short before (a crash) may have left its staging: this one starts from none.
  await diffState.clearStaging(source.name);
  try {
    const previous = await diffState.fingerprintCount(source.name);
    const snapshot = await readSnapshot(diffState, source, options.signal, rt.config.inventory.priceLists, siteIdsOf(rt.config.inventory));
    const report: DiffReport = { source: source.name, read: snapshot.read, previous, changed: snapshot.changed, queued: 0, vanished: 0, held: 0, refused: snapshot.refused, deleted: 0 };
    if (snapshot.refused > 0) {
      rt.logger.warn({ source: source.name, refused: snapshot.refused, sample: snapshot.refusedSample }, `snapshot diff of ${source.name}: ${snapshot.refused} row(s) refused; their SKUs are kept as they were`);
    }

    report.queued = await queueChanged(rt, diffState, source.name, observedAt);
    await stageAbsent(rt, diffState, source.name, options.otherSources);

    const gone = await diffState.goneCount(source.name);
    const { action, maxFraction } = options.vanished;
    const at = rt.now();
    if (action !== 'keep' && exceedsMassGuard(gone, previous, maxFraction)) {
      report.held = gone;
      const sample = await diffState.holdGone(source.name, { at });
      rt.logger.error(
        { source: source.name, held: gone, previous, maxFraction, sample: sample.map((key) => targetLabel(key)) },
        `snapshot diff of ${source.name}: ${gone} of ${previous} SKUs vanished at once (more than ${maxFraction * 100}%): none is ${action === 'zero' ? 'zeroed' : 'unpublished'}; ` +
          `check the source, then \`storesync inventory vanished --source ${source.name}\` lists them, \`--confirm\` applies it and \`--keep\` writes nothing`,
      );
    } else {
      await diffState.replaceHeld(source.name, [], { at });
      report.vanished = await vanishGone(rt, diffState, source.name, action);
    }
    rt.metrics.vanishedHeld.set({ source: source.name }, report.held);
    await diffState.commitFingerprints(source.name);
    return report;
  } finally {
    await diffState.clearStaging(source.name);
  }
}

/**
 * Reads the whole snapshot a chunk at a time, comparing each chunk with the previous fingerprints of its
 * keys only, and stages in Redis every row's fingerprint, the changed rows and the Codes of refused rows;
 * the process holds one chunk. A key read twice counts as changed the second time (queued again, which
 * changes nothing). Throws (comparing nothing) when the read fails.
 */
async function readSnapshot(
  diffState: DiffState,
  source: ChangeSource,
  signal: AbortSignal | undefined,
  lists: readonly PriceList[],
  sites: readonly number[],
): Promise<SnapshotRead> {
  const out: SnapshotRead = { read: 0, changed: 0, refused: 0, refusedSample: [] };
  let kept: string[] = [];
  const refuse = (code: string | undefined, reason: string): void => {
    out.refused++;
    if (code !== undefined) kept.push(code);
    if (out.refusedSample.length < 10) out.refusedSample.push(reason);
  };
  let batch: Array<{ key: string; print: string; record: SourceRecord }> = [];
  const compare = async (): Promise<void> => {
    // Compared and staged in Redis: only the changed rows' indexes come back (diff-state.ts, COMPARE_READ).
    const changed = await diffState.compareRead(source.name, batch.map(({ key, print }): [string, string] => [key, print]));
    const rows = changed.map((i): [string, string] => {
      const { key, record } = batch[i]!;
      const { Code, ...values } = record.fields;
      return [key, JSON.stringify([Code as string, record.cursor, values] satisfies StagedRow)];
    });
    out.changed += await diffState.stageRead(source.name, rows, kept);
    batch = [];
    kept = [];
  };
  for await (const chunk of source.snapshot!()) {
    signal?.throwIfAborted();
    for (const record of chunk.rejected ?? []) {
      out.read++;
      const named = record.issues[0]?.record;
      refuse(named !== undefined && named !== record.ref ? named : undefined, `${record.ref}: ${record.issues.map(formatIssue).join('; ')}`);
    }
    for (const record of chunk) {
      out.read++;
      const key = targetKey(record, lists);
      const issues = inventoryRecordIssues(record, lists, sites);
      if (key === undefined || issues.length > 0) {
        refuse(typeof record.fields.Code === 'string' ? record.fields.Code : undefined, `${record.ref}: ${issues.map(formatIssue).join('; ')}`);
        continue;
      }
      // Fields the source refused alone (a fractional Stock under stockRounding: reject): the row counts as
      // refused, and its other fields are compared.
      if (record.refused) {
        out.refused++;
        if (out.refusedSample.length < 10) out.refusedSample.push(`${record.ref}: ${record.refused.map(formatIssue).join('; ')}`);
      }
      batch.push({ key, print: fingerprint(record.fields), record });
      if (batch.length >= COMPARE_CHUNK) await compare();
    }
    if (kept.length >= COMPARE_CHUNK) await compare();
  }
  await compare();
  signal?.throwIfAborted();
  return out;
}

/**
 * Merges and queues the changed rows staged by the read, a chunk at a time. A SKU its deletion still
 * holds back (deleted at a version its row is not newer than) is not queued; one that had vanished
 * comes back (and, unpublished by it, is published again unless its row says otherwise).
 */
async function queueChanged(rt: InventoryRuntime, diffState: DiffState, source: string, observedAt: number): Promise<number> {
  let queued = 0;
  const at = rt.now();
  let cursor = '0';
  let pending: Array<SnapshotRow & { key: string }> = [];
  const flush = async (): Promise<void> => {
    if (pending.length > 0) queued += await queueRows(rt, diffState, source, pending, at, observedAt);
    pending = [];
  };
  do {
    const [next, pairs] = await diffState.fingerprintPage(source, cursor, 'diff-rows');
    for (const [key, raw] of pairs) {
      const [sku, rowCursor, values] = JSON.parse(raw) as StagedRow;
      pending.push({ key, source, cursor: rowCursor, sku, values, fields: Object.keys(values) });
    }
    if (pending.length >= QUEUE_CHUNK) await flush();
    cursor = next;
  } while (cursor !== '0');
  await flush();
  return queued;
}

/** Merges and queues one chunk of changed rows (see `queueChanged`); returns how many SKUs were queued. */
async function queueRows(rt: InventoryRuntime, diffState: DiffState, source: string, chunk: Array<SnapshotRow & { key: string }>, at: number, observedAt: number): Promise<number> {
  const vanished = await diffState.vanished(source, chunk.map(({ key }) => key));
  // A change newer than a deletion (polled since) ended it: the SKU's newest ERP stock says so.
  const deleted = [...vanished].filter(([, entry]) => entry.reason === 'deleted').map(([key]) => targetParts(key).code);
  const newest = await diffState.newestStock(deleted);
  const back: string[] = [];
  const toQueue = chunk.filter((row) => {
    const entry = vanished.get(row.key);
    if (entry === undefined) return true;
    const version = cursorToVersion(row.cursor) ?? newest.get(row.sku)?.version ?? null;
    if (entry.reason === 'deleted' && entry.version !== undefined && (version === null || version <= entry.version)) return false;
    back.push(row.key);
    if (entry.action === 'unpublish' && !('Published' in row.values)) {
      row.values = { ...row.values, Published: true };
      row.fields = [...row.fields, 'Published'];
    }
    return true;
  });
  let queued = 0;
  if (toQueue.length > 0) {
    const rows = targetRows(toQueue, rt.config.inventory.priceLists, siteIdsOf(rt.config.inventory));
    const priorities = await rt.state.merge(await snapshotEntries(rt.state, rows, at, { resend: true }, observedAt));
    queued = await enqueueSkus(
      rt.queue,
      rows.map(({ sku }) => sku),
      { priorities, batchSize: rt.config.inventory.batchSize, spread: rt.config.inventory.concurrency },
    );
  }
  await diffState.clearVanished(source, back);
  return queued;
}

/**
 * Finds the SKUs of the previous snapshot this one did not read, a page of the previous fingerprints at
 * a time (compared with what the read staged in Redis, which answers the absent ones only): those of a refused row's Code keep their fingerprint, those another source still provides lose
 * it (and are not vanished), the others are staged as gone.
 */
async function stageAbsent(rt: InventoryRuntime, diffState: DiffState, source: string, others: readonly string[]): Promise<void> {
  let cursor = '0';
  do {
    const [next, absent] = await diffState.absentPage(source, cursor);
    cursor = next;
    const kept = await diffState.keptCodes(source, absent.map(([key]) => targetParts(key).code));
    const stay = absent.filter((_, i) => kept[i]);
    const rest = absent.filter((_, i) => !kept[i]);
    const elsewhere = await providedElsewhere(rt, diffState, source, rest.map(([key]) => key), others);
    await diffState.stageAbsent(source, stay, rest.filter(([key]) => !elsewhere.has(key)));
  } while (cursor !== '0');
}

/** Vanishes the SKUs staged as gone with `action`, a page at a time; counts and logs them once. Returns how many. */
async function vanishGone(rt: InventoryRuntime, diffState: DiffState, source: string, action: VanishedAction): Promise<number> {
  let count = 0;
  const sample: string[] = [];
  let cursor = '0';
  do {
    const [next, pairs] = await diffState.fingerprintPage(source, cursor, 'diff-gone');
    cursor = next;
    await vanish(rt, diffState, source, pairs.map(([key]) => ({ key })), { action, reason: 'absent', quiet: true });
    count += pairs.length;
    sample.push(...pairs.slice(0, 10 - sample.length).map(([key]) => key));
  } while (cursor !== '0');
  if (count > 0) announceVanished(rt, source, count, sample, { action, reason: 'absent' });
  return count;
}

/**
 * Of `keys`, those another enabled source still provides: in its last complete snapshot, or the source
 * of the SKU's newest ERP stock.
 */
export async function providedElsewhere(rt: InventoryRuntime, diffState: DiffState, source: string, keys: readonly string[], others: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (keys.length === 0 || others.length === 0) return found;
  for (const other of others) for (const key of await diffState.hasFingerprints(other, keys)) found.add(key);
  const rest = keys.filter((key) => !found.has(key));
  const newest = await diffState.newestStock(rest.map((key) => targetParts(key).code));
  rest.forEach((key) => {
    const from = newest.get(targetParts(key).code)?.source;
    if (from !== undefined && from !== source && others.includes(from)) found.add(key);
  });
  return found;
}
