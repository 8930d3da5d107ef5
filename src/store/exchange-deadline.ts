/** The deadline of a whole exchange with the store, cheaper than `AbortSignal.timeout` (see below). */

/** The deadline of a whole exchange (`wholeExchangeDeadline`). */
export interface ExchangeDeadline {
  /** Set once the deadline passed: the request failed for it. */
  passed: boolean;
  /** Called when the exchange is over, answered or not. */
  clear(): void;
}

/**
 * The deadline of a whole exchange: after `ms`, `passed` is set and `onPassed` is called (it ends the
 * request), as `AbortSignal.timeout(ms)` would end it. Not an AbortSignal: on Node 20
 * `AbortSignal.timeout` costs about 15 µs a request and keeps its timer and signal alive for the whole
 * timeout after the answer came (some 30,000 of them in the heap at a thousand requests a second), and
 * an AbortController with undici's listener still costs about 10 µs; a timer and a callback cost well
 * under 1 µs.
 */
export function wholeExchangeDeadline(ms: number, onPassed: () => void): ExchangeDeadline {
  const deadline: ExchangeDeadline = {
    passed: false,
    clear: () => clearTimeout(timer),
  };
  const timer = setTimeout(() => {
    deadline.passed = true;
    onPassed();
  }, ms);
  // Like AbortSignal.timeout's: a request in flight keeps the process alive by its socket, not its deadline.
  timer.unref();
  return deadline;
}
