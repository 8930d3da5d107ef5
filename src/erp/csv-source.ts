/**
 * A CSV drop folder: the ERP writes exports into `dir`; each poll reads the settled files matching
 * `pattern` (oldest first), and `commit` moves each to `processed/` or, if any row was bad, to
 * `rejected/` with `<file>.errors.txt` beside it naming each bad row. A partly bad file still has its
 * good rows queued: holding back a whole price list for one typo would leave every other price stale,
 * and the rejected/ folder with its report is where someone looks for what did not go through.
 *
 * The folder is the queue: a file still in `dir` has not been consumed, so nothing moves before
 * `commit` and a crash before queueing re-reads the file. Cursors matter little: a record's cursor is
 * its file's modification time (ISO, UTC), the batch's `nextCursor` the newest of them. A file is never
 * split across batches, so a batch may exceed `limit` by the rest of its last file. Within one process,
 * a file handed out and not yet committed is not handed out again to a caller that passes a cursor at
 * or past it (a caller reading batch after batch before committing); a caller passing an older cursor
 * (retrying after a failed enqueue), or a new process, gets it again.
 *
 * With `snapshotFile` (the ERP's full "all items" export, outside the drop folder), the source also
 * has a `snapshot` for the reconcile: the file is streamed in place, read by the same rules, never moved.
 */
import { mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

import { CsvError } from 'csv-parse';

import type { CsvSourceConfig } from '../config/schema.js';
import { ConfigError, ErpError, formatIssue } from '../errors.js';
import type { Logger } from '../log.js';
import { type CsvReadOptions, readCsvFile, readCsvRows } from './csv-file.js';
import { compareCursors, maxCursor } from './cursor.js';
import { ignoredColumnLogger, snapshotChunk, type SourceDeps } from './source-deps.js';
import type { ChangeBatch, ChangeSource, Cursor, RejectedRecord, SnapshotChunk, SourceRecord, UnsettledFile } from './types.js';

/** What `commit` needs about one file of a batch (kept JSON-serialisable in `ChangeBatch.handle`). */
interface BatchFile {
  name: string;
  mtimeMs: number;
  size: number;
  rows: number;
  problems: string[];
}

interface CsvHandle {
  kind: 'csv';
  files: BatchFile[];
}

/** A glob of file names (`*`, `?`), matched case-insensitively: Windows ERPs write `.CSV` too. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

/** A file name prefix that sorts by time and is valid on every file system. */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[:.]/g, '-');
}

function isHandle(value: unknown): value is CsvHandle {
  return value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === 'csv';
}

