import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

import { sendJson } from '../../src/simulator/http.js';
import { startSimulator } from '../../src/simulator/index.js';
import { session } from './http.js';

let server: Server | undefined;

afterEach(async () => {
  // A reply a mutant leaves unfinished keeps its connection: closed here, the next test starts clean.
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves `body` with `sendJson` (arrays of more than `streamed` elements written in slices) and reads the reply. */
async function served(body: unknown, streamed: number, status = 200): Promise<{ text: string; headers: Record<string, unknown>; status: number }> {
  const url = await serve((_req, res) => sendJson(res, status, body, { 'x-extra': 'kept' }, streamed));
  const res = await request(url);
  return { text: await res.body.text(), headers: res.headers, status: res.statusCode };
}

/** Starts `server` with `handler`; returns its URL. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** Counts the writes of `res` (and whether it was destroyed at each), then sends `body` as `sendJson` does. */
function countedWrites(res: ServerResponse, body: unknown[], streamed: number) {
  const counted = { destroyedAt: [] as boolean[], atReturn: 0, listeners: { before: 0, atEnd: -1 } };
  const listeners = () => res.listenerCount('drain') + res.listenerCount('close');
  const write = res.write.bind(res) as (chunk: string, encoding: BufferEncoding) => boolean;
  res.write = ((chunk: string, encoding: BufferEncoding) => {
    counted.destroyedAt.push(res.destroyed);
    return write(chunk, encoding);
  }) as typeof res.write;
  const end = res.end.bind(res) as (chunk: string) => ServerResponse;
  res.end = ((chunk: string) => {
    counted.listeners.atEnd = listeners();
    return end(chunk);
  }) as typeof res.end;
  counted.listeners.before = listeners();
  sendJson(res, 200, body, {}, streamed);
  counted.atReturn = counted.destroyedAt.length;
  return counted;
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ Code: `SKU-${i}`, Stock: i, Name: i % 2 === 0 ? 'Größe "XL" ✓' : null }));

describe('the simulator’s JSON replies', () => {
  it('writes an array longer than the slice in slices: the same text as one JSON.stringify, chunked, without Content-Length', async () => {
    // 10 elements in slices of 3 (the last slice shorter), and 9 (exactly three slices); the status is the one given.
    for (const n of [10, 9]) {
      const body = items(n);
      const { text, headers, status } = await served(body, 3, 203);
      expect(text).toBe(JSON.stringify(body));
      expect(status).toBe(203);
      expect(headers['transfer-encoding']).toBe('chunked');
      expect(headers['content-length']).toBeUndefined();
      expect(headers['content-type']).toBe('application/json; charset=utf-8');
      expect(headers['x-extra']).toBe('kept');
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    }
  });

  it('writes an array of at most the slice, and any other body, whole with its Content-Length in bytes', async () => {
    const body = items(3);
    const { text, headers } = await served(body, 3);
    expect(text).toBe(JSON.stringify(body));
    expect(headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(body), 'utf8')));
    expect(headers['transfer-encoding']).toBeUndefined();
  });

  it('waits for the socket to drain after a slice it did not take at once, and still writes the whole reply', async () => {
    // 12,000 elements of about 230 bytes in slices of 500: each slice (~115 KB) passes the socket's 16 KiB
    // high-water mark, so each write returns false and the writer waits for 'drain' before the next slice.
    const body = Array.from({ length: 12_000 }, (_, i) => ({ Code: `SKU-${i}`, Name: 'x'.repeat(200) }));
    let counted: ReturnType<typeof countedWrites> | undefined;
    const url = await serve((_req, res) => void (counted = countedWrites(res, body, 500)));
    // A writer that waits for anything but 'drain' leaves the reply unfinished: the body times out.
    const res = await request(url, { bodyTimeout: 5000 });
    const text = await res.body.text().catch((error: Error) => `not read whole: ${error.name}`);
    expect(text).toBe(JSON.stringify(body));
    // When sendJson returned, only the first slice was written (the next ones wait for the socket); 24 in all.
    expect(counted?.atReturn).toBe(1);
    expect(counted?.destroyedAt).toEqual(Array.from({ length: 24 }, () => false));
    // The 23 waits left no listener on the reply (ten more would set off MaxListenersExceededWarning).
    expect(counted?.listeners.atEnd).toBe(counted?.listeners.before);
  });

  it('closes the connection when a slice cannot be written: no truncated array ends as a complete reply', async () => {
    // The element at index 7 has no JSON form (a BigInt): the third slice of 3 (indexes 6 to 8) throws.
    const body: unknown[] = items(10);
    body[7] = { Code: 'SKU-7', Stock: 7n };
    const url = await serve((_req, res) => sendJson(res, 200, body, {}, 3));
    const outcome = await request(url)
      .then((res) => res.body.text())
      .then(
        (text) => `read whole: ${text}`,
        (error: Error) => `failed: ${error.name}`,
      );
    expect(outcome).toMatch(/^failed: /);
  });

  it('stops writing when the client leaves mid-reply: no slice is written once the connection closed', async () => {
    // 400 slices of 1,000 elements, about 85 MB: more than the loopback socket's buffers can hold (at most
    // 4 MiB sent and 32 MiB received here), so the writer is still waiting for 'drain' when the client, having
    // read one chunk, closes the connection. Only the slices written are serialised.
    const element = { Code: 'SKU', Name: 'x'.repeat(200) };
    const body = Array.from({ length: 400_000 }, () => element);
    let counted: ReturnType<typeof countedWrites> | undefined;
    let closed: Promise<void> | undefined;
    const url = await serve((_req, res) => {
      closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
      counted = countedWrites(res, body, 1000);
    });
    const res = await request(url);
    for await (const chunk of res.body) if (chunk) break;
    await closed;
    // Whatever the writer does on the close runs in the microtasks after it.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
    const writes = counted?.destroyedAt ?? [];
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.length).toBeLessThan(400);
    expect(writes.filter((destroyed) => destroyed)).toEqual([]);
  });

  it('the simulator writes an inventory of more than 50,000 items chunked, one of 50,000 whole with its Content-Length', async () => {
    const catalogue = (n: number) => Array.from({ length: n }, (_, i) => ({ Code: `S-${i}`, Stock: i % 7, Price: 1 + (i % 5) }));
    const sim = await startSimulator({ port: 0, items: catalogue(50_001), sales: 0, users: 0 });
    try {
      const { hash } = await session(sim.url);
      const get = async () => {
        // A reply left unfinished fails the comparison below, not the test's time limit.
        const res = await request(`${sim.url}/Api/Inventory/Get?hash=${hash}`, { bodyTimeout: 5000 });
        const text = await res.body.text().catch((error: Error) => `not read whole: ${error.name}`);
        const codes = text.startsWith('[') ? (JSON.parse(text) as Array<{ Code: string }>).map((item) => item.Code) : text;
        return { codes, chunked: res.headers['transfer-encoding'], length: res.headers['content-length'] };
      };
      const streamed = await get();
      expect(streamed.codes).toEqual(catalogue(50_001).map((item) => item.Code));
      expect(streamed).toMatchObject({ chunked: 'chunked', length: undefined });
      sim.setItems(catalogue(50_000));
      const whole = await get();
      expect(whole.codes).toHaveLength(50_000);
      expect(whole.chunked).toBeUndefined();
      expect(Number(whole.length)).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });
});
