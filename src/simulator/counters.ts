/** Request counters of the simulated store, read by tests and benchmarks through `counters()`. */

/** A snapshot of the counters. */
export interface CounterSnapshot {
  /** API requests per endpoint, keyed `METHOD /Route/Template` (e.g. `PUT /Api/Inventory`). */
  requests: Record<string, number>;
  /** All API requests (control requests excluded). */
  total: number;
  /** API responses per HTTP status. */
  responses: Record<string, number>;
  /** Successful logins. */
  logins: number;
  /** Logins refused for wrong credentials. */
  failedLogins: number;
  /** Requests refused for a missing, unknown or expired hash. */
  unauthorized: number;
  /** Injected faults: 500s, random 429s, rate-limit 429s and `{Success:false}` answers. */
  faults: { serverError: number; tooManyRequests: number; rateLimited: number; successFalse: number };
  /** Write requests (PUT/POST/DELETE) refused with 400. */
  rejectedWrites: number;
}

/** One API request as the store received it: when (simulator clock, ms) and which endpoint. */
export interface RequestLogEntry {
  at: number;
  endpoint: string;
}

/** Requests kept in the log; older ones are dropped so a long-running simulator stays flat. */
const REQUEST_LOG_LIMIT = 100_000;

/** Mutable counters, and a log of the latest API requests with their arrival time. */
export class Counters {
  #s: CounterSnapshot = Counters.#empty();
  #log: RequestLogEntry[] = [];

  static #empty(): CounterSnapshot {
    return {
      requests: {},
      total: 0,
      responses: {},
      logins: 0,
      failedLogins: 0,
      unauthorized: 0,
      faults: { serverError: 0, tooManyRequests: 0, rateLimited: 0, successFalse: 0 },
      rejectedWrites: 0,
    };
  }

  /** Counts a request to `endpoint` arrived at `at`, and logs it. */
  request(endpoint: string, at: number): void {
    this.#log.push({ at, endpoint });
    if (this.#log.length > REQUEST_LOG_LIMIT) this.#log.splice(0, this.#log.length - REQUEST_LOG_LIMIT);
    this.#s.total += 1;
    this.#s.requests[endpoint] = (this.#s.requests[endpoint] ?? 0) + 1;
  }

  /** Counts a response status; a 400 on a write also counts as a rejected write. */
  response(status: number, method: string): void {
    this.#s.responses[status] = (this.#s.responses[status] ?? 0) + 1;
    if (status === 400 && method !== 'GET') this.#s.rejectedWrites += 1;
  }

  /** Counts one of the scalar counters. */
  bump(counter: 'logins' | 'failedLogins' | 'unauthorized'): void {
    this.#s[counter] += 1;
  }

  /** Counts an injected fault. */
  fault(kind: keyof CounterSnapshot['faults']): void {
    this.#s.faults[kind] += 1;
  }

  /** A deep copy of the counters. */
  snapshot(): CounterSnapshot {
    return structuredClone(this.#s);
  }

  /** The latest API requests (at most 100,000), oldest first. */
  requestLog(): readonly RequestLogEntry[] {
    return [...this.#log];
  }

  /** Sets every counter back to zero and empties the log. */
  reset(): void {
    this.#log = [];
    this.#s = Counters.#empty();
  }
}