/** Creates a CSV drop-folder source. */
export function createCsvSource(config: CsvSourceConfig, deps: SourceDeps): ChangeSource {
  assertSnapshotOutsideDropFolder(config);
  const logger = deps.logger.child({ source: config.name });
  const now = deps.now ?? Date.now;
  const matches = globToRegExp(config.pattern);
  const readOptions = {
    delimiter: config.delimiter,
    encoding: config.encoding,
    decimalComma: config.decimalComma,
    ...(config.stockRounding === undefined ? {} : { stockRounding: config.stockRounding }),
    mapping: config.mapping,
    catalog: deps.fields,
    onIgnored: ignoredColumnLogger(logger),
  };
  /** Files handed out and not committed yet, by name: their modification time then, and their cursor. */
  const pending = new Map<string, { mtimeMs: number; cursor: Cursor }>();

  /** The files to read, oldest first, and those left because they may still be written. */
  async function settledFiles(cursor: Cursor): Promise<{ files: { name: string; mtimeMs: number; size: number }[]; unsettled: UnsettledFile[] }> {
    let entries;
    try {
      entries = await readdir(config.dir, { withFileTypes: true });
    } catch (error) {
      throw new ErpError(config.name, `cannot read the drop folder ${config.dir}: ${(error as Error).message}`, { code: 'ERR_ERP_FILE', cause: error });
    }
    const files = [];
    const unsettled: UnsettledFile[] = [];
    for (const entry of entries) {
      if (!entry.isFile() || !matches.test(entry.name)) continue;
      const info = await stat(join(config.dir, entry.name)).catch(() => undefined);
      if (info === undefined) continue;
      // A file written in the last settleMs may still be growing: leave it for a later poll.
      const nowMs = now();
      if (stillBeingWritten(info.mtimeMs, config.settleMs, nowMs)) {
        logger.debug({ file: entry.name }, 'file changed recently; not read until it settles');
        unsettled.push({ file: entry.name, ageMs: Math.max(0, Math.round(nowMs - info.mtimeMs)), settleMs: config.settleMs });
        continue;
      }
      const handedOut = pending.get(entry.name);
      const unchanged = handedOut !== undefined && handedOut.mtimeMs === info.mtimeMs;
      if (unchanged && cursor !== null && compareCursors(handedOut.cursor, cursor) <= 0) continue;
      files.push({ name: entry.name, mtimeMs: info.mtimeMs, size: info.size });
    }
    files.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { files, unsettled: unsettled.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0)) };
  }

  async function moveFile(file: BatchFile): Promise<void> {
    const from = join(config.dir, file.name);
    const current = await stat(from).catch(() => undefined);
    // Already moved by an earlier commit of the same batch.
    if (current === undefined) return;
    if (current.mtimeMs !== file.mtimeMs || current.size !== file.size) {
      logger.warn({ file: file.name }, 'file changed after it was read; left in place to be read again');
      return;
    }
    const target = file.problems.length > 0 ? 'rejected' : 'processed';
    const name = `${stamp(now())}_${file.name}`;
    await mkdir(join(config.dir, target), { recursive: true });
    if (file.problems.length > 0) {
      const heading =
        `${file.name}: ${file.problems.length} of ${file.rows} rows rejected by storesync source "${config.name}" ` +
        `at ${new Date(now()).toISOString()}; the other rows were queued.`;
      await writeFile(join(config.dir, target, `${name}.errors.txt`), `${heading}\n${file.problems.join('\n')}\n`, 'utf8');
      logger.warn({ file: file.name, rejected: file.problems.length, rows: file.rows }, 'file moved to rejected/ with a report');
    }
    try {
      await rename(from, join(config.dir, target, name));
    } catch (error) {
      // Taken between the stat and the rename by another process polling the same folder: not ours.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  const source: ChangeSource = {
    name: config.name,
    kind: 'csv',
    async readChanges(cursor: Cursor, limit: number): Promise<ChangeBatch> {
      const records: SourceRecord[] = [];
      const rejected: RejectedRecord[] = [];
      const files: BatchFile[] = [];
      let nextCursor = cursor;
      const listed = await settledFiles(cursor);
      for (const file of listed.files) {
        if (files.length > 0 && records.length + rejected.length >= limit) break;
        const fileCursor = new Date(file.mtimeMs).toISOString();
        let content;
        try {
          content = await readCsvFile(join(config.dir, file.name), file.name, fileCursor, readOptions);
        } catch (error) {
          // Gone between listing and reading (another process took it): not ours any more.
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw new ErpError(config.name, `cannot read ${file.name}: ${(error as Error).message}`, { code: 'ERR_ERP_FILE', cause: error });
        }
        records.push(...content.records);
        rejected.push(...content.rejected);
        files.push({ ...file, rows: content.rows, problems: content.problems });
        pending.set(file.name, { mtimeMs: file.mtimeMs, cursor: fileCursor });
        nextCursor = maxCursor(nextCursor, fileCursor);
      }
      const handle: CsvHandle = { kind: 'csv', files };
      return { records, rejected, nextCursor, handle, ...(listed.unsettled.length > 0 ? { unsettled: listed.unsettled } : {}) };
    },
    async commit(batch: ChangeBatch): Promise<void> {
      if (!isHandle(batch.handle)) throw new ErpError(config.name, 'commit: the batch was not read from this CSV source', { code: 'ERR_ERP_FILE', retryable: false });
      for (const file of batch.handle.files) {
        try {
          await moveFile(file);
        } catch (error) {
          throw new ErpError(config.name, `cannot move ${file.name}: ${(error as Error).message}`, { code: 'ERR_ERP_FILE', cause: error });
        }
        pending.delete(file.name);
      }
    },
    close: async () => undefined,
  };
  const snapshotFile = config.snapshotFile;
  if (snapshotFile !== undefined) {
    source.snapshot = () => readSnapshot(snapshotFile, config, { ...readOptions, logger, now });
  }
  return source;
}

