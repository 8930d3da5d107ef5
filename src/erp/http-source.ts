/**
 * An HTTP source: the ERP's own endpoint, polled with `GET url?<cursorParam>=<cursor>&<limitParam>=<limit>`
 * (the cursor parameter is left out on the first poll). The answer is JSON; the records are the array at
 * `recordsPath`, each with a `cursor` property (or one mapped to `cursor`). The endpoint must return
 * records with cursor >= the one asked for, in cursor order; timestamp cursors are sent as ISO strings in
 * UTC, moved back by `overlapMs`. With `afterKeyParam`, a read that continues a poll also sends the last
 * record's key, and the endpoint must then return the records with (cursor, key) after (cursor, that
 * key), in that order: rows sharing one cursor are paged (polling.ts). Header values are secrets:
 * registered, and never in messages. With `snapshotUrl`, the source also has a snapshot (the reconcile,
 * the snapshot diff): one GET of the full set.
 */
import type { HttpSourceConfig } from '../config/schema.js';
import { ErpError, type ErpErrorCode, formatIssue } from '../errors.js';
import { redactText, registerSecret } from '../secrets.js';
import { bodyExcerpt } from '../store/errors.js';
import { Agent, requestUrl } from '../undici-parts.js';
import { toCursor } from './cursor.js';
import { pollChanges, pollSettingsFor, type ReadPage, toBatchParts } from './polling.js';
import { snapshotChunk, type SourceDeps } from './source-deps.js';
import type { ChangeSource, Cursor, ReadOptions, SnapshotChunk } from './types.js';

/** How to read from the start, shown when a first poll reads nothing (see polling.ts). */
const FIRST_POLL_HINT =
  'the endpoint probably needs the cursor parameter, which the first poll leaves out: make it answer from the start ' +
  'when the parameter is absent, or set the source\'s initialCursor; `storesync sources test` shows what it answers';

/** What an HTTP source without a tiebreak should do about a tie group it cannot get past. */
const TIEBREAK_HINT =
  "set the source's afterKeyParam and have the endpoint return, when it is given, the records with (cursor, key) after (cursor, afterKey)";

/** The same when the records' key repeats under one cursor (one record per item and price list). */
const PER_ROW_TIEBREAK_HINT =
  "give each record a pageKey field unique per record, set the source's afterKeyParam and have the endpoint return, when it is given, " +
  'the records with (cursor, pageKey) after (cursor, afterKey)';

/** The array at a dotted path (`data.items`; `''` is the body itself), or undefined. */
export function recordsAt(body: unknown, path: string): unknown {
  let node = body;
  for (const key of path === '' ? [] : path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Registers each header value, and the credential after a scheme (`Bearer abc` → `abc`), as a secret. */
function registerHeaderSecrets(headers: Readonly<Record<string, string>>): void {
  for (const value of Object.values(headers)) {
    registerSecret(value);
    registerSecret(value.split(/\s+/).at(-1));
  }
}

/** Opens an HTTP source; it keeps its own connection pool, closed by `close()`. */
export function createHttpSource(config: HttpSourceConfig, deps: SourceDeps): ChangeSource {
  registerHeaderSecrets(config.headers);
  const agent = new Agent({
    connect: { timeout: config.timeoutMs },
    headersTimeout: config.timeoutMs,
    bodyTimeout: config.timeoutMs,
  });
  const afterKeyParam = config.afterKeyParam;
  const settings = pollSettingsFor(config, deps, 'record', FIRST_POLL_HINT, {
    pagesByKey: afterKeyParam !== undefined,
    hint: TIEBREAK_HINT,
    perRowHint: PER_ROW_TIEBREAK_HINT,
  });
  const initialCursor = toCursor(config.initialCursor);
  const fail = (code: ErpErrorCode, message: string, retryable: boolean, cause?: unknown) =>
    new ErpError(config.name, redactText(message), { code, retryable, cause });

  async function fetchRecords(start: Date | number | string | null, limit: number, page: ReadPage): Promise<Record<string, unknown>[]> {
    const url = new URL(config.url);
    if (start !== null) url.searchParams.set(config.cursorParam, start instanceof Date ? start.toISOString() : String(start));
    if (afterKeyParam !== undefined && page.afterKey !== null) url.searchParams.set(afterKeyParam, String(page.afterKey));
    url.searchParams.set(config.limitParam, String(limit));
    return fetchFrom(url);
  }

  async function fetchFrom(url: URL): Promise<Record<string, unknown>[]> {
    const shown = `GET ${url.origin}${url.pathname}`;
    let status: number;
    let text: string;
    try {
      const response = await requestUrl(url, {
        method: 'GET',
        headers: { accept: 'application/json', ...config.headers },
        dispatcher: agent,
        signal: AbortSignal.timeout(config.timeoutMs),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw fail('ERR_ERP_CONNECTION', `${shown} failed: ${reason}`, true, error);
    }
    if (status < 200 || status >= 300) {
      // 408, 429 and 5xx are the endpoint's temporary trouble; other 4xx are a configuration mistake.
      const temporary = status === 408 || status === 429 || status >= 500;
      throw fail('ERR_ERP_HTTP', `${shown} answered HTTP ${status}: ${bodyExcerpt(text)}`, temporary);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw fail('ERR_ERP_HTTP', `${shown} answered HTTP ${status} with a body that is not JSON: ${bodyExcerpt(text)}`, false, error);
    }
    const records = recordsAt(body, config.recordsPath);
    if (!Array.isArray(records) || !records.every(isRecord)) {
      const where = config.recordsPath === '' ? 'the body' : `"${config.recordsPath}"`;
      throw fail('ERR_ERP_HTTP', `${shown}: expected an array of objects at ${where}, got ${bodyExcerpt(text)}`, false);
    }
    return records;
  }

  const source: ChangeSource = {
    name: config.name,
    kind: 'http',
    readChanges: (cursor: Cursor, limit: number, options?: ReadOptions) =>
      pollChanges(cursor ?? initialCursor, limit, settings, fetchRecords, options),
    close: () => agent.close(),
  };
  const { snapshotUrl } = config;
  if (snapshotUrl !== undefined) {
    // One GET of the whole set (same headers and recordsPath), handed out in chunks of `limit`.
    source.snapshot = async function* snapshot(): AsyncIterable<SnapshotChunk> {
      const rows = await fetchFrom(new URL(snapshotUrl));
      for (let start = 0; start < rows.length; start += config.limit) {
        const { records, rejected } = toBatchParts(rows.slice(start, start + config.limit), { ...settings, rowNoun: 'snapshot record' }, false);
        for (const bad of rejected) {
          settings.logger.warn({ ref: bad.ref, issues: bad.issues.map(formatIssue) }, 'snapshot record rejected');
        }
        if (records.length + rejected.length > 0) yield snapshotChunk(records, rejected);
      }
    };
  }
  return source;
}
