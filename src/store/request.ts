/**
 * What a call to the store is, as the transport and the resource modules share it: the request (method,
 * endpoint template, parameters, body), per-call options, the client's events, and `StoreApi`, the
 * authenticated surface the resource modules call.
 */
import type { StoreConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { StoreMetrics } from './metrics.js';

/** HTTP methods the store API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A query parameter value; undefined and null are left out, arrays are sent comma-separated. */
export type QueryValue = string | number | boolean | null | undefined | ReadonlyArray<string | number>;

/** One call to the store, described without its URL. */
export interface StoreRequest {
  method: HttpMethod;
  /** Path template, e.g. `/Api/Sale/{id}`: the label of errors, logs and metrics. */
  endpoint: string;
  /** Values of the template's `{placeholders}`, URL-encoded into the path. */
  params?: Readonly<Record<string, string | number>>;
  query?: Readonly<Record<string, QueryValue>>;
  /** Sent as UTF-8 JSON. */
  body?: unknown;
}

/** Per-call options. */
export interface CallOptions {
  /**
   * Attempts inside the client, the first included (default `store.retry.attempts`). `1` disables the
   * client's retries so that a BullMQ worker can retry with its own backoff instead.
   */
  attempts?: number;
}

/** Events of the store client; metrics, logs and tests subscribe. */
export type StoreEvents = {
  'store:request': { endpoint: string; method: HttpMethod; status: number | 'error'; durationMs: number; attempt: number };
  'store:retry': { endpoint: string; method: HttpMethod; attempt: number; delayMs: number; code: string };
  'store:auth': { outcome: 'success' | 'failure'; durationMs: number };
};

/** Called with each element of a JSON array body as soon as it is parsed (`index` from 0). */
export type ElementVisitor = (element: unknown, index: number) => void;

/** Options of a streamed read. */
export interface StreamOptions extends CallOptions {
  /**
   * Awaited once the store answered 2xx, before any of the body is read: a caller that is not ready for
   * the elements yet (the reconcile, still reading the ERP) lets the store prepare its answer meanwhile.
   * The unread body waits in the socket (the store is held back, not our memory), and undici's body
   * timeout does not run while the body is paused. An error of it ends the request and passes through.
   */
  beforeBody?: () => Promise<void>;
  /**
   * Called after each chunk of the body is parsed: a promise it returns is awaited before the next chunk
   * is read, so a caller whose work on the elements lags (the reconcile, comparing pages with Redis) holds
   * the store back rather than gathering the elements in memory.
   */
  betweenChunks?: () => Promise<void> | undefined;
}

/** What a resource module needs: an authenticated request and the store's settings. */
export interface StoreApi {
  request(request: StoreRequest, options?: CallOptions): Promise<unknown>;
  /**
   * Like `request`, but a JSON array body is parsed as it arrives and handed over element by element
   * (never held whole, as text or parsed); returns undefined then, and any other body as `request`
   * would. Retried only until the first element was handed over.
   */
  streamArray(request: StoreRequest, visit: ElementVisitor, options?: StreamOptions): Promise<unknown>;
  readonly config: StoreConfig;
  readonly logger: Logger;
  /** Where the resource modules record what they count (paging stopped early); none: not recorded. */
  readonly metrics: StoreMetrics | undefined;
}
