/**
 * One poll of one ERP source, the same for every flow that reads an ERP source (inventory,
 * fulfillment): the stored cursor (or the source's initial one) is where it starts, `drainSource`
 * reads and queues batch by batch and moves the cursor after each, and the poll is counted in the
 * metrics. What a batch becomes (pending state and jobs, refusals) is the flow's `queueBatch`.
 */
import { compareCursors, cursorToVersion, isTimestampCursor } from '../erp/cursor.js';
import type { ChangeBatch, ChangeSource, Cursor, KnownRows } from '../erp/types.js';
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
  /** What this process learned of the source in its earlier polls (bounds the overlap; see `PollHistory`). */
  history?: PollHistory;
  /** Rows this process already delivered from the source (the overlap's re-reads are only counted). */
  known?: KnownRows;
}

/**
 * Kept in memory per source by the flow; after a restart the first poll reads the whole overlap.
 *
 * The overlap re-reads rows committed late, whose timestamp is older than the cursor. A row the last
 * complete poll could not see committed after that poll began, so its timestamp is at most `overlapMs`
 * older than that instant *on the ERP's clock*. The ERP's clock is learned from the newest rows: a row
 * read at time r (storesync's clock) with timestamp t says the ERP's clock is at most r − t behind, and
 * the smallest r − t of a poll's new rows bounds it. The next poll's overlap then reaches back to
 * `overlapMs` before the last poll began, moved back by that lag, but never further than `overlapMs`
 * before the cursor (`pollStart`). ERP timestamps far behind the clock (a time zone read wrong, test
 * data) give a large lag: the whole overlap is read, as without this.
 */
export interface PollHistory {
  /** When the last complete poll began (storesync's clock, ms). */
  lastCompleteAt?: number;
  /** The most the ERP's clock can be behind storesync's, from the newest rows seen (ms). */
  lagMs?: number;
  /**
   * The cursor the last complete poll stored when it ended caught up (every row at it read); unset when
   * it stopped early. A poll from that cursor may start past it (`pollStart`'s `pastCursor`).
   */
  caughtUpAt?: Cursor;
}

/** What one poll of one source did. */
export interface SourcePollReport {
  source: string;
  /** Records read, valid and rejected (rows re-read by the overlap or an inclusive cursor count again). */
  read: number;
  /** Of those, rows re-read and recognised as delivered before they were normalised (`PollOptions.known`). */
  known: number;
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
  const report: SourcePollReport = { source: source.name, read: 0, known: 0, rejected: 0, queued: 0, cursor: null };
  const startedAt = target.now();
  const { history } = options;
  // The last poll's start on the ERP's clock, at the latest (see PollHistory).
  const previousPollAt = history?.lastCompleteAt === undefined || history.lagMs === undefined ? undefined : history.lastCompleteAt - history.lagMs;
  const from = (await target.cursors.get(source.name)) ?? options.initialCursor ?? null;
  const fromVersion = isTimestampCursor(from) ? cursorToVersion(from) : null;
  const pastCursor = previousPollAt !== undefined && history?.caughtUpAt !== undefined && compareCursors(history.caughtUpAt, from) === 0;
  let lagMs: number | undefined;
  const { cursor, read, known, caughtUp } = await drainSource(source, {
    ...(previousPollAt === undefined ? {} : { previousPollAt }),
    ...(pastCursor ? { pastCursor } : {}),
    ...(options.known ? { known: options.known } : {}),
    cursor: from,
    limit: options.limit,
    maxRounds: MAX_ROUNDS,
    queue: async (batch) => {
      // The batch's newest row, when newer than the stored cursor (a re-read row says nothing of the
      // ERP's clock now): read at one instant, it bounds the lag most tightly.
      const newest = isTimestampCursor(batch.nextCursor) ? cursorToVersion(batch.nextCursor) : null;
      if (newest !== null && (fromVersion === null || newest > fromVersion)) lagMs = Math.min(lagMs ?? Number.POSITIVE_INFINITY, target.now() - newest);
      const { queued, rejected } = await target.queueBatch(batch);
      report.queued += queued;
      report.rejected += rejected;
    },
    saveCursor: (next) => target.cursors.set(source.name, next),
  });
  report.read = read;
  report.known = known;
  report.cursor = cursor;
  if (history) {
    history.lastCompleteAt = startedAt;
    if (lagMs !== undefined) history.lagMs = lagMs;
    if (caughtUp) history.caughtUpAt = cursor;
    else delete history.caughtUpAt;
  }
  target.metrics.erpRecordsRead.inc({ source: source.name }, report.read);
  target.metrics.markSuccess(target.flow, target.now());
  return report;
}
