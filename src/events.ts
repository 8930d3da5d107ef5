/**
 * Typed lifecycle events. Components emit (`'inventory:poll:done'`, `'store:auth'`); metrics and logs
 * subscribe, and tests wait for an event instead of sleeping.
 */
import { EventEmitter, once } from 'node:events';

/** An event map: event name → payload. */
export type EventMap = Record<string, unknown>;

/** A small typed wrapper over EventEmitter. */
export class TypedEmitter<Events extends EventMap> {
  readonly #emitter = new EventEmitter({ captureRejections: false });

  constructor() {
    // Many subscribers (metrics, logs, tests) are normal here.
    this.#emitter.setMaxListeners(100);
  }

  on<K extends keyof Events & string>(event: K, listener: (payload: Events[K]) => void): () => void {
    this.#emitter.on(event, listener);
    return () => this.#emitter.off(event, listener);
  }

  emit<K extends keyof Events & string>(event: K, payload: Events[K]): void {
    this.#emitter.emit(event, payload);
  }

  /** Resolves with the next payload of `event` that matches `predicate`. */
  async next<K extends keyof Events & string>(
    event: K,
    predicate: (payload: Events[K]) => boolean = () => true,
    signal?: AbortSignal,
  ): Promise<Events[K]> {
    for (;;) {
      const [payload] = (await once(this.#emitter, event, signal ? { signal } : {})) as [Events[K]];
      if (predicate(payload)) return payload;
    }
  }
}
