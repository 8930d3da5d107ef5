/**
 * One poll of one ERP source, shared by the inventory and fulfillment producers. The first read starts
 * the source's overlap before the stored cursor (late commits); the following reads continue where the
 * previous batch ended (after its last key, for a source that pages by key), without overlap, until a
 * short batch (caught up) or `maxRounds`. After each batch is queued the stored cursor moves to the
 * highest cursor seen, never backwards, and only then is the source told to commit (CSV files move). A
 * crash anywhere before re-reads the same rows: harmless.
 */
import type { Redis } from 'ioredis';

import { compareCursors, maxCursor } from '../erp/cursor.js';
import type { ChangeBatch, ChangeSource, Cursor, KnownRows } from '../erp/types.js';
import { stateKey } from '../queue/connection.js';

/** Where a flow keeps the cursor of each of its sources: `state:{flow}:cursor:{source}`, JSON. */
export class SourceCursors {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #flow: string;

  constructor(redis: Redis, prefix: string, flow: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#flow = flow;
  }

  /** The stored cursor of a source, or undefined before its first poll. */
  async get(source: string): Promise<Cursor | undefined> {
    const raw = await this.#redis.get(stateKey(this.#prefix, this.#flow, 'cursor', source));
    return raw === null ? undefined : (JSON.parse(raw) as Cursor);
  }

  /** Stores a source's cursor (JSON keeps the number/string distinction). */
  async set(source: string, cursor: Cursor): Promise<void> {
    await this.#redis.set(stateKey(this.#prefix, this.#flow, 'cursor', source), JSON.stringify(cursor));
  }
}

/** How to drain a source. */
export interface DrainOptions {
  /** The cursor stored after the last poll (or the source's initial cursor). */
  cursor: Cursor;
  /** Records per read (`source.limit`). */
  limit: number;
  /** Most reads past the stored cursor in one poll; a larger backlog continues at the next tick. */
  maxRounds: number;
  /** Queues a batch durably; the cursor moves past it only once this resolves. */
  queue: (batch: ChangeBatch) => Promise<void>;
  /** Stores the source's cursor. */
  saveCursor: (cursor: Cursor) => Promise<void>;
  /** When the source's last complete poll began (ms), if known: bounds the overlap (`pollStart`). */
  previousPollAt?: number;
  /** The last poll caught up at `cursor` (see `ReadOptions.pastCursor`), passed to the first read. */
  pastCursor?: boolean;
  /** Rows already delivered, passed to every read (`ReadOptions.known`). */
  known?: KnownRows;
}

/**
 * Reads inside the overlap window do not count against `maxRounds` (the window is finite and each read
 * moves through it), so a window busier than the round budget is still crossed in one poll instead of
 * being re-read from its start at every tick; this factor only guards against a source that misbehaves.
 */
const MAX_READS_FACTOR = 100;

/** The rows a batch read: its records, valid and refused, and the ones `known` left out. */
export function batchRows(batch: ChangeBatch): number {
  return batch.records.length + batch.rejected.length + (batch.known ?? 0);
}

/**
 * Reads, queues and commits batches until the source is caught up; returns the stored cursor, the rows
 * read, and whether it caught up (a short batch: every row at or after where it read was read).
 */
export async function drainSource(source: ChangeSource, options: DrainOptions): Promise<{ cursor: Cursor; read: number; known: number; caughtUp: boolean }> {
  const polledFrom = options.cursor;
  let stored = options.cursor;
  let position = options.cursor;
  // The key the next read continues after, for a source that pages by key (erp/polling.ts).
  let afterKey: string | number | undefined;
  let read = 0;
  let known = 0;
  let rounds = 0;
  let caughtUp = false;
  for (let reads = 0; rounds < options.maxRounds && reads < options.maxRounds * MAX_READS_FACTOR; reads++) {
    const first = reads === 0;
    const batch = await source.readChanges(position, options.limit, {
      overlap: first,
      ...(first && options.previousPollAt !== undefined ? { previousPollAt: options.previousPollAt } : {}),
      ...(first && options.pastCursor === true ? { pastCursor: true } : {}),
      ...(options.known ? { known: options.known } : {}),
      ...(first || afterKey === undefined ? {} : { afterKey }),
    });
    await options.queue(batch);
    const next = maxCursor(stored, batch.nextCursor);
    if (compareCursors(next, stored) !== 0) await options.saveCursor(next);
    stored = next;
    await source.commit?.(batch);
    const rows = batchRows(batch);
    read += rows;
    known += batch.known ?? 0;
    const resume = batch.resumeFrom ?? batch.nextCursor;
    const moved = compareCursors(resume, position) > 0;
    // Caught up, or a batch that ended where the last one did (nothing more to read this poll); a batch
    // paged by key within one cursor did move.
    const pagedOn = batch.resumeKey !== undefined && (first || batch.resumeKey !== afterKey);
    if (rows < options.limit) {
      caughtUp = true;
      break;
    }
    if (reads > 0 && !moved && !pagedOn) break;
    // A group of rows sharing one cursor is read whole (the next poll would read it from its start again).
    if (moved && compareCursors(resume, polledFrom) > 0) rounds += 1;
    position = resume;
    afterKey = batch.resumeKey;
  }
  return { cursor: stored, read, known, caughtUp };
}
