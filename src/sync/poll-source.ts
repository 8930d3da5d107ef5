/**
 * One poll of one ERP source, the same for every flow that reads an ERP source (inventory,
 * fulfillment): the stored cursor (or the source's initial one) is where it starts, `drainSource`
 * reads and queues batch by batch and moves the cursor after each, and the poll is counted in the
 * metrics. What a batch becomes (pending state and jobs, refusals) is the flow's `queueBatch`.
 */
import type { ChangeBatch, ChangeSource, Cursor } from '../erp/types.js';
import type { Metrics } from '../metrics.js';
import { drainSource, type SourceCursors } from './drain-source.js';

/** Full batches read in one poll before yielding to the next tick (a backlog drains over several). */
const MAX_ROUNDS = 50;

/** How to poll a source. */
export interface PollOptions {
  /** Records per `readChanges` call (`source.limit`). */
  limit: number;
  /** Cursor of a source never polled before (`source.initialCursor`). */
  initialCursor?: Cursor;
}

/** What one poll of one source did. */
export interface SourcePollReport {
  source: string;
  /** Records read, valid and rejected (rows re-read by the overlap or an inclusive cursor count again). */
  read: number;
  rejected: number;
  /** Jobs added (or found already waiting). */
  queued: number;
  /** The cursor stored after the poll. */
  cursor: Cursor;
}

/** What a flow gives `pollChangeSource`. */
export interface PollTarget {
  /** The flow, as metrics label it (`inventory`, `fulfillment`). */
  flow: string;
  cursors: SourceCursors;
  metrics: Metrics;
  now: () => number;
  /** Queues one batch durably; returns how many new jobs it queued and how many records it refused. */
  queueBatch: (batch: ChangeBatch) => Promise<{ queued: number; rejected: number }>;
}

/** Polls `source` until it returns a short batch (bounded); returns what was read, refused and queued. */
export async function pollChangeSource(source: ChangeSource, options: PollOptions, target: PollTarget): Promise<SourcePollReport> {
  const report: SourcePollReport = { source: source.name, read: 0, rejected: 0, queued: 0, cursor: null };
  const { cursor, read } = await drainSource(source, {
    cursor: (await target.cursors.get(source.name)) ?? options.initialCursor ?? null,
    limit: options.limit,
    maxRounds: MAX_ROUNDS,
    queue: async (batch) => {
      const { queued, rejected } = await target.queueBatch(batch);
      report.queued += queued;
      report.rejected += rejected;
    },
    saveCursor: (next) => target.cursors.set(source.name, next),
  });
  report.read = read;
  report.cursor = cursor;
  target.metrics.erpRecordsRead.inc({ source: source.name }, report.read);
  target.metrics.markSuccess(target.flow, target.now());
  return report;
}
