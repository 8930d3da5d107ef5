/**
 * One request whose answer is read whole, as text, through undici's handler interface (`dispatch`)
 * rather than `dispatcher.request`: that one builds, per request, an async resource, a headers object
 * and a response stream, and reading the stream's text costs its events and promises, for a body the
 * store client reads whole anyway (one PUT per synced item: issue 27, the garbage per item). Only
 * `Retry-After` is read of the headers. The text is decoded as `body.text()` decodes it: UTF-8, a
 * leading byte order mark left out.
 */
import type { Dispatcher } from 'undici';

/** What a whole answer is. */
export interface WholeAnswer {
  statusCode: number;
  /** The `Retry-After` header(s), if any. */
  retryAfter: string | string[] | undefined;
  text: string;
}

/** A request under way, as `requestWhole` starts it. */
export interface WholeRequest {
  /** The answer, or undici's error (or the `abort` reason). */
  readonly answer: Promise<WholeAnswer>;
  /**
   * Called once the headers came, with the status (the body may still fail): what the transport counts
   * as the request's status.
   */
  onStatus?: (statusCode: number) => void;
  /** Ends the request with `reason` (before it was sent, or while it is answered); nothing once it ended. */
  abort(reason: Error): void;
}

const RETRY_AFTER = 'retry-after';

/** Sends `options` through `dispatcher` and reads the answer whole. */
export function requestWhole(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): WholeRequest {
  const handler = new WholeBodyHandler();
  dispatcher.dispatch(options, handler);
  return handler;
}

/** undici's handler (the interface `dispatcher.request`'s own handler implements) collecting the body. */
class WholeBodyHandler implements WholeRequest, Dispatcher.DispatchHandler {
  readonly answer: Promise<WholeAnswer>;
  onStatus?: (statusCode: number) => void;
  #resolve!: (answer: WholeAnswer) => void;
  #reject!: (error: Error) => void;
  #abort: ((reason: Error) => void) | undefined;
  #reason: Error | undefined;
  #ended = false;
  #statusCode = 0;
  #retryAfter: string | string[] | undefined;
  #chunks: Buffer[] = [];
  #length = 0;

  constructor() {
    this.answer = new Promise<WholeAnswer>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  abort(reason: Error): void {
    if (this.#ended || this.#reason) return;
    this.#reason = reason;
    // Not connected yet: `onConnect` aborts it.
    this.#abort?.(reason);
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.#reason) {
      abort(this.#reason);
      return;
    }
    this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    // 1xx: an interim answer, the real one follows.
    if (statusCode < 200) return true;
    this.#statusCode = statusCode;
    this.#retryAfter = retryAfterOf(rawHeaders);
    this.onStatus?.(statusCode);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#chunks.push(chunk);
    this.#length += chunk.length;
    return true;
  }

  onComplete(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#resolve({ statusCode: this.#statusCode, retryAfter: this.#retryAfter, text: decodeUtf8(this.#chunks, this.#length) });
  }

  onError(error: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#reject(error);
  }
}

/** The `Retry-After` values of raw headers (name, value, name, value, …; a name in any case): one as a string, several as a list. */
export function retryAfterOf(rawHeaders: ReadonlyArray<Buffer | string>): string | string[] | undefined {
  let found: string | string[] | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as Buffer | string;
    // Most names are not 11 characters long: compared without decoding them.
    if (name.length !== RETRY_AFTER.length || name.toString('latin1').toLowerCase() !== RETRY_AFTER) continue;
    const value = (rawHeaders[i + 1] as Buffer | string).toString('latin1');
    found = found === undefined ? value : Array.isArray(found) ? [...found, value] : [found, value];
  }
  return found;
}

/** The chunks as UTF-8 text, a leading byte order mark left out (as undici's `body.text()`). */
export function decodeUtf8(chunks: readonly Buffer[], length: number): string {
  if (length === 0) return '';
  const buffer = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length);
  const start = buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start);
}
