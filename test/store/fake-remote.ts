/**
 * A tiny local HTTP server standing in for a misbehaving remote store (one that ignores offset, answers
 * HTML, sends Retry-After dates), for cases the simulator is not meant to reproduce.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a handler answers. */
export interface FakeAnswer {
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
}

/** A request the fake remote received. */
export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
}

/** A running fake remote. */
export interface FakeRemote {
  url: string;
  requests: FakeRequest[];
  close(): Promise<void>;
}

/** Starts a fake store on a random port; `/Api/Auth/` answers a hash unless `handler` answers it. */
export async function startFakeRemote(handler: (request: FakeRequest) => FakeAnswer | undefined): Promise<FakeRemote> {
  const requests: FakeRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const request = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(request);
      const answer = handler(request) ??
        (url.pathname === '/Api/Auth/' ? { body: { status: '0', message: 'ok', data: 'fake-remote-hash' } } : { status: 404, body: 'not found' });
      const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? null);
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        // Closing twice (a test closed it to simulate a store that is down) is not an error.
        server.close(() => resolve());
      }),
  };
}
