import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

import { sendJson } from '../../src/simulator/http.js';

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves `body` with `sendJson` (arrays of more than `streamed` elements written in slices) and reads the reply. */
async function served(body: unknown, streamed: number): Promise<{ text: string; headers: Record<string, unknown> }> {
  server = createServer((_req, res) => sendJson(res, 200, body, { 'x-extra': 'kept' }, streamed));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const res = await request(`http://127.0.0.1:${port}/`);
  return { text: await res.body.text(), headers: res.headers };
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ Code: `SKU-${i}`, Stock: i, Name: i % 2 === 0 ? 'Größe "XL" ✓' : null }));

describe('the simulator’s JSON replies', () => {
  it('writes an array longer than the slice in slices: the same text as one JSON.stringify, chunked, without Content-Length', async () => {
    // 10 elements in slices of 3 (the last slice shorter), and 9 (exactly three slices).
    for (const n of [10, 9]) {
      const body = items(n);
      const { text, headers } = await served(body, 3);
      expect(text).toBe(JSON.stringify(body));
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

});
