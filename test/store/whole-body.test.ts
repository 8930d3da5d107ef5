import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { searchOf } from '../../src/store/transport.js';
import { decodeUtf8, requestWhole, retryAfterOf } from '../../src/store/whole-body.js';
import { Pool } from '../../src/undici-parts.js';

const open: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

/** A server answering with `handler`, and a pool to it; both closed after the test. */
async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ pool: InstanceType<typeof Pool>; requests: () => number }> {
  let count = 0;
  const server = createServer((request, response) => {
    count += 1;
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
  open.push(async () => {
    await pool.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { pool, requests: () => count };
}

const bytes = (...values: number[]): Buffer => Buffer.from(values);

describe('decodeUtf8', () => {
  it('reads UTF-8 and leaves out a leading byte order mark, in one chunk or split across chunks', () => {
    // '{"a":"ñ"}' with ñ = C3 B1.
    const json = bytes(0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0xb1, 0x22, 0x7d);
    expect(decodeUtf8([json], json.length)).toBe('{"a":"ñ"}');
    expect(decodeUtf8([Buffer.concat([bytes(0xef, 0xbb, 0xbf), json])], json.length + 3)).toBe('{"a":"ñ"}');
    // The mark split over two chunks, and ñ's two bytes in two chunks.
    const parts = [bytes(0xef), bytes(0xbb, 0xbf, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3), bytes(0xb1, 0x22, 0x7d)];
    expect(decodeUtf8(parts, 13)).toBe('{"a":"ñ"}');
  });

  it('keeps a byte order mark that is not at the start, and reads nothing as empty text', () => {
    expect(decodeUtf8([bytes(0x61, 0xef, 0xbb, 0xbf)], 4)).toBe('a\uFEFF');
    // Two bytes of a mark only: not a mark, kept as the text it is.
    expect(decodeUtf8([bytes(0x31, 0x32)], 2)).toBe('12');
    expect(decodeUtf8([], 0)).toBe('');
    // A body of the mark alone is empty.
    expect(decodeUtf8([bytes(0xef, 0xbb, 0xbf)], 3)).toBe('');
  });

  it('keeps a leading character whose UTF-8 begins EF BB but is not the mark (U+FEFB, EF BB BB; U+FEC0, EF BB 80)', () => {
    expect(decodeUtf8([bytes(0xef, 0xbb, 0xbb, 0x21)], 4)).toBe('\uFEFB!');
    expect(decodeUtf8([bytes(0xef, 0xbb), bytes(0x80)], 3)).toBe('\uFEC0');
  });
});

describe('retryAfterOf', () => {
  it('finds Retry-After in any case among raw headers, one value as text and several as a list', () => {
    expect(retryAfterOf(['Content-Type', 'text/plain', 'Retry-After', '120'])).toBe('120');
    expect(retryAfterOf([Buffer.from('retry-after'), Buffer.from('7')])).toBe('7');
    expect(retryAfterOf(['RETRY-AFTER', '1', 'x', 'y', 'retry-after', '2', 'Retry-After', '3'])).toEqual(['1', '2', '3']);
  });

  it('gives nothing without a Retry-After, even for another header of the same length or a value named so', () => {
    expect(retryAfterOf([])).toBeUndefined();
    expect(retryAfterOf(['x-retry-aft', '5', 'content-type', 'retry-after'])).toBeUndefined();
  });
});

describe('requestWhole', () => {
  it('reads the status, Retry-After and a body written in several pieces', async () => {
    const { pool } = await serve((_request, response) => {
      response.writeHead(429, { 'retry-after': '30', 'content-type': 'application/json' });
      response.write('{"Message":');
      setTimeout(() => {
        response.write('"slow');
        response.end(' down"}');
      }, 20);
    });
    const statuses: number[] = [];
    const exchange = requestWhole(pool, { method: 'GET', path: '/x', headers: { accept: 'application/json' }, body: null });
    exchange.onStatus = (code) => statuses.push(code);
    expect(await exchange.answer).toEqual({ statusCode: 429, retryAfter: '30', text: '{"Message":"slow down"}' });
    expect(statuses).toEqual([429]);
  });

  it('reads past an interim 1xx answer (103 Early Hints): only the final status is told and answered', async () => {
    const { pool } = await serve((_request, response) => {
      response.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      setTimeout(() => response.writeHead(201, { 'content-type': 'application/json' }).end('{"Success":true}'), 20);
    });
    const statuses: number[] = [];
    const exchange = requestWhole(pool, { method: 'GET', path: '/x', headers: { accept: 'application/json' }, body: null });
    exchange.onStatus = (code) => statuses.push(code);
    expect(await exchange.answer).toEqual({ statusCode: 201, retryAfter: undefined, text: '{"Success":true}' });
    expect(statuses).toEqual([201]);
  });

  it('sends the body and reads an empty answer as empty text', async () => {
    let received = '';
    const { pool } = await serve((request, response) => {
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (received += chunk));
      request.on('end', () => response.writeHead(204).end());
    });
    const answer = await requestWhole(pool, { method: 'PUT', path: '/Api/Inventory?mode=default', headers: { 'content-type': 'application/json' }, body: '{"Code":"A"}' }).answer;
    expect(answer).toEqual({ statusCode: 204, retryAfter: undefined, text: '' });
    expect(received).toBe('{"Code":"A"}');
  });

  it('ends a request aborted before it was sent with the reason, and the server never sees it', async () => {
    const { pool, requests } = await serve((_request, response) => response.end('late'));
    const exchange = requestWhole(pool, { method: 'GET', path: '/x', headers: {}, body: null });
    const reason = new Error('deadline');
    exchange.abort(reason);
    await expect(exchange.answer).rejects.toBe(reason);
    expect(requests()).toBe(0);
  });

  it('ends a request aborted while its body comes, after its status was told', async () => {
    const { pool } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // Half a body, the rest never comes.
      response.write('[1,');
    });
    const exchange = requestWhole(pool, { method: 'GET', path: '/x', headers: {}, body: null });
    const reason = new Error('deadline');
    exchange.onStatus = () => setTimeout(() => exchange.abort(reason), 20);
    await expect(exchange.answer).rejects.toBe(reason);
  });

  it('keeps an answer that came before an abort', async () => {
    const { pool } = await serve((_request, response) => response.end('done'));
    const exchange = requestWhole(pool, { method: 'GET', path: '/x', headers: {}, body: null });
    const answer = await exchange.answer;
    exchange.abort(new Error('too late'));
    expect(answer.text).toBe('done');
    await expect(exchange.answer).resolves.toEqual({ statusCode: 200, retryAfter: undefined, text: 'done' });
  });
});

describe('searchOf (the query of a store request)', () => {
  it('leaves out undefined and null, joins a list with commas and encodes as a form', () => {
    expect(searchOf({ a: undefined, b: null, c: 'x y', d: [1, 2], e: true, f: 0 })).toBe('c=x+y&d=1%2C2&e=true&f=0');
    expect(searchOf({})).toBe('');
  });

  it('builds a frozen query once, but a list under it and an unfrozen query each time', () => {
    const frozen = Object.freeze({ mode: 'default' });
    expect(searchOf(frozen)).toBe('mode=default');
    expect(searchOf(frozen)).toBe('mode=default');
    const list = [1, 2];
    const withList = Object.freeze({ ids: list });
    expect(searchOf(withList)).toBe('ids=1%2C2');
    list.push(3);
    expect(searchOf(withList)).toBe('ids=1%2C2%2C3');
    const open: Record<string, string> = { mode: 'default' };
    expect(searchOf(open)).toBe('mode=default');
    open.mode = 'full';
    expect(searchOf(open)).toBe('mode=full');
  });
});
