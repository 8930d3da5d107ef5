/**
 * redis.tls against a real redis-server with a TLS port and a self-signed certificate (made with openssl): trusted
 * through `caFile` it connects; without the CA the certificate is refused; an unreadable CA file is named.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../src/config/load.js';
import { createRedis } from '../../src/queue/connection.js';
import { type RedisServer, sparePort, startRedisServer } from '../../src/queue/redis-server.js';

const run = promisify(execFile);
let dir: string;
let server: RedisServer;
let tlsPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'storesync-tls-'));
  await run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ]);
  tlsPort = await sparePort();
  server = await startRedisServer({
    args: ['--tls-port', String(tlsPort), '--tls-cert-file', join(dir, 'cert.pem'), '--tls-key-file', join(dir, 'key.pem'), '--tls-auth-clients', 'no'],
  });
});

afterAll(async () => {
  await server?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const target = (tls: unknown) => loadConfig({ env: {}, overrides: { redis: { url: `rediss://127.0.0.1:${tlsPort}/0`, tls } } }).redis;

describe('redis.tls', () => {
  it('connects over TLS to a server whose certificate the CA file vouches for', async () => {
    const redis = createRedis(target({ caFile: join(dir, 'cert.pem') }), { maxRetriesPerRequest: 1 });
    try {
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  });

  it('refuses the self-signed certificate without the CA', async () => {
    const redis = createRedis(target(true), { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    let reason: Error | undefined;
    redis.on('error', (error: Error) => {
      reason = error;
    });
    try {
      await expect(redis.connect()).rejects.toThrow();
      expect(reason?.message).toMatch(/self[- ]signed certificate/i);
    } finally {
      redis.disconnect();
    }
  });

  it('names an unreadable CA file', () => {
    expect(() => createRedis(target({ caFile: join(dir, 'missing.pem') }))).toThrow(/^redis\.tls\.caFile: cannot read .*missing\.pem \(ENOENT\)/);
  });
});
