import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { HttpSalesSink } from '../../../src/erp/sinks/http-sink.js';
import { ErpError } from '../../../src/errors.js';
import { sampleSale } from './sale-fixture.js';

const TOKEN = 'Bearer erp-secret-token-123';

describe('HTTP sink', () => {
  let server: Server;
  let url: string;
  let answer: { status: number; body: string };
  const received: Array<{ headers: IncomingHttpHeaders; body: unknown }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(body) });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/erp/orders?tenant=7`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    received.length = 0;
  });

  const sink = (): HttpSalesSink => new HttpSalesSink({ url, headers: { Authorization: TOKEN }, timeoutMs: 5000 });

  it('posts the sale with an Idempotency-Key and the configured headers, and takes the ERP id as reference', async () => {
    answer = { status: 201, body: JSON.stringify({ id: 'SO-0077' }) };
    const s = sink();
    try {
      expect(await s.export(sampleSale(77), 3)).toEqual({ erpRef: 'SO-0077', created: true });
    } finally {
      await s.close();
    }
    expect(received).toHaveLength(1);
    expect(received[0]!.headers['idempotency-key']).toBe('3-77');
    expect(received[0]!.headers.authorization).toBe(TOKEN);
    expect(received[0]!.headers['content-type']).toMatch(/application\/json/);
    expect(received[0]!.body).toMatchObject({ Id: 77, UserData: { LastName: 'Núñez' } });
  });

  it('falls back to site-id as reference when the ERP answers without one', async () => {
    answer = { status: 204, body: '' };
    const s = sink();
    try {
      expect(await s.export(sampleSale(78), 3)).toEqual({ erpRef: '3-78', created: true });
    } finally {
      await s.close();
    }
  });

  it('counts a 409 as already exported', async () => {
    answer = { status: 409, body: JSON.stringify({ reference: 'SO-0079', error: 'duplicate' }) };
    const s = sink();
    try {
      expect(await s.export(sampleSale(79), 3)).toEqual({ erpRef: 'SO-0079', created: false });
    } finally {
      await s.close();
    }
  });

  it('reports a 503 as retryable with the body excerpt and without the secret header', async () => {
    answer = { status: 503, body: `maintenance; your header was ${TOKEN}` };
    const s = sink();
    try {
      const error = await s.export(sampleSale(80), 3).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErpError);
      expect((error as ErpError).retryable).toBe(true);
      expect((error as Error).message).toMatch(/HTTP 503: maintenance/);
      expect((error as Error).message).not.toContain('erp-secret-token-123');
      expect((error as Error).message).not.toContain('tenant=7');
    } finally {
      await s.close();
    }
  });

  it('reports a 400 as not retryable', async () => {
    answer = { status: 400, body: '{"error":"bad customer"}' };
    const s = sink();
    try {
      const error = await s.export(sampleSale(81), 3).catch((e: unknown) => e);
      expect((error as ErpError).retryable).toBe(false);
      expect((error as Error).message).toMatch(/HTTP 400/);
    } finally {
      await s.close();
    }
  });

  it('reports an unreachable ERP as retryable', async () => {
    const s = new HttpSalesSink({ url: 'http://127.0.0.1:1/orders', headers: {}, timeoutMs: 2000 });
    try {
      const error = await s.export(sampleSale(82), 3).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErpError);
      expect((error as ErpError).retryable).toBe(true);
    } finally {
      await s.close();
    }
  });
});
