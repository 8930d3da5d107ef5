import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { startDaemon } from '../../src/daemon.js';
import { silentLogger } from '../../src/log.js';
import { Metrics } from '../../src/metrics.js';
import { type Simulator, startSimulator } from '../../src/simulator/index.js';
import { isStartingUp } from '../../src/v8-flags.js';
import { deleteKeys } from '../support/redis.js';
import { testConfig, testPrefix } from './helpers.js';

// The start-up ends the young generation's hold (src/v8-flags.ts): a daemon that never ended it would sync
// with a young generation of 1 MB, a quarter more CPU per item (bench/README.md, "Memory").
describe('the start-up', () => {
  const redis = new Redis('redis://127.0.0.1:6379/0');
  const prefix = testPrefix();
  let sim: Simulator;

  beforeAll(async () => {
    sim = await startSimulator({ port: 0, items: 2, sales: 0, users: 0, clients: 0 });
  });

  afterAll(async () => {
    await sim.close();
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it('ends once the daemon has started', async () => {
    // This file's module state is its own (vitest isolates test files): nothing ended the start-up yet.
    expect(isStartingUp()).toBe(true);
    const config = testConfig({
      redis: { prefix },
      store: { baseUrl: sim.url, username: 'demo', password: 'demo-password' },
      sales: { enabled: false },
      inventory: { sources: [] },
    });
    const started = startDaemon({ config, logger: silentLogger(), metrics: new Metrics({ defaultMetrics: false }) }, { role: 'all' });
    const daemon = await started;
    try {
      expect(isStartingUp()).toBe(false);
    } finally {
      await daemon.close();
    }
  });

  it('ends before any command but `run` does its work', async () => {
    // Fresh instances of the modules: the test above ended this file's start-up.
    vi.resetModules();
    const flags = await import('../../src/v8-flags.js');
    const { runCli } = await import('../../src/cli/program.js');
    expect(flags.isStartingUp()).toBe(true);
    // Whatever the command's outcome (a config missing its store: exit 78), its work began after the start-up.
    await runCli(['config', 'check'], { env: {}, stdout: { write: () => true }, stderr: { write: () => true }, stopSignal: new AbortController().signal });
    expect(flags.isStartingUp()).toBe(false);
  });
});
