import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import * as undici from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Agent, Pool, requestUrl } from '../src/undici-parts.js';
import { BUILD_TIMEOUT_MS, freshBuild } from './support/fresh-build.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

describe("undici's parts loaded alone", () => {
  const seen: Array<{ method: string; url: string; body: string; header: string | undefined }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, body, header: req.headers['x-probe'] as string | undefined });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true }));
    });
  });
  let origin = '';
  beforeAll(async () => {
    // The child process runs dist/: a build older than the sources would test old code.
    await freshBuild();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, BUILD_TIMEOUT_MS);
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("are the classes undici's index exports", () => {
    expect(Pool).toBe(undici.Pool);
    expect(Agent).toBe(undici.Agent);
  });

  it('send a request through an agent with the URL split into origin, path and query', async () => {
    const agent = new Agent();
    try {
      const response = await requestUrl(`${origin}/erp/items?since=2026-11-27T00%3A00%3A00Z&limit=5`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'x-probe': 'p1', 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      expect(response.statusCode).toBe(200);
      expect(await response.body.json()).toEqual({ ok: true });
      expect(seen.at(-1)).toEqual({ method: 'POST', url: '/erp/items?since=2026-11-27T00%3A00%3A00Z&limit=5', body: '{"a":1}', header: 'p1' });
    } finally {
      await agent.close();
    }
  });

  it("give a pool its `request` without undici's index loaded (the point of loading them alone)", async () => {
    // A fresh process: the suite itself has the index loaded (this file imports it).
    const script = `
      const { createRequire } = await import('node:module');
      const { Pool } = await import('./dist/src/undici-parts.js');
      const require = createRequire(import.meta.url);
      const pool = new Pool(${JSON.stringify('http://127.0.0.1:1')});
      const indexLoaded = Object.keys(require.cache).some((file) => /node_modules[\\\\/]undici[\\\\/]index\\.js$/.test(file));
      console.log(JSON.stringify({ request: typeof pool.request, indexLoaded }));
      await pool.close();
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual({ request: 'function', indexLoaded: false });
  });
});
