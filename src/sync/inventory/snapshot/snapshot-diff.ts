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
import type { ChangeSource } from '../../../erp/types.js';
import { formatIssue } from '../../../errors.js';
import { enqueueSkus } from '../enqueue.js';
import { inventoryRecordIssues } from '../producer.js';
import type { InventoryRuntime } from '../runtime.js';
import { type PriceList, siteIdsOf, targetKey, targetLabel, targetParts } from '../target-key.js';
import type { DiffReport } from '../types.js';
import { DiffState, fingerprint } from './diff-state.js';
import { ErpSnapshot } from './erp-snapshot.js';
import { exceedsMassGuard } from './mass-guard.js';
import { snapshotEntries, type SnapshotRow,targetRows } from './snapshot-entries.js';
import { vanish, type VanishedAction } from './vanished.js';

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
const QUEUE_CHUNK = 5000;

/** What the read of a complete snapshot gave. */
interface SnapshotRead {
  read: number;
  /** Rows whose values changed, or are new (rows of `ErpSnapshot`, by Code). */
  changed: ErpSnapshot;
  /** Target key → new fingerprint, for the changed rows. */
  fingerprints: Map<string, string>;
  /** Codes of refused rows: kept as they were (neither changed nor vanished). */
  kept: Set<string>;
  refused: number;
  refusedSample: string[];
}

/** Diffs `source`'s snapshot against its previous complete one; see the module comment. */
export async function diffSource(rt: InventoryRuntime, source: ChangeSource, options: DiffOptions): Promise<DiffReport> {
  if (!source.snapshot) throw new Error(`inventory source ${source.name} has no snapshot to diff`);
  const diffState = new DiffState(rt.redis, rt.config.redis.prefix);
  // `newestStock` reads the state hashes: the layout before them is converted first (../state.ts).
  await rt.state.ensureLayout();
  // What is left of it once the snapshot is read: the SKUs absent from it.
  // Every value of the snapshot was read after this instant (../listing/reservations.ts).
  const observedAt = rt.now();
  const unseen = await diffState.fingerprints(source.name);
  const previous = unseen.size;
  const snapshot = await readSnapshot(source, unseen, options.signal, rt.config.inventory.priceLists, siteIdsOf(rt.config.inventory));
  const report: DiffReport = { source: source.name, read: snapshot.read, previous, changed: snapshot.fingerprints.size, queued: 0, vanished: 0, held: 0, refused: snapshot.refused, deleted: 0 };
  if (snapshot.refused > 0) {
    rt.logger.warn({ source: source.name, refused: snapshot.refused, sample: snapshot.refusedSample }, `snapshot diff of ${source.name}: ${snapshot.refused} row(s) refused; their SKUs are kept as they were`);
  }

  report.queued = await queueChanged(rt, diffState, source.name, snapshot.changed, observedAt);

  const absent = [...unseen.keys()].filter((key) => !snapshot.kept.has(targetParts(key).code));
  const elsewhere = await providedElsewhere(rt, diffState, source.name, absent, options.otherSources);
  const gone = absent.filter((key) => !elsewhere.has(key));
  const { action, maxFraction } = options.vanished;
  const at = rt.now();
  if (action !== 'keep' && exceedsMassGuard(gone.length, previous, maxFraction)) {
    report.held = gone.length;
    await diffState.replaceHeld(source.name, gone, { at });
    rt.logger.error(
      { source: source.name, held: gone.length, previous, maxFraction, sample: gone.slice(0, 10).map((key) => targetLabel(key)) },
      `snapshot diff of ${source.name}: ${gone.length} of ${previous} SKUs vanished at once (more than ${maxFraction * 100}%): none is ${action === 'zero' ? 'zeroed' : 'unpublished'}; ` +
        `check the source, then \`storesync inventory vanished --source ${source.name}\` lists them, \`--confirm\` applies it and \`--keep\` writes nothing`,
    );
  } else {
    await diffState.replaceHeld(source.name, [], { at });
    await vanish(rt, diffState, source.name, gone.map((key) => ({ key })), { action, reason: 'absent' });
    report.vanished = gone.length;
  }
  rt.metrics.vanishedHeld.set({ source: source.name }, report.held);
  await diffState.writeFingerprints(source.name, snapshot.fingerprints, [...elsewhere]);
  return report;
}

/**
 * Reads the whole snapshot, keeping the changed rows only, and takes each key read out of `unseen` (the
 * previous fingerprints), so that what remains is absent: one map of the catalogue, not two. A key read
 * twice counts as changed the second time (queued again, which changes nothing). Throws (comparing
 * nothing) when the read fails.
 */
async function readSnapshot(
  source: ChangeSource,
  unseen: Map<string, string>,
  signal: AbortSignal | undefined,
  lists: readonly PriceList[],
  sites: readonly number[],
): Promise<SnapshotRead> {
  const out: SnapshotRead = { read: 0, changed: new ErpSnapshot(), fingerprints: new Map(), kept: new Set(), refused: 0, refusedSample: [] };
  const refuse = (code: string | undefined, reason: string): void => {
    out.refused++;
    if (code !== undefined) out.kept.add(code);
    if (out.refusedSample.length < 10) out.refusedSample.push(reason);
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
      const print = fingerprint(record.fields);
      const before = unseen.get(key);
      unseen.delete(key);
      if (before === print) continue;
      out.fingerprints.set(key, print);
      out.changed.add(source.name, record.fields.Code as string, record);
    }
  }
  signal?.throwIfAborted();
  return out;
}

/**
 * Merges and queues the changed rows. A SKU its deletion still holds back (deleted at a version its
 * row is not newer than) is not queued; one that had vanished comes back (and, unpublished by it, is
 * published again unless its row says otherwise).
 */
async function queueChanged(rt: InventoryRuntime, diffState: DiffState, source: string, changed: ErpSnapshot, observedAt: number): Promise<number> {
  const rows: Array<SnapshotRow & { key: string }> = [];
  for (const [sku, first] of changed.skus()) {
    for (let row: number | undefined = first; row !== undefined; row = changed.next(row)) {
      const values = changed.fields(row);
      rows.push({ key: targetKey({ fields: { ...values, Code: sku } }, rt.config.inventory.priceLists)!, source, cursor: changed.cursor(row), sku, values, fields: Object.keys(values) });
    }
  }
  let queued = 0;
  const at = rt.now();
  for (let start = 0; start < rows.length; start += QUEUE_CHUNK) {
    const chunk = rows.slice(start, start + QUEUE_CHUNK);
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
    if (toQueue.length > 0) {
      const rows = targetRows(toQueue, rt.config.inventory.priceLists, siteIdsOf(rt.config.inventory));
      const priorities = await rt.state.merge(await snapshotEntries(rt.state, rows, at, { resend: true }, observedAt));
      queued += await enqueueSkus(
        rt.queue,
        rows.map(({ sku }) => sku),
        { priorities, batchSize: rt.config.inventory.batchSize, spread: rt.config.inventory.concurrency },
      );
    }
    await diffState.clearVanished(source, back);
  }
  return queued;
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
