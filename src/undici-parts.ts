/**
 * The parts of undici storesync uses (a connection pool, an agent, `dispatcher.request`), loaded from
 * their own modules. undici's index loads the whole library (fetch, WebSocket, EventSource, caches,
 * mocks, proxy agents) and an idle daemon kept it for nothing: 7.3 against 4.3 MB of heap and 8.4 MiB of
 * RSS in a bare process (issue 27's idle RSS; bench/README.md).
 *
 * The index also gives every dispatcher its `request` (it copies undici's api onto the dispatcher's
 * prototype); that copy is made here, once, as the index makes it. `test/undici-parts.test.ts` checks
 * that these are the classes and the `request` the index gives, so an upgrade of undici that moves a
 * file fails the suite rather than a daemon.
 */
import { createRequire } from 'node:module';

import type { Agent as UndiciAgent, Dispatcher, Pool as UndiciPool } from 'undici';

const require = createRequire(import.meta.url);

const dispatcherClass = require('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
const api = require('undici/lib/api/index.js') as Record<string, unknown>;
// As undici's index does (`Object.assign(Dispatcher.prototype, api)`); idempotent when the index is loaded too.
Object.assign(dispatcherClass.prototype, api);

/** undici's `Pool`. */
export const Pool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
/** undici's `Agent`. */
export const Agent = require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;

/** Options of `requestUrl`: undici's `request(url, options)` with the dispatcher required. */
export type UrlRequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method: Dispatcher.HttpMethod;
  dispatcher: Dispatcher;
};

/** undici's top-level `request(url, options)`: the URL split into origin and path (with its query), sent through `options.dispatcher`. */
export function requestUrl(url: string | URL, options: UrlRequestOptions): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = options;
  const parsed = typeof url === 'string' ? new URL(url) : url;
  return dispatcher.request({ ...rest, origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` });
}
