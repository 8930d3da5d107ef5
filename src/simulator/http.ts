/** Small HTTP helpers of the simulator's server: JSON replies, JSON bodies, an error that carries a status. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An error answered with `status` and a `{Success: false, Message}` body. */
export class HttpError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.body = { Success: false, Message: message, ...extra };
    this.headers = headers;
  }
}

/**
 * An array longer than this is written a slice at a time, in chunked transfer encoding: one JSON text of a
 * catalogue of two million items passes V8's longest string (2^29 − 24 characters), which made the reply
 * fail and the socket close (the full `npm run bench`, whose store holds the reconcile-large and scale
 * benchmarks' items at once).
 */
export const STREAMED_ARRAY_ITEMS = 50_000;

/**
 * Writes a JSON reply; Content-Length is computed from the UTF-8 bytes. An array of more than `streamedItems`
 * elements is written in slices of that many (`writeJsonArray`): the same JSON text, without Content-Length.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, streamedItems = STREAMED_ARRAY_ITEMS): void {
  if (res.headersSent || res.destroyed) return;
  if (Array.isArray(body) && body.length > streamedItems) {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    void writeJsonArray(res, body, streamedItems).catch(() => res.destroy());
    return;
  }
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(payload.length),
    ...headers,
  });
  res.end(payload);
}

/** Writes `items` as one JSON array, `slice` elements a write, waiting for the socket to drain; ends the reply. */
async function writeJsonArray(res: ServerResponse, items: readonly unknown[], slice: number): Promise<void> {
  for (let start = 0; start < items.length; start += slice) {
    if (res.destroyed) return;
    const json = JSON.stringify(items.slice(start, start + slice));
    // Each slice's elements without its brackets: '[' before the first, ',' before the others.
    const text = `${start === 0 ? '[' : ','}${json.slice(1, -1)}`;
    if (!res.write(text, 'utf8')) await drained(res);
  }
  if (!res.destroyed) res.end(']');
}

/**
 * Resolves on the reply's next 'drain', or its 'close' (the client left), leaving neither listener behind:
 * a 'close' listener left by each slice's wait set off Node's MaxListenersExceededWarning past ten slices.
 */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

/** Writes a reply that is not JSON (a text or HTML body, possibly empty). */
export function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  if (res.headersSent || res.destroyed) return;
  const payload = Buffer.from(text, 'utf8');
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(payload.length) });
  res.end(payload);
}

/** Reads the whole request body as text. */
export async function readText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `request body larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Parses a JSON request body. A body needs `Content-Type: application/json` (415 otherwise, as an ASP.NET
 * service answers) and must be valid JSON (400).
 */
export function parseJsonBody(contentType: string | undefined, text: string): unknown {
  if (text.length === 0) throw new HttpError(400, 'request body is required');
  if (!contentType || !/^application\/json\s*(;|$)/i.test(contentType)) {
    throw new HttpError(415, `Content-Type must be application/json (got ${contentType ?? 'none'})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** True for a plain JSON object (not an array or null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