/**
 * A snapshot file inside the drop folder, matching its pattern, would be read as changes and moved
 * away by the first poll; the mistake is caught at start-up rather than after the file vanished.
 */
function assertSnapshotOutsideDropFolder(config: CsvSourceConfig): void {
  if (config.snapshotFile === undefined) return;
  if (resolve(dirname(config.snapshotFile)) !== resolve(config.dir)) return;
  if (!globToRegExp(config.pattern).test(basename(config.snapshotFile))) return;
  throw new ConfigError([
    `source ${config.name}: snapshotFile ${config.snapshotFile} is in the drop folder and matches "${config.pattern}": ` +
      'each poll would move it away; keep it in another folder',
  ]);
}

/**
 * Streams the snapshot file in chunks of `limit` records, leaving the file where it is. Each record's
 * cursor is the file's modification time: the values are the ERP's as of then, so the reconcile never
 * lets an older export override a change the store took since. A bad row is logged and skipped, like
 * the SQL snapshot's; a file that is not valid CSV stops the reconcile (rows before the break stay queued).
 */
async function* readSnapshot(
  file: string,
  config: CsvSourceConfig,
  options: CsvReadOptions & { logger: Logger; now: () => number },
): AsyncIterable<SnapshotChunk> {
  const { logger, now } = options;
  const info = await stat(file).catch((error: unknown) => {
    throw new ErpError(config.name, `cannot read the snapshot file ${file}: ${(error as Error).message}`, { code: 'ERR_ERP_FILE', cause: error });
  });
  // Half an export would compare (and a cut last line would write) wrong values: wait until it settles.
  if (stillBeingWritten(info.mtimeMs, config.settleMs, now())) {
    throw new ErpError(config.name, `the snapshot file ${file} changed less than ${config.settleMs} ms ago (still being written?); try again later`, { code: 'ERR_ERP_FILE' });
  }
  const cursor = new Date(info.mtimeMs).toISOString();
  let chunk: SnapshotChunk = [];
  let rejected: RejectedRecord[] = [];
  try {
    for await (const row of readCsvRows(file, basename(file), cursor, options)) {
      if ('rejected' in row) {
        logger.warn({ ref: row.rejected.ref, issues: row.rejected.issues.map(formatIssue) }, 'snapshot row rejected');
        rejected.push(row.rejected);
      } else {
        chunk.push(row.record);
      }
      if (chunk.length + rejected.length >= config.limit) {
        yield snapshotChunk(chunk, rejected);
        chunk = [];
        rejected = [];
      }
    }
  } catch (error) {
    if (error instanceof CsvError) {
      throw new ErpError(config.name, `the snapshot file ${file} is not valid CSV: ${error.message}`, { code: 'ERR_ERP_FILE', cause: error, retryable: false });
    }
    throw new ErpError(config.name, `cannot read the snapshot file ${file}: ${(error as Error).message}`, { code: 'ERR_ERP_FILE', cause: error });
  }
  if (chunk.length + rejected.length > 0) yield snapshotChunk(chunk, rejected);
}

/**
 * True when a file changed within the last `settleMs`. With `settleMs` 0 nothing waits: a file's mtime can
 * run a little ahead of `Date.now()` (coarser or skewed file-system clock), which must not read as "still written".
 */
function stillBeingWritten(mtimeMs: number, settleMs: number, nowMs: number): boolean {
  return settleMs > 0 && nowMs - mtimeMs < settleMs;
}
