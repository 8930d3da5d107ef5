/**
 * The baselines the daemon is measured against, sending the same PUTs to the same simulator:
 * - the ceiling: a raw undici Pool loop with N requests in flight and nothing else to do;
 * - the hand-written script: one `fetch` at a time, awaiting each answer.
 */
import { Pool } from 'undici';

/** One inventory update as the benchmarks send it. */
export interface PutBody {
  InternalId: 0;
  Code: string;
  Stock?: number;
  Price?: number;
  /** A target other than the default one (several sites, price lists). */
  SiteId?: number;
  PriceListId?: number;
  PriceListCode?: string;
}

/** What a loop did and how long it took. */
export interface LoopResult {
  sent: number;
  failed: number;
  ms: number;
}

/** Logs in the way the spec says and returns the hash. */
export async function login(baseUrl: string, username: string, password: string): Promise<string> {
  const query = new URLSearchParams({ username, password });
  const res = await fetch(`${baseUrl}/Api/Auth/?${query}`);
  const body = (await res.json()) as { data?: string };
  if (!res.ok || !body.data) throw new Error(`login to ${baseUrl} failed with HTTP ${res.status}`);
  return body.data;
}

/** Sends every body with `concurrency` requests in flight over as many keep-alive connections. */
export async function rawPutLoop(baseUrl: string, hash: string, bodies: readonly PutBody[], concurrency: number): Promise<LoopResult> {
  const pool = new Pool(baseUrl, { connections: concurrency, pipelining: 1 });
  const path = `/Api/Inventory?hash=${encodeURIComponent(hash)}&mode=default`;
  let next = 0;
  let failed = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++];
      const res = await pool.request({ method: 'PUT', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.body.text();
      if (res.statusCode !== 200) failed += 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
    return { sent: bodies.length, failed, ms: performance.now() - started };
  } finally {
    await pool.close();
  }
}

/** The script people write by hand: a loop of awaited `fetch` calls. */
export async function sequentialPutLoop(baseUrl: string, hash: string, bodies: readonly PutBody[]): Promise<LoopResult> {
  const url = `${baseUrl}/Api/Inventory?hash=${encodeURIComponent(hash)}&mode=default`;
  let failed = 0;
  const started = performance.now();
  for (const body of bodies) {
    const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.text();
    if (!res.ok) failed += 1;
  }
  return { sent: bodies.length, failed, ms: performance.now() - started };
}
